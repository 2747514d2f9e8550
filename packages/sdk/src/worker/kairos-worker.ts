/**
 * KairosWorker: runs a set of handlers on one queue of a Kairos cluster, with every guarantee the
 * built-in worker has (it is the built-in worker): a durable claim in Postgres, a run lease with a
 * fencing epoch, batched heartbeats that carry cancellation, timeouts, retries and dead letters
 * under each run's policy, and the reaper's crash budget behind it.
 */
import { DEFAULT_QUEUE, HANDLER_NAME_PATTERN, QUEUE_NAME_PATTERN, WORKER_UPGRADES, type WorkerUpgrade } from '@kairos/domain';
import { TRANSPORT_SCHEMA, type TransportConfig } from '@kairos/config/connections';
import { loadWorkerConfig, type WorkerConfig } from '@kairos/config/worker';
import { CLOCK_STEP_MS, DatabaseClock } from '@kairos/ledger/clock';
import { createPool, type Db } from '@kairos/ledger/postgres';
import { RunsQueues, openTransport, runsQueueName, type RunsConsumer, type Transport } from '@kairos/queue';
import { processIdentity } from '@kairos/process/process-identity';
import { JobDelays, RunDispatcher } from '@kairos/process/run-dispatcher';
import { retimeDelayedJobs } from './delayed-jobs.js';
import { ExecutionLedger } from './execution-ledger.js';
import type { KairosHandlerFunction } from './handler.js';
import { LeaseKeeper } from './lease-keeper.js';
import { RunExecutor, type WorkerLogger, type WorkerObserver } from './run-executor.js';
import { TargetRunner, type HttpTargetCall } from './target-runner.js';

/**
 * When the delayed jobs are re-timed again after a clock step: producers read a worker's offset
 * every second, so what they handed over meanwhile, with the old offset, is caught within a second.
 */
const CONSUMER_OFFSETS_SETTLE_MS = [1_000, 2_000, 3_000];

/** Stalled jobs always go back to the queue: the ledger's crash budget, not BullMQ, decides when to give up. */
const MAX_STALLED_COUNT = 1_000_000;

export interface KairosWorkerOptions {
  /** The Kairos ledger. Default: DATABASE_URL, else the server's default. */
  databaseUrl?: string;
  /**
   * The Redis the cluster's queues live in. Default: REDIS_URL. Null (or REDIS_URL unset): the
   * queues live in the ledger's database, as the server's Postgres transport keeps them.
   */
  redisUrl?: string | null;
  /**
   * Where the queues live, as the server's configuration describes them (a Redis Cluster, Sentinels,
   * one Redis, or the Postgres transport); wins over `redisUrl`. Default: read from the same
   * variables as the server's (REDIS_URL, REDIS_CLUSTER_NODES, REDIS_SENTINELS, DATABASE_DIRECT_URL).
   */
  transport?: TransportConfig;
  /** Prefix of every BullMQ key; must match the cluster's. Default: KAIROS_QUEUE_PREFIX, else `kairos`. */
  queuePrefix?: string;
  /** The queue this worker serves. Default `default`. */
  queue?: string;
  /** Runs executed at once. Default: KAIROS_WORKER_CONCURRENCY, else 256. */
  concurrency?: number;
  /** The handlers, by the name a handler target gives. */
  handlers: Record<string, KairosHandlerFunction>;
  /**
   * The version of the code this worker runs, e.g. `"2026.12.03-1"`, recorded in the worker registry
   * (GET /v1/workers). A run records the version of the worker that claimed it; once it stored a
   * checkpoint (a step, a sleep, a wait) it is pinned to that version: its later attempts and
   * resumes are claimed only by workers of that version (or by `upgrade: 'auto'` workers), so a
   * deploy never replays a run's checkpoints with code that may not take the same path. A run
   * without checkpoints is never pinned. Default: KAIROS_WORKER_VERSION, else `"unversioned"`.
   */
  version?: string;
  /**
   * What this worker does with a run of its queue pinned to another version. `'pinned'` (the
   * default): leaves it to that version's workers; while none of them runs, the run waits, queued
   * with deferReason VERSION_UNAVAILABLE, losing nothing, and starts as soon as one starts (or when
   * an operator moves it to another version: POST /v1/runs/{id}/version). `'auto'`: takes it over,
   * replaying its checkpoints with this worker's code, and pins it to this worker's version (an
   * `upgraded` run event). Default: KAIROS_WORKER_UPGRADE, else `'pinned'`.
   */
  upgrade?: WorkerUpgrade;
  /** Lease on a run, renewed every third of it. Default: KAIROS_RUN_LEASE_TTL, else 30 s. */
  leaseTtlMs?: number;
  /** How long stop() lets running handlers finish before handing their runs back. Default: KAIROS_SHUTDOWN_GRACE, else 10 s. */
  shutdownGraceMs?: number;
  /** The cluster's reaper skew (KAIROS_REAPER_SKEW): when a run another worker holds is worth looking at again. */
  reaperSkewMs?: number;
  /**
   * How long before its instant a run is handed to this worker's queue (KAIROS_START_MARGIN, 250 ms
   * by default; it must match the cluster's): the worker holds it and starts it at the instant on
   * its own timer. At most half the concurrency waits so; further runs wait in the transport.
   */
  startMarginMs?: number;
  /** Where the worker logs. Default: the console. */
  logger?: WorkerLogger;
  /** Told about lateness, verdicts and lost leases (for metrics). */
  observer?: WorkerObserver;
  /** A Postgres pool to share (the worker opens its own when absent, and closes only its own). */
  pool?: Db;
  /** Serve HTTP targets with this call (the built-in worker does); without it they are handed back. */
  httpTarget?: HttpTargetCall;
}

/**
 * The transport of a worker given only URLs: `redisUrl` (a Redis, or null for the Postgres
 * transport in the ledger `databaseUrl` names), else the configured one.
 */
function workerTransport(options: Pick<KairosWorkerOptions, 'redisUrl' | 'databaseUrl'>, config: WorkerConfig): TransportConfig {
  if (typeof options.redisUrl === 'string') return { kind: 'redis', url: options.redisUrl };
  if (options.redisUrl === undefined && config.transport.kind === 'redis') return config.transport;
  const url = options.databaseUrl ?? (config.transport.kind === 'postgres' ? config.transport.url : (config.databaseDirectUrl ?? config.databaseUrl));
  return { kind: 'postgres', url, schema: TRANSPORT_SCHEMA };
}

export class KairosWorkerError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'KairosWorkerError';
  }
}

const CONSOLE_LOGGER: WorkerLogger = {
  log: (m) => console.log(`[kairos-worker] ${m}`),
  warn: (m) => console.warn(`[kairos-worker] ${m}`),
  error: (m) => console.error(`[kairos-worker] ${m}`),
};

export class KairosWorker {
  /** This worker's identity: its lease owner name and its id in the registry. Unique across restarts on one host. */
  readonly id = processIdentity().id;
  readonly queue: string;
  private readonly settings: Required<Omit<KairosWorkerOptions, 'pool' | 'httpTarget' | 'observer' | 'handlers' | 'redisUrl'>>;
  private readonly handlers: Map<string, KairosHandlerFunction>;
  private state: 'new' | 'started' | 'stopped' = 'new';
  /** How many runs due together its retries and released runs travel in (KAIROS_DISPATCH_BATCH). */
  private readonly dispatchBatch: number;
  private resources: {
    pool: Db;
    ownPool: boolean;
    clock: DatabaseClock;
    ledger: ExecutionLedger;
    leases: LeaseKeeper;
    transport: Transport;
    queues: RunsQueues;
    worker: RunsConsumer;
    executor: RunExecutor;
  } | null = null;

  constructor(private readonly options: KairosWorkerOptions) {
    // The server's configuration supplies every default, read from the same variables (those a worker reads).
    const config = loadWorkerConfig(process.env);
    this.dispatchBatch = config.worker.dispatchBatch;
    this.queue = options.queue ?? DEFAULT_QUEUE;
    if (!QUEUE_NAME_PATTERN.test(this.queue)) throw new KairosWorkerError(`queue "${this.queue}" must be 1 to 64 letters, digits, "_", "." or "-"`);
    this.handlers = new Map(Object.entries(options.handlers ?? {}));
    for (const [name, handler] of this.handlers) {
      if (!HANDLER_NAME_PATTERN.test(name)) throw new KairosWorkerError(`handler name "${name}" must be 1 to 128 letters, digits, "_", "." or "-"`);
      if (typeof handler !== 'function') throw new KairosWorkerError(`handler "${name}" must be a function`);
    }
    if (this.handlers.size === 0 && !options.httpTarget) throw new KairosWorkerError('a worker needs at least one handler');
    if (options.upgrade !== undefined && !(WORKER_UPGRADES as readonly unknown[]).includes(options.upgrade)) {
      throw new KairosWorkerError(`upgrade must be "pinned" or "auto" (got ${JSON.stringify(options.upgrade)})`);
    }
    this.settings = {
      databaseUrl: options.databaseUrl ?? config.databaseUrl,
      transport: options.transport ?? workerTransport(options, config),
      queuePrefix: options.queuePrefix ?? config.queuePrefix,
      queue: this.queue,
      concurrency: options.concurrency ?? config.worker.concurrency,
      version: options.version ?? config.worker.version ?? 'unversioned',
      upgrade: options.upgrade ?? config.worker.upgrade,
      leaseTtlMs: options.leaseTtlMs ?? config.worker.runLeaseTtlMs,
      shutdownGraceMs: options.shutdownGraceMs ?? config.shutdownGraceMs,
      logger: options.logger ?? CONSOLE_LOGGER,
      reaperSkewMs: options.reaperSkewMs ?? config.reaperSkewMs,
      startMarginMs: options.startMarginMs ?? config.worker.startMarginMs,
    };
  }

  /**
   * Checks that the server serves this worker's protocol version, registers the handlers in the
   * worker registry, then starts claiming runs from the queue.
   */
  async start(): Promise<void> {
    if (this.state !== 'new') throw new KairosWorkerError(`a worker starts once (this one is ${this.state})`);
    this.state = 'started';
    const s = this.settings;
    const ownPool = this.options.pool === undefined;
    const pool = this.options.pool ?? createPool({ connectionString: s.databaseUrl, max: 4, applicationName: 'kairos-worker' });
    const clock = new DatabaseClock(pool);
    const ledger = new ExecutionLedger(pool, s.databaseUrl, this.id, s.leaseTtlMs, clock);
    let transport: Transport;
    try {
      await ledger.checkProtocolVersion();
      await clock.start();
      await ledger.register({ queue: this.queue, handlers: [...this.handlers.keys()], version: s.version, upgrade: s.upgrade });
      transport = await openTransport(s.transport, s.queuePrefix);
    } catch (error) {
      clock.stop();
      await ledger.close();
      if (ownPool) await pool.end().catch(() => undefined);
      this.state = 'stopped';
      throw error;
    }
    const leases = new LeaseKeeper(ledger, s.leaseTtlMs, s.logger);
    const queues = new RunsQueues(transport);
    const dispatcher = new RunDispatcher(queues, ledger.dispatchLedger, new JobDelays(clock, ledger.dispatchLedger, s.startMarginMs), this.dispatchBatch);
    ledger.handOverReleasedWith((items) => dispatcher.dispatch(items));
    clock.onReading((reading, previous) => {
      if (previous && Math.abs(reading.offsetMs - previous.offsetMs) > CLOCK_STEP_MS) this.afterClockStep(reading.offsetMs - previous.offsetMs);
    });
    const executor = new RunExecutor(
      ledger,
      leases,
      new TargetRunner(this.handlers, this.options.httpTarget ?? null, ledger.checkpointLedger(), (message) => s.logger.warn(message), s.version),
      dispatcher,
      this.options.observer ?? {},
      s.logger,
      s.reaperSkewMs,
      { marginMs: s.startMarginMs, maxWaiting: Math.max(1, Math.floor(s.concurrency / 2)) },
      s.concurrency,
    );
    leases.start();
    const worker = transport.consumer(runsQueueName(this.queue), (job, token) => executor.process(job, token!), {
      concurrency: s.concurrency,
      maxStalledCount: MAX_STALLED_COUNT,
      // The transport's lock follows the ledger's lease: a worker that froze or died loses its job
      // to another worker on about the same schedule as the reaper takes the run back.
      lockDuration: s.leaseTtlMs,
      stalledInterval: Math.max(1_000, Math.floor(s.leaseTtlMs / 2)),
      logger: s.logger,
      onFailed: (jobId, error) => s.logger.error(`job ${jobId} failed: ${error.message}`),
    });
    executor.whenFull((full) => worker.throttle(full));
    this.resources = { pool, ownPool, clock, ledger, leases, transport, queues, worker, executor };
  }

  /**
   * This host's clock was stepped by `stepMs` against the database's. Producers learn the new offset
   * from the heartbeat at once; the delayed jobs already handed over are re-timed now, and again
   * once producers can no longer be using the old offset.
   */
  private afterClockStep(offsetChangeMs: number): void {
    const r = this.resources;
    if (!r) return;
    const log = this.settings.logger;
    log.warn(`this host's clock was stepped by ${(-offsetChangeMs / 1_000).toFixed(1)} s; re-timing the delayed runs of queue ${this.queue}`);
    const retime = (): void =>
      void retimeDelayedJobs(r.queues.all(this.queue), r.ledger, r.clock, this.settings.startMarginMs)
        .then((count) => count > 0 && log.log(`re-timed ${count} delayed runs after the clock step`))
        .catch((error: Error) => log.warn(`could not re-time delayed runs after the clock step: ${error.message}`));
    void r.ledger.touch().catch(() => undefined).finally(retime);
    for (const afterMs of CONSUMER_OFFSETS_SETTLE_MS) setTimeout(retime, afterMs).unref();
  }

  /**
   * Stops taking runs, lets running handlers finish for the shutdown grace, then aborts the rest
   * (their signal fires), which hand their runs back so another worker picks them up at once.
   * Resolves once every verdict is written and every connection is closed.
   */
  async stop(): Promise<void> {
    const r = this.resources;
    if (this.state !== 'started' || !r) return;
    this.state = 'stopped';
    this.resources = null;
    r.executor.stop();
    const closing = r.worker.close().then(() => r.executor.executed());
    const grace = new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), this.settings.shutdownGraceMs).unref());
    if ((await Promise.race([closing, grace])) === 'timeout' && r.leases.heldCount > 0) {
      this.settings.logger.warn(`handing back ${r.leases.heldCount} runs still executing after the ${this.settings.shutdownGraceMs} ms grace period`);
      r.leases.abortAll('shutdown', 'the worker is shutting down');
    }
    await closing;
    await r.ledger.settleWritesBehind();
    await r.leases.stop();
    await r.ledger
      .stopWorker()
      .catch((error: Error) =>
        this.settings.logger.warn(`could not record this worker's stop (${error.message}): it counts as serving version ${this.settings.version} until its heartbeats are a minute overdue`),
      );
    r.clock.stop();
    await r.ledger.close();
    await r.queues.close();
    await r.transport.close();
    if (r.ownPool) await r.pool.end().catch(() => undefined);
  }
}
