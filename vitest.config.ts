import swc from 'unplugin-swc';
import { defineConfig } from 'vitest/config';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

/**
 * The integration files whose guarantees rest on the transport, which the `postgres` projects run
 * again with the queues on Postgres (REDIS_URL unset): the relay and the reconciler, a lost
 * transport, the worker's claim, fencing, crashes and retries (delayed jobs), lookahead's delayed
 * jobs, precise starts, firing every second, domain events (a Redis stream or NOTIFYs), a user's SDK worker
 * and its durable functions (a sleep's or a wait's delayed job), and workers that hold only a worker
 * credential (which on Postgres covers the transport's tables). The API surface, the ledger, the CLI,
 * the dashboard, the cluster launcher, step graphs and waits for events use the queues only through
 * these, so they run once.
 */
const POSTGRES_TRANSPORT_FILES = [
  'test/e2e/every-second.spec.ts',
  'test/e2e/transport-loss.spec.ts',
  'test/e2e/outbox.spec.ts',
  'test/scheduler/reconciler.spec.ts',
  'test/scheduler/lookahead.spec.ts',
  'test/worker/fencing.spec.ts',
  'test/worker/crashes.spec.ts',
  'test/worker/retries.spec.ts',
  'test/sdk/user-worker.spec.ts',
  'test/sdk/durable.spec.ts',
  'test/worker/worker-credentials.spec.ts',
  'test/worker/protocol-fixture.spec.ts',
  'test/worker/precise-starts.spec.ts',
];

/**
 * Integration files that measure time (failover and reaping within a bound, lateness, a burst in
 * one rate-limit second, first paint, pruning within its slack, skewed host clocks). They run one at
 * a time, after the parallel files, so no other file's load moves their timings; their one worker
 * keeps its modules loaded from file to file too. Files that wait for instants but derive what they
 * expect from what they observe (catch-up, the herd at CI scale with its 45 s bound) or whose bounds are
 * seconds wide (lookahead's runs made ahead, withdrawn before their instant) run in parallel.
 */
const SERIAL_FILES = [
  'test/cluster/failover-timing.spec.ts',
  'test/cluster/leader-failover.spec.ts',
  'test/cluster/partitions.spec.ts',
  'test/cluster/shutdown.spec.ts',
  'test/e2e/every-second.spec.ts',
  'test/e2e/host-clock.spec.ts',
  'test/e2e/zero-setup.spec.ts',
  'test/worker/retries.spec.ts',
  'test/worker/concurrency-limits.spec.ts',
  'test/api/rate-limit.spec.ts',
  'test/ledger/retention.spec.ts',
  'test/ui/dashboard.spec.ts',
];

/**
 * Files that change process-wide state Kairos reads when it starts (the trace specs register a
 * tracer provider and span processors for the rest of the process): they need a process of their own.
 */
const OWN_PROCESS_FILES = ['test/e2e/traces.spec.ts', 'test/e2e/trace-export.spec.ts'];

const UNIT_FILES = ['libs/**/*.spec.ts', 'apps/**/*.spec.ts', 'packages/*/src/**/*.spec.ts'];

/**
 * Files run at once by the parallel projects, together: three on two cores. The integration files
 * mostly wait on timers and I/O (a minute boundary, an outage held for a minute); each has its own
 * database and Redis prefix. Their workers are not
 * isolated (each keeps its modules loaded from file to file): loading Nest, Apollo and BullMQ again
 * for every file cost more than most files' own tests.
 */
const PARALLEL_WORKERS = 3;

const lib = (name: string): string => fileURLToPath(new URL(`./libs/${name}/src/index.ts`, import.meta.url));

export default defineConfig({
  oxc: false,
  plugins: [swc.vite({ module: { type: 'es6' } })],
  resolve: {
    alias: [
      // The wire shapes are an entry of their own: they load zod, which the rest of the domain does not.
      { find: /^@kairos\/domain\/wire$/, replacement: fileURLToPath(new URL('./libs/domain/src/wire/index.ts', import.meta.url)) },
      { find: '@kairos/domain', replacement: lib('domain') },
      // The SDK takes the connections and what a worker reads alone: the rest of @kairos/config is the server's variables.
      { find: /^@kairos\/config\/connections$/, replacement: fileURLToPath(new URL('./libs/config/src/connections.ts', import.meta.url)) },
      { find: /^@kairos\/config\/worker$/, replacement: fileURLToPath(new URL('./libs/config/src/worker-config.ts', import.meta.url)) },
      { find: '@kairos/config', replacement: lib('config') },
      // The SDK takes the Postgres helpers and the database clock alone: the rest of @kairos/ledger is the server's SQL.
      { find: /^@kairos\/ledger\/postgres$/, replacement: fileURLToPath(new URL('./libs/ledger/src/database.ts', import.meta.url)) },
      { find: /^@kairos\/ledger\/clock$/, replacement: fileURLToPath(new URL('./libs/ledger/src/clock/database-clock.ts', import.meta.url)) },
      { find: '@kairos/ledger', replacement: lib('ledger') },
      { find: '@kairos/queue', replacement: lib('queue') },
      // The SDK takes the loop, the process identity, the run dispatcher and the log and trace contexts alone, the CLI
      // the worker credentials: the rest of @kairos/process is the server's Nest bootstrap, the rest of
      // @kairos/telemetry its logger and exporters.
      { find: /^@kairos\/process\/(loop|process-identity|run-dispatcher|worker-credentials)$/, replacement: fileURLToPath(new URL('./libs/process/src/$1.ts', import.meta.url)) },
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
      // Pure logic beside the sources: no database, no Redis, no global setup.
      { extends: true, test: { name: 'unit', include: UNIT_FILES } },
      // The integration files on Redis, and those with timings on their own afterwards (group 1
      // starts once every file of group 0 is done, one file at a time).
      {
        extends: true,
        test: { name: 'redis', include: ['test/**/*.spec.ts'], exclude: [...SERIAL_FILES, ...OWN_PROCESS_FILES], globalSetup: ['test/support/global-setup.ts'], isolate: false },
      },
      { extends: true, test: { name: 'redis-isolated', include: OWN_PROCESS_FILES, globalSetup: ['test/support/global-setup.ts'] } },
      {
        extends: true,
        test: { name: 'redis-serial', include: SERIAL_FILES, globalSetup: ['test/support/global-setup.ts'], fileParallelism: false, isolate: false, sequence: { groupOrder: 1 } },
      },
      {
        extends: true,
        test: {
          name: 'postgres',
          include: POSTGRES_TRANSPORT_FILES.filter((f) => !SERIAL_FILES.includes(f)),
          globalSetup: ['test/support/global-setup.ts'],
          env: { KAIROS_TEST_TRANSPORT: 'postgres' },
          isolate: false,
        },
      },
      {
        extends: true,
        test: {
          name: 'postgres-serial',
          include: POSTGRES_TRANSPORT_FILES.filter((f) => SERIAL_FILES.includes(f)),
          globalSetup: ['test/support/global-setup.ts'],
          env: { KAIROS_TEST_TRANSPORT: 'postgres' },
          fileParallelism: false,
          isolate: false,
          sequence: { groupOrder: 1 },
        },
      },
    ],
    maxWorkers: PARALLEL_WORKERS,
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
  },
});
