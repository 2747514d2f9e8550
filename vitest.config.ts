import swc from 'unplugin-swc';
import { defineConfig } from 'vitest/config';
import { fileURLToPath } from 'node:url';

const lib = (name: string): string => fileURLToPath(new URL(`./libs/${name}/src/index.ts`, import.meta.url));

export default defineConfig({
  oxc: false,
  plugins: [swc.vite({ module: { type: 'es6' } })],
  resolve: {
    alias: {
      '@kairos/domain': lib('domain'),
      '@kairos/config': lib('config'),
      '@kairos/ledger': lib('ledger'),
      '@kairos/queue': lib('queue'),
      '@kairos/runtime': lib('runtime'),
    },
  },
  test: {
    include: ['libs/**/*.spec.ts', 'apps/**/*.spec.ts', 'test/**/*.spec.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    // Integration tests start schedulers and workers and time failovers; two at once on two cores
    // would make those timings lie. Files run one after another.
    fileParallelism: false,
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
  },
});
