import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  // The client tours compile against code test/api/client-generators.spec.ts generates next to them.
  { ignores: ['**/dist/', '**/node_modules/', 'prisma/generated/', 'coverage/', 'test/api/client-tour/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: 'readonly', console: 'readonly', Buffer: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly', URL: 'readonly', performance: 'readonly', AbortController: 'readonly', AbortSignal: 'readonly', fetch: 'readonly', setInterval: 'readonly', clearInterval: 'readonly' } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' }],
      '@typescript-eslint/no-non-null-assertion': 'off',
    },
  },
  {
    // The dashboard runs in the browser.
    files: ['apps/ui/src/**/*.{ts,tsx}'],
    languageOptions: { globals: { document: 'readonly', location: 'readonly', history: 'readonly', addEventListener: 'readonly', removeEventListener: 'readonly', dispatchEvent: 'readonly', PopStateEvent: 'readonly', FormData: 'readonly', URLSearchParams: 'readonly', MouseEvent: 'readonly', HTMLAnchorElement: 'readonly' } },
  },
  {
    // Tests read JSON responses loosely; the assertions are what check their shape.
    files: ['test/**/*.ts', '**/*.spec.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
);
