/**
 * The one place that opens BullMQ queues, workers and connections. Kairos runs its queues either on
 * Redis (REDIS_URL set) or on BullMQ's PostgreSQL backend in the ledger's own database, in a schema
 * of its own (REDIS_URL unset). Everything above this file sees the same Queue and Worker classes,
 * so every guarantee is written once: the ledger stays the truth and a lost job is re-created.
 */
import { Queue, Worker, createPostgresBackend, runMigrations, type Processor } from 'bullmq';
import pg from 'pg';
import { MAX_QUEUE_SHARDS, type TransportConfig } from '@kairos/config/connections';
import type { Cluster } from 'ioredis';
import { bullPrefix, consumerConnection, producerConnection, whenReady, type RedisClient } from './redis.js';
import { DEFAULT_RUNS_QUEUE_NAME, type RunsJobData, type RunsJobName } from './jobs.js';
import { evenestShardCount, liveShards, shardPrefix, shardsPerMaster, splitConcurrency, type Shard } from './shards.js';
import { SupervisedWorker, type ConsumerLogger, type Processing } from './supervised-worker.js';
import { TransportUnavailableError, explainTransportError } from './transport-errors.js';

export type RunsQueue = Queue<RunsJobData, unknown, RunsJobName>;
export type RunsWorker = Worker<RunsJobData, unknown, RunsJobName>;
export type RunsProcessor = Processor<RunsJobData, unknown, RunsJobName>;
/** A consumer of runs (of every shard of its queue) that pauses, backs off and recovers by itself while its transport fails. */
export interface RunsConsumer {
  /** Stops fetching, lets running jobs finish, and ends any recovery under way. */
  close(): Promise<void>;
  /** While `held` (the runs it holds fill its places), each shard's worker takes a new job only as one completes; false lifts it. */
  throttle(held: boolean): void;
}

export interface RunsWorkerOptions {
  concurrency: number;
  maxStalledCount: number;
  lockDuration: number;
  stalledInterval: number;
}

export interface RunsConsumerOptions extends RunsWorkerOptions {
  /** Where the consumer says that the transport failed, once per backoff step, and that it recovered. */
  logger: ConsumerLogger;
  /** Told about a job whose processor threw. */
  onFailed?: (jobId: string | undefined, error: Error) => void;
}

export interface Transport {
  readonly config: TransportConfig;
  /** One line for banners and health: where the queues live, without secrets. */
  readonly description: string;
  /** The producer connection, for what only Redis offers (the event stream, shared rate counts); null on Postgres. */
  readonly redis: RedisClient | null;
  /** How many BullMQ queues each runs queue is spread over (KAIROS_QUEUE_SHARDS, see shards.ts); 1 on Postgres. */
  readonly shards: number;
  /** Why `shards` is what it is, for banners and health: `set`, or the default of the topology. */
  readonly shardsReason: string;
  /**
   * On a Cluster whose masters hold the default queue's shards unevenly (six on three masters may
   * land 4-1-1: hash tags go where their slots are), what to do about it; else null.
   */
  readonly shardsWarning: string | null;
  /** A producer handle on `shard` of BullMQ queue `name` (the unsharded queue by default); the caller closes it. */
  queue(name: string, shard?: Shard): RunsQueue;
  /** A bare BullMQ worker on `shard` of queue `name`, as this transport makes them; the caller closes it. */
  worker(name: string, processor: RunsProcessor, options: RunsWorkerOptions, shard?: Shard): RunsWorker;
  /**
   * A consumer of every shard of BullMQ queue `name`, supervised through the transport's failures;
   * `options.concurrency` is split over the shards. The caller closes it.
   */
  consumer(name: string, processor: RunsProcessor, options: RunsConsumerOptions): RunsConsumer;
  /**
   * Fails when the transport cannot be reached right now (health, and the consumers' recovery),
   * with a message that says what to do about it.
   */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** How the queues are sharded, in words: `6 shards per queue (twice the cluster's 3 masters)`. */
export function describeShards(transport: Pick<Transport, 'shards' | 'shardsReason'>): string {
  return `${transport.shards} ${transport.shards === 1 ? 'shard' : 'shards'} per queue (${transport.shardsReason === 'set' ? 'KAIROS_QUEUE_SHARDS' : transport.shardsReason})`;
}

/**
 * Where the transport lives, in words: `redis 127.0.0.1:6379`, `redis cluster 10.0.0.1:7000 (+5 seed
 * nodes)`, `redis sentinels mymaster via 10.0.0.1:26379 (+2)` or `postgres (schema kairos_transport ...)`.
 */
export function describeTransport(config: TransportConfig): string {
  if (config.kind === 'postgres') return `postgres (schema ${config.schema} of the ledger's database)`;
  const topology = config.topology ?? { kind: 'single' };
  const list = (nodes: { host: string; port: number }[]): string => `${nodes[0]!.host}:${nodes[0]!.port}${nodes.length > 1 ? ` (+${nodes.length - 1})` : ''}`;
  if (topology.kind === 'cluster') return `redis cluster ${list(topology.nodes)}`;
  if (topology.kind === 'sentinel') return `redis master ${topology.name} via sentinels ${list(topology.sentinels)}`;
  const url = new URL(config.url);
  return `redis ${url.hostname}:${url.port || 6379}`;
}

/**
 * Opens the transport `config` describes; the PostgreSQL backend's schema is created or migrated.
 * Redis need not answer yet: a process serves without it (not ready, saying why) and its consumers
 * start once it does. `queuePrefix` namespaces Redis keys; on PostgreSQL the schema does that.
 */
export async function openTransport(config: TransportConfig, queuePrefix: string): Promise<Transport> {
  if (config.kind === 'redis') {
    const transport = new RedisTransport(config, queuePrefix);
    await transport.countShards();
    return transport;
  }
  await migratePostgresTransport(config.url, config.schema);
  return new PostgresTransport(config);
}

/**
 * What to do when the default queue's shards land unevenly on the Cluster's masters, or null when
 * no master holds more than one more shard than another.
 */
function unevenShards(cluster: Cluster, queuePrefix: string, shards: number): string | null {
  const masters = cluster.nodes('master').map((node) => `${node.options.host}:${node.options.port}`);
  const masterOf = (slot: number): string | undefined => cluster.slots[slot]?.[0];
  const spread = (count: number): number[] => {
    const held = shardsPerMaster(queuePrefix, DEFAULT_RUNS_QUEUE_NAME, count, masterOf);
    return masters.map((m) => held.get(m) ?? 0).sort((a, b) => b - a);
  };
  const now = spread(shards);
  if (masters.length < 2 || now[0]! - now.at(-1)! <= 1) return null;
  const best = evenestShardCount(queuePrefix, DEFAULT_RUNS_QUEUE_NAME, shards, masters, masterOf);
  const percent = (share: number): string => `${Math.round(share * 100)}%`;
  const advice =
    best.count === shards
      ? 'no other count up to 64 does better; moving a shard\'s slot to another master (CLUSTER SETSLOT) does'
      : `KAIROS_QUEUE_SHARDS=${best.count} spreads them ${spread(best.count).join('-')} (${percent(best.busiest)} on the busiest), set it on every process`;
  return `the default queue's ${shards} shards land ${now.join('-')} on the cluster's ${masters.length} masters, so one carries ${percent(now[0]! / shards)} of its runs: ${advice}`;
}

/** How long a process waits at start for a Cluster to name its masters, when it picks the number of shards from them. */
const CLUSTER_MASTERS_WAIT_MS = 5_000;

class RedisTransport implements Transport {
  readonly description: string;
  readonly redis: RedisClient;
  shards = 1;
  shardsReason = 'one Redis';
  shardsWarning: string | null = null;
  /** BullMQ's key prefix of the unsharded layout: `queuePrefix`, hash-tagged on a Cluster. */
  private readonly prefix: string;
  /** Why the producer connection last failed: a command on a connection that is down says only that it is down. */
  private lastError: Error | null = null;

  constructor(
    readonly config: Extract<TransportConfig, { kind: 'redis' }>,
    private readonly queuePrefix: string,
  ) {
    this.description = describeTransport(config);
    this.prefix = bullPrefix(config, queuePrefix);
    this.redis = producerConnection(config);
    this.redis.on('error', (error: Error) => (this.lastError = error));
    this.redis.on('ready', () => (this.lastError = null));
  }

  /**
   * The number of shards: as set, else 1 on one Redis or behind Sentinels, and twice the masters on
   * a Cluster, counted once it answers. A Cluster that does not answer within a few seconds is
   * taken to have as many masters as seed nodes were given, and the banner says so.
   */
  async countShards(): Promise<void> {
    const topology = this.config.topology?.kind ?? 'single';
    if (this.config.shards !== undefined) [this.shards, this.shardsReason] = [this.config.shards, 'set'];
    else if (topology === 'cluster') {
      const masters = await whenReady(this.redis, CLUSTER_MASTERS_WAIT_MS).then(
        () => (this.redis as Cluster).nodes('master').length,
        () => null,
      );
      const counted = masters ?? (this.config.topology as { nodes: unknown[] }).nodes.length;
      this.shards = Math.min(MAX_QUEUE_SHARDS, Math.max(1, 2 * counted));
      this.shardsReason = masters === null ? `twice the ${counted} seed nodes: the cluster did not answer at start` : `twice the cluster's ${masters} masters`;
    } else this.shardsReason = topology === 'sentinel' ? 'a master behind sentinels' : 'one Redis';
    if (topology === 'cluster' && this.shards > 1 && this.redis.status === 'ready') this.shardsWarning = unevenShards(this.redis as Cluster, this.queuePrefix, this.shards);
  }

  queue(name: string, shard: Shard = null): RunsQueue {
    return new Queue(name, { connection: this.redis, prefix: shardPrefix(this.prefix, this.queuePrefix, name, shard) }) as RunsQueue;
  }

  worker(name: string, processor: RunsProcessor, options: RunsWorkerOptions, shard: Shard = null): RunsWorker {
    const { connection, close } = consumerConnection(this.config);
    const worker = new Worker(name, processor, { connection, prefix: shardPrefix(this.prefix, this.queuePrefix, name, shard), ...options }) as RunsWorker;
    worker.once('closed', close);
    return worker;
  }

  /**
   * One supervised worker per shard, each with connections of its own (one for its commands, one
   * that blocks while it waits for jobs, since a blocking wait names one shard's keys, which live on
   * one slot): a worker the supervisor rebuilds after a failover gets fresh ones.
   */
  consumer(name: string, processor: RunsProcessor, options: RunsConsumerOptions): RunsConsumer {
    const shards = liveShards(this.shards);
    const concurrency = splitConcurrency(options.concurrency, shards.length);
    // Each shard's backlog, read when its worker may have stalled; the worker's supervisor reports the transport's errors.
    const queues = shards.map((shard) => this.queue(name, shard).on('error', () => undefined) as RunsQueue);
    const consumers = shards.map((shard, i) =>
      supervise(
        this,
        shard === null ? name : `${name} shard ${shard}`,
        (build, processing) => this.worker(name, processing.wrap(processor), build(concurrency[i]!), shard),
        options,
        () => queues[i]!.getJobCountByTypes('wait', 'prioritized'),
      ),
    );
    return {
      close: async () => {
        await Promise.all(consumers.map((c) => c.close()));
        await Promise.all(queues.map((q) => q.close().catch(() => undefined)));
      },
      throttle: (held) => consumers.forEach((c) => c.throttle(held)),
    };
  }

  async ping(): Promise<void> {
    try {
      await withTimeout(this.connected().then(() => this.redis.ping()), PING_TIMEOUT_MS, 'Redis did not answer PING');
    } catch (error) {
      const cause = this.redis.status !== 'ready' && this.lastError ? this.lastError : (error as Error);
      throw new TransportUnavailableError(explainTransportError(this.config, cause));
    }
  }

  async close(): Promise<void> {
    this.redis.disconnect();
  }

  /**
   * Settles once the producer connection is up, or with the error of its attempt under way: a
   * command sent while it is still connecting would only say the connection is not open.
   */
  private connected(): Promise<void> {
    if (this.redis.status === 'ready') return Promise.resolve();
    if (this.lastError && this.redis.status !== 'connecting') return Promise.reject(this.lastError);
    return new Promise((resolve, reject) => {
      const settle = (error?: Error): void => {
        this.redis.off('ready', onReady);
        this.redis.off('error', settle);
        if (error) reject(error);
        else resolve();
      };
      const onReady = (): void => settle();
      this.redis.once('ready', onReady);
      this.redis.once('error', settle);
    });
  }
}

/**
 * A worker of `transport` under a supervisor that probes the transport with its health check; `make`
 * builds it from its options, given the concurrency it gets.
 */
function supervise(
  transport: Transport,
  name: string,
  make: (options: (concurrency: number) => RunsWorkerOptions, processing: Processing) => RunsWorker,
  options: RunsConsumerOptions,
  backlog?: () => Promise<number>,
): RunsConsumer {
  const { logger, onFailed, ...workerOptions } = options;
  return new SupervisedWorker({
    name: `queue ${name}`,
    build: (processing) => make((concurrency) => ({ ...workerOptions, concurrency }), processing),
    probe: () => transport.ping(),
    explain: (error) => explainTransportError(transport.config, error),
    logger,
    onFailed,
    backlog,
  });
}

/** How long a health check or a consumer's probe waits for the transport to answer. */
const PING_TIMEOUT_MS = 5_000;

/** `work`, or a rejection with `message` once `ms` have passed without its answer. */
export function withTimeout<T>(work: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(message)), ms)));
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

/** Connections per producer queue: adds and lookups are short statements. */
const PRODUCER_POOL = 3;
/**
 * Connections per worker besides its LISTEN connection: every job in flight fetches, renews its
 * lock and completes with statements of its own, so the pool grows with the concurrency (a
 * quarter of it, 4 to 16: enough to keep 128 jobs in flight without starving the ledger's server).
 */
const consumerPool = (concurrency: number): number => Math.min(16, Math.max(4, Math.ceil(concurrency / 4)));

class PostgresTransport implements Transport {
  readonly description: string;
  readonly redis = null;
  readonly shards = 1;
  readonly shardsReason = 'the Postgres transport is not sharded';
  readonly shardsWarning = null;
  /** A single connection for the health check, so it does not wait behind queue traffic. */
  private readonly probe: pg.Pool;

  constructor(readonly config: Extract<TransportConfig, { kind: 'postgres' }>) {
    this.description = describeTransport(config);
    // Connected as the queues' own pools connect (the schema pinned at start-up), so what refuses
    // them refuses the probe too.
    this.probe = new pg.Pool({
      connectionString: config.url,
      max: 1,
      application_name: 'kairos-transport',
      options: `-c search_path=${pg.escapeIdentifier(config.schema)}`,
      connectionTimeoutMillis: PING_TIMEOUT_MS,
      query_timeout: PING_TIMEOUT_MS,
    });
    this.probe.on('error', () => undefined);
  }

  queue(name: string, shard: Shard = null): RunsQueue {
    unsharded(shard);
    return new Queue(name, { connection: this.connection(PRODUCER_POOL) }, createPostgresBackend) as unknown as RunsQueue;
  }

  worker(name: string, processor: RunsProcessor, options: RunsWorkerOptions, shard: Shard = null): RunsWorker {
    unsharded(shard);
    return new Worker(name, processor, { connection: this.connection(consumerPool(options.concurrency)), ...options }, createPostgresBackend) as unknown as RunsWorker;
  }

  consumer(name: string, processor: RunsProcessor, options: RunsConsumerOptions): RunsConsumer {
    return supervise(this, name, (build, processing) => this.worker(name, processing.wrap(processor), build(options.concurrency)), options);
  }

  async ping(): Promise<void> {
    try {
      await this.probe.query('SELECT 1 FROM migration LIMIT 1');
    } catch (error) {
      throw new TransportUnavailableError(explainTransportError(this.config, error as Error));
    }
  }

  async close(): Promise<void> {
    await this.probe.end().catch(() => undefined);
  }

  /** A pool of its own per queue or worker: BullMQ pins the schema on the connections it makes itself. */
  private connection(max: number) {
    return { connectionString: this.config.url, schema: this.config.schema, max, application_name: 'kairos-transport' };
  }
}

/** The Postgres transport has one shard per queue: asking it for another is a bug. */
function unsharded(shard: Shard): void {
  if (shard !== null) throw new Error(`the Postgres transport has no shard ${shard}`);
}

/**
 * Creates or upgrades the PostgreSQL backend's schema (BullMQ serialises concurrent callers with an
 * advisory lock). A worker credential's login may not create schemas: it uses the schema the
 * server's processes made and keep up to date.
 */
export async function migratePostgresTransport(url: string, schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000 });
  // A connection that drops mid-migration fails the statement; its 'error' event must not end the process.
  client.on('error', () => undefined);
  try {
    await client.connect();
    await runMigrations(client, schema).catch(async (error: unknown) => {
      const refused = (error as { code?: string }).code === '42501';
      if (!refused || !(await client.query(`SELECT to_regnamespace($1) IS NOT NULL AS present`, [schema])).rows[0].present) throw error;
    });
  } catch (error) {
    throw new TransportUnavailableError(`cannot prepare the Postgres transport: ${explainTransportError({ kind: 'postgres', url, schema }, error as Error)}`);
  } finally {
    await client.end().catch(() => undefined);
  }
}
