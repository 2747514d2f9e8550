/**
 * What a worker reads: the ledger and the transport (connections.ts), the queue prefix, the
 * shutdown grace, the reaper's skew (when a run another worker holds is worth looking at again) and
 * the worker's own variables. CONFIGURATION declares them among the rest, for the server and the
 * documentation; a worker outside the server (the SDK's KairosWorker) reads them alone with
 * loadWorkerConfig, and so carries none of the server's other variables. A leaf
 * (`@kairos/config/worker`): it imports no other part of the configuration than its readers and
 * connections.ts.
 */
import { WORKER_UPGRADES } from '@kairos/domain';
import { databaseDirectUrl, ledgerUrl, transport } from './connections.js';
import { SECOND, duration, integer, list, oneOf, optionalText, readDeclaration, text, type Env, type Read } from './variables.js';

export const queuePrefix = text({
  name: 'KAIROS_QUEUE_PREFIX',
  default: 'kairos',
  pattern: /^[A-Za-z0-9_.:-]{1,64}$/,
  meaning: 'prefix of every BullMQ key in Redis, so several deployments (or test runs) can share one, and the name of the event stream (or NOTIFY channel)',
});

export const shutdownGrace = duration({ name: 'KAIROS_SHUTDOWN_GRACE', default: '10s', meaning: 'how long a stopping worker lets runs finish' });

export const reaperSkew = duration({ name: 'KAIROS_REAPER_SKEW', default: '5s', meaning: 'how long past expiry the reaper waits' });

/** The worker's own variables: CONFIGURATION's `worker`. */
export const workerArea = {
  concurrency: integer({
    name: 'KAIROS_WORKER_CONCURRENCY',
    default: 256,
    min: 1,
    max: 1000,
    meaning:
      'runs one worker executes at once, split evenly over the shards of its queue (`KAIROS_QUEUE_SHARDS`, at least one each); their claims and verdicts go to Postgres in shared batches, so a higher value also means fewer, larger statements (a herd of 20,000 started 1.1 to 1.7 times as fast at 256 as at 64, and cost Postgres half the CPU per run with two workers)',
  }),
  dispatchBatch: integer({
    name: 'KAIROS_DISPATCH_BATCH',
    default: 64,
    min: 1,
    max: 1000,
    meaning:
      'at most this many runs due together (a herd, a backlog, a bulk creation) travel in one transport job, which the worker claims in one statement; a lone run always travels alone (`1`: every run alone). Redis only: on the Postgres transport every run travels alone',
  }),
  runLeaseTtlMs: duration({
    name: 'KAIROS_RUN_LEASE_TTL',
    default: '30s',
    min: SECOND,
    meaning: 'worker lease on a run; renewed every third of it',
  }),
  httpAllowList: list({ name: 'KAIROS_HTTP_ALLOWLIST', meaning: 'hosts/CIDRs HTTP targets may reach despite being private' }),
  startMarginMs: duration({
    name: 'KAIROS_START_MARGIN',
    default: '250ms',
    // A run taken early holds one of its worker's slots until its instant.
    max: 5 * SECOND,
    meaning:
      "how long before its instant a run made ahead is handed to the transport; the worker that takes it starts it at the instant on its own timer, on the database's clock (`0`: at the instant, on the transport's timer)",
  }),
  version: optionalText({
    name: 'KAIROS_WORKER_VERSION',
    default: null,
    shown: '`built-in` (the built-in worker), `unversioned` (a `KairosWorker`)',
    meaning:
      "the version of the code a worker runs (a `KairosWorker`'s `version` when it sets none): a run records the version that claimed it, and once it stored a checkpoint only workers of that version take it again",
  }),
  upgrade: oneOf({
    name: 'KAIROS_WORKER_UPGRADE',
    default: 'pinned',
    allowed: WORKER_UPGRADES,
    meaning:
      "what a worker does with a run pinned to another version: `pinned` leaves it to that version's workers (it waits, `VERSION_UNAVAILABLE`, while none runs); `auto` takes it over and pins it to its own",
  }),
};

/** What a worker reads, under the names KairosConfig gives them (the reaper's skew is its `scheduler.reaperSkewMs`). */
export const WORKER_CONFIGURATION = {
  databaseUrl: ledgerUrl,
  databaseDirectUrl,
  transport,
  queuePrefix,
  shutdownGraceMs: shutdownGrace,
  reaperSkewMs: reaperSkew,
  worker: workerArea,
};

export type WorkerConfig = Read<typeof WORKER_CONFIGURATION>;

/** The variables a worker reads, and only those: a bad value of another (the API's port, say) is the server's to refuse. */
export function loadWorkerConfig(env: Env = process.env): WorkerConfig {
  return readDeclaration(WORKER_CONFIGURATION, { env, defaultRoles: ['worker'] }) as WorkerConfig;
}
