import swc from 'unplugin-swc';
import { defineConfig } from 'vitest/config';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

/** The files the `postgres` project runs again on the Postgres transport. */
const POSTGRES_TRANSPORT_FILES = [
  'test/e2e/every-second.spec.ts',
  'test/e2e/transport-loss.spec.ts',
  'test/e2e/outbox.spec.ts',
  'test/e2e/metrics.spec.ts',
  'test/worker/*.spec.ts',
  'test/scheduler/*.spec.ts',
  'test/sdk/*.spec.ts',
];

const lib = (name: string): string => fileURLToPath(new URL(`./libs/${name}/src/index.ts`, import.meta.url));

export default defineConfig({
  oxc: false,
  plugins: [swc.vite({ module: { type: 'es6' } })],
  resolve: {
    alias: [
      // The wire shapes are an entry of their own: they load zod, which the rest of the domain does not.
      { find: /^@kairos\/domain\/wire$/, replacement: fileURLToPath(new URL('./libs/domain/src/wire/index.ts', import.meta.url)) },
      { find: '@kairos/domain', replacement: lib('domain') },
      { find: '@kairos/config', replacement: lib('config') },
      { find: '@kairos/ledger', replacement: lib('ledger') },
      { find: '@kairos/queue', replacement: lib('queue') },
      // The SDK takes the loop, the process identity, the run dispatcher and the log and trace contexts alone: the rest
      // of @kairos/process is the server's Nest bootstrap, the rest of @kairos/telemetry its logger and exporters.
      { find: /^@kairos\/process\/(loop|process-identity|run-dispatcher)$/, replacement: fileURLToPath(new URL('./libs/process/src/$1.ts', import.meta.url)) },
      { find: /^@kairos\/telemetry\/(log-context|trace-context)$/, replacement: fileURLToPath(new URL('./libs/telemetry/src/$1.ts', import.meta.url)) },
      { find: '@kairos/telemetry', replacement: lib('telemetry') },
      { find: '@kairos/process', replacement: lib('process') },
      { find: /^@kairos\/sdk$/, replacement: fileURLToPath(new URL('./packages/sdk/src/index.ts', import.meta.url)) },
      // graphql ships CommonJS (main) and ESM (module) copies. Node, and so @nestjs/graphql, loads
      // the CommonJS one; Vite would hand Kairos's own sources the ESM one, and two copies of
      // graphql break its instanceof checks (scalars, errors). Pin the one Node loads.
      { find: /^graphql$/, replacement: createRequire(import.meta.url).resolve('graphql') },
    ],
  },
  test: {
    projects: [
      { extends: true, test: { name: 'redis', include: ['libs/**/*.spec.ts', 'apps/**/*.spec.ts', 'packages/*/src/**/*.spec.ts', 'test/**/*.spec.ts'] } },
      // The integration files whose guarantees rest on the transport, again with the queues on
      // Postgres (REDIS_URL unset). Specs of the API surface, the CLI, the dashboard and the
      // cluster launcher do not touch a queue beyond what these cover, so they run once.
      { extends: true, test: { name: 'postgres', include: POSTGRES_TRANSPORT_FILES, env: { KAIROS_TEST_TRANSPORT: 'postgres' } } },
    ],
    globalSetup: ['test/support/global-setup.ts'],
    // Integration tests start schedulers and workers and time failovers; two at once on two cores
    // would make those timings lie. Files run one after another.
    fileParallelism: false,
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
  },
});
