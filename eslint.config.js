import { dirname, relative, resolve, sep } from 'node:path';
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/** apps/<x>, libs/<x> or packages/<x>: the unit a source file belongs to, or null outside them. */
function unitOf(file) {
  const parts = relative(import.meta.dirname, file).split(sep);
  return ['apps', 'libs', 'packages'].includes(parts[0]) && parts.length > 2 ? parts.slice(0, 2).join('/') : null;
}

/**
 * A relative import stays inside its own app, lib or package: libs are reached through their
 * `@kairos/*` name, and apps do not reach into one another. The all-in-one entry (apps/kairos) is
 * the one app made of the others.
 */
const stayInside = {
  meta: { type: 'problem', messages: { outside: '{{source}} leaves {{unit}}: import a lib by its @kairos/* name; apps do not import other apps' } },
  create(context) {
    const unit = unitOf(context.filename);
    if (unit === null) return {};
    const check = (node) => {
      const source = node.source?.value;
      if (typeof source !== 'string' || !source.startsWith('.')) return;
      const target = unitOf(resolve(dirname(context.filename), source));
      if (target === unit || (unit === 'apps/kairos' && target?.startsWith('apps/'))) return;
      context.report({ node: node.source, messageId: 'outside', data: { source, unit } });
    };
    return { ImportDeclaration: check, ExportAllDeclaration: check, ExportNamedDeclaration: check, ImportExpression: check };
  },
};

/** Imports a folder may not make: the libs stay a stack (domain, config, telemetry, ledger/queue, process), and tests reach libs by name. */
const restrictImports = (files, patterns) => ({ files, rules: { 'no-restricted-imports': ['error', { patterns }] } });

export default tseslint.config(
  // The client tours compile against code test/api/client-generators.spec.ts generates next to them.
  // docs/.vitepress/cache holds the dependencies `npm run docs` pre-bundles.
  { ignores: ['**/dist/', '**/node_modules/', 'prisma/generated/', 'coverage/', 'test/api/client-tour/', 'docs/.vitepress/cache/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: 'readonly', console: 'readonly', Buffer: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly', URL: 'readonly', performance: 'readonly', AbortController: 'readonly', AbortSignal: 'readonly', fetch: 'readonly', setInterval: 'readonly', clearInterval: 'readonly' } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' }],
      '@typescript-eslint/no-non-null-assertion': 'off',
      'no-duplicate-imports': ['error', { allowSeparateTypeImports: true }],
    },
  },
  {
    files: ['apps/**/*.{ts,tsx}', 'libs/**/*.ts', 'packages/**/*.ts'],
    plugins: { kairos: { rules: { 'stay-inside': stayInside } } },
    rules: { 'kairos/stay-inside': 'error' },
  },
  restrictImports(['libs/domain/**/*.ts'], [{ group: ['@kairos/*'], message: 'libs/domain is pure: it imports no other Kairos lib.' }]),
  restrictImports(['libs/config/**/*.ts'], [{ group: ['@kairos/*', '!@kairos/domain'], message: 'libs/config imports only @kairos/domain.' }]),
  restrictImports(['libs/telemetry/**/*.ts'], [{ group: ['@kairos/*', '!@kairos/domain', '!@kairos/config'], message: 'libs/telemetry imports only @kairos/domain and @kairos/config.' }]),
  // The trace context is a leaf of the OpenTelemetry API alone (no logger, no exporter): the runs the ledger writes record it.
  restrictImports(['libs/ledger/**/*.ts'], [{ regex: '^@kairos/(queue|process|telemetry(?!/trace-context$))', message: 'libs/ledger is Postgres only: no process bootstrap, no transport, of telemetry only the trace context.' }]),
  restrictImports(['libs/queue/**/*.ts'], [{ regex: '^@kairos/(ledger|process)', message: 'libs/queue is the transport only: what also writes the ledger (the run dispatcher) lives in libs/process.' }]),
  restrictImports(['test/**/*.ts', 'bench/**/*.ts', 'scripts/**/*.ts'], [{ regex: '(^|/)libs/[^/]+/src/', message: 'Import a lib by its @kairos/* name.' }]),
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
