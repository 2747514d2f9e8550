/**
 * Redis connections for BullMQ, on each topology Kairos runs on: one server (REDIS_URL), a Redis
 * Cluster (REDIS_CLUSTER_NODES) or a master named by Sentinels (REDIS_SENTINELS).
 */
import type { ConnectionOptions } from 'bullmq';
import { Cluster, Redis, type ClusterOptions, type RedisOptions } from 'ioredis';
import type { RedisNode, RedisTopology, TransportConfig } from '@kairos/config';

export type RedisTransportConfig = Extract<TransportConfig, { kind: 'redis' }>;
/** A connection on any topology: the commands Kairos sends (single keys, or keys sharing a hash tag) work on both. */
export type RedisClient = Redis | Cluster;

const topologyOf = (config: RedisTransportConfig): RedisTopology => config.topology ?? { kind: 'single' };

/**
 * The prefix of every BullMQ key. On a Cluster it is a hash tag (`{kairos}`), so each queue's keys
 * (and BullMQ's scripts touch several at once) hash to one slot: all of Kairos's queues then live on
 * the master that owns that slot, and its replica takes them over when it fails.
 */
export function bullPrefix(config: TransportConfig, prefix: string): string {
  return config.kind === 'redis' && topologyOf(config).kind === 'cluster' ? `{${prefix}}` : prefix;
}

/**
 * A connection for producers (Queue): commands fail fast while Redis is away instead of piling up,
 * so the relay notices, keeps the rows unenqueued in Postgres and retries on its next pass.
 */
export function producerConnection(config: RedisTransportConfig): RedisClient {
  const redis = connect(config, { enableOfflineQueue: false, maxRetriesPerRequest: 1 });
  redis.on('error', () => undefined);
  return redis;
}

/**
 * What a consumer (Worker) connects with: BullMQ requires blocking commands to retry forever. On one
 * server or Sentinels these are options BullMQ connects with (and closes); on a Cluster, a Cluster
 * connection the caller closes once the worker has closed.
 */
export function consumerConnection(config: RedisTransportConfig): { connection: ConnectionOptions; close: () => void } {
  const topology = topologyOf(config);
  if (topology.kind === 'cluster') {
    const cluster = connect(config, { maxRetriesPerRequest: null });
    cluster.on('error', () => undefined);
    return { connection: cluster, close: () => cluster.disconnect() };
  }
  const options = { maxRetriesPerRequest: null, retryStrategy: reconnectDelay };
  const connection: ConnectionOptions = topology.kind === 'sentinel' ? { ...sentinelOptions(config, topology), ...options } : { url: config.url, ...options };
  return { connection, close: () => undefined };
}

/** A connection for a one-off administrative command (ACL users): no retries, so a refusal answers at once. */
export function adminConnection(config: RedisTransportConfig): RedisClient {
  const redis = connect(config, { lazyConnect: true, maxRetriesPerRequest: 1 }, () => null);
  redis.on('error', () => undefined);
  return redis;
}

/**
 * Every node of the topology that holds data, once `redis` (an adminConnection) is connected: the
 * Cluster's masters and replicas; under Sentinels the master and the replicas they know of (each a
 * connection of its own, `extra`, for the caller to close); else the one server.
 */
export async function dataNodes(config: RedisTransportConfig, redis: RedisClient): Promise<{ nodes: Redis[]; extra: Redis[] }> {
  if (redis instanceof Cluster) return clusterNodes(config, redis);
  const topology = topologyOf(config);
  if (topology.kind !== 'sentinel') return { nodes: [redis], extra: [] };
  const extra = (await sentinelReplicas(topology)).map(
    (node) => new Redis({ ...credentials(config), ...node, lazyConnect: true, maxRetriesPerRequest: 1, connectTimeout: 5_000, retryStrategy: () => null }),
  );
  for (const replica of extra) replica.on('error', () => undefined);
  return { nodes: [redis, ...extra], extra };
}

/**
 * Every node of a Cluster: those its slot map names and, from CLUSTER NODES, the replicas it leaves
 * out (Redis omits a replica from CLUSTER SLOTS until it has synced, and a replica may become a
 * master), each of the latter on a connection of its own.
 */
async function clusterNodes(config: RedisTransportConfig, cluster: Cluster): Promise<{ nodes: Redis[]; extra: Redis[] }> {
  const known = cluster.nodes('all');
  const address = (host: string | undefined, port: number | undefined): string => `${host}:${port}`;
  const seen = new Set(known.map((node) => address(node.options.host, node.options.port)));
  const listed = String(await cluster.nodes('master')[0]!.call('CLUSTER', 'NODES'));
  const extra: Redis[] = [];
  for (const line of listed.split('\n')) {
    const [, endpoint, flags] = line.split(' ');
    const match = /^(.+):(\d+)@/.exec(endpoint ?? '');
    if (!match || /fail|handshake|noaddr/.test(flags ?? '') || seen.has(address(match[1], Number(match[2])))) continue;
    seen.add(address(match[1], Number(match[2])));
    const node = new Redis({ ...credentials(config), host: match[1], port: Number(match[2]), lazyConnect: true, maxRetriesPerRequest: 1, connectTimeout: 5_000, retryStrategy: () => null });
    node.on('error', () => undefined);
    extra.push(node);
  }
  return { nodes: [...known, ...extra], extra };
}

/** The replicas the first Sentinel that answers knows of and does not hold down. */
async function sentinelReplicas(topology: Extract<RedisTopology, { kind: 'sentinel' }>): Promise<RedisNode[]> {
  for (const sentinel of topology.sentinels) {
    const client = new Redis({ ...sentinel, lazyConnect: true, maxRetriesPerRequest: 1, connectTimeout: 5_000, retryStrategy: () => null });
    client.on('error', () => undefined);
    try {
      await client.connect();
      const replicas = (await client.call('SENTINEL', 'REPLICAS', topology.name)) as string[][];
      return replicas
        .map((fields) => Object.fromEntries(fields.flatMap((_, i) => (i % 2 === 0 ? [[fields[i], fields[i + 1]]] : []))) as Record<string, string>)
        .filter((r) => !/s_down|o_down|disconnected/.test(r.flags ?? ''))
        .map((r) => ({ host: r.ip!, port: Number(r.port) }));
    } catch {
      // The next Sentinel may answer.
    } finally {
      client.disconnect();
    }
  }
  return [];
}

/** Settles once `redis` is ready, or fails once `ms` have passed without it (errors meanwhile are retried by the connection). */
export function whenReady(redis: RedisClient, ms: number): Promise<void> {
  if (redis.status === 'ready') return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      redis.off('ready', onReady);
      reject(new Error(`Redis was not ready within ${ms} ms`));
    }, ms);
    const onReady = (): void => {
      clearTimeout(timer);
      resolve();
    };
    redis.once('ready', onReady);
  });
}

/** Reconnects 200 ms after a failure, backing off to 2 s. */
const reconnectDelay = (times: number): number => Math.min(times * 200, 2_000);

function connect(config: RedisTransportConfig, extra: RedisOptions, retry: (times: number) => number | null = reconnectDelay): RedisClient {
  const topology = topologyOf(config);
  const common: RedisOptions = { connectTimeout: 5_000, retryStrategy: retry, ...extra };
  if (topology.kind === 'single') return new Redis(config.url, common);
  if (topology.kind === 'sentinel') return new Redis({ ...sentinelOptions(config, topology), ...common });
  const { enableOfflineQueue, lazyConnect, retryStrategy: _perNodeRetry, ...perNode } = common;
  const options: ClusterOptions = {
    clusterRetryStrategy: retry,
    ...(enableOfflineQueue !== undefined && { enableOfflineQueue }),
    ...(lazyConnect !== undefined && { lazyConnect }),
    // A failover moves slots: ask the cluster for its map again soon after a node is lost.
    slotsRefreshTimeout: 2_000,
    redisOptions: { ...credentials(config), ...perNode },
  };
  return new Cluster(topology.nodes, options);
}

/**
 * The master the Sentinels name. failoverDetector: the Sentinels tell of a new master as it is
 * elected, so the connection moves before its old master's socket times out.
 */
function sentinelOptions(config: RedisTransportConfig, topology: Extract<RedisTopology, { kind: 'sentinel' }>): RedisOptions {
  return { ...credentials(config), sentinels: topology.sentinels, name: topology.name, failoverDetector: true };
}

/** The user, password and TLS the URL carries. */
function credentials(config: RedisTransportConfig): RedisOptions {
  const url = new URL(config.url);
  return {
    ...(url.username && { username: decodeURIComponent(url.username) }),
    ...(url.password && { password: decodeURIComponent(url.password) }),
    ...(url.protocol === 'rediss:' && { tls: {} }),
  };
}

/**
 * Deletes every key under `prefix:`, and every key of a shard of a runs queue (`{prefix:<queue>:<n>}`,
 * see shards.ts): what a deployment (or a test run) with that prefix left in Redis.
 */
export async function deleteKeysWithPrefix(redisUrl: string, prefix: string): Promise<void> {
  const redis = new Redis(redisUrl);
  try {
    for (const pattern of [`${prefix}:*`, `{${prefix}:*`]) {
      let cursor = '0';
      do {
        const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
        cursor = next;
        if (keys.length > 0) await redis.del(...keys);
      } while (cursor !== '0');
    }
  } finally {
    redis.disconnect();
  }
}
