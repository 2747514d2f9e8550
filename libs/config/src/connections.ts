/**
 * Where Kairos's data lives: the ledger (DATABASE_URL, its direct URL for sessions through a
 * pooler, or the embedded Postgres when unset) and the transport (Redis, a Redis Cluster, Sentinels,
 * or the ledger's own database), with how they are described in logs without secrets.
 */
import { ConfigError, Derived, anyText, integer, optionalInteger, optionalText, optionalUrl, text } from './variables.js';
/**
 * Where the queues live: Redis when REDIS_URL is set, else BullMQ's PostgreSQL backend in a schema
 * of the ledger's database.
 */
export type TransportConfig = { kind: 'redis'; url: string; topology?: RedisTopology; shards?: number } | { kind: 'postgres'; url: string; schema: string };

/** The most BullMQ queues one runs queue is sharded into (KAIROS_QUEUE_SHARDS). */
export const MAX_QUEUE_SHARDS = 64;

/** A Redis server's address. */
export interface RedisNode {
  host: string;
  port: number;
}

/**
 * How Redis is deployed: one server at the URL (the default), a Redis Cluster found from seed nodes
 * (REDIS_CLUSTER_NODES), or a master that Sentinels name (REDIS_SENTINELS). In the last two the
 * transport's `url` carries only the credentials and the scheme (TLS) of the data nodes.
 */
export type RedisTopology = { kind: 'single' } | { kind: 'cluster'; nodes: RedisNode[] } | { kind: 'sentinel'; sentinels: RedisNode[]; name: string };

/**
 * The query parameter that marks DATABASE_URL as a transaction-mode pooler's (PgBouncer, RDS Proxy,
 * Supabase's or Neon's pooler), as Prisma spells it: Kairos then keeps no session state on its
 * connections. Kairos adds it itself when DATABASE_DIRECT_URL names another address.
 */
export const POOLED_PARAMETER = 'pgbouncer';

/** Whether connections to `url` go through a transaction-mode pooler (see POOLED_PARAMETER). */
export function isPooledDatabaseUrl(url: string): boolean {
  try {
    return new URL(url).searchParams.get(POOLED_PARAMETER) === 'true';
  } catch {
    return false;
  }
}

/** The Postgres Kairos runs itself when DATABASE_URL is unset. */
export interface EmbeddedPostgresConfig {
  /** The data folder (relative paths are taken from the working directory). */
  dataDir: string;
  port: number;
}

/** The schema of the ledger's database that holds the queues on the Postgres transport. */
export const TRANSPORT_SCHEMA = 'kairos_transport';
/** The embedded server's defaults: a port of its own, so it never meets a system Postgres on 5432. */
export const EMBEDDED_POSTGRES_PORT = 54329;
export const DEFAULT_DATA_DIR = '.kairos';

export const databaseUrl = optionalUrl({
  name: 'DATABASE_URL',
  default: null,
  shown: 'unset: the embedded Postgres',
  protocols: ['postgres:', 'postgresql:'],
  meaning: `the ledger; unset, Kairos runs its own server and uses its \`kairos\` database (\`postgresql://postgres@127.0.0.1:${EMBEDDED_POSTGRES_PORT}/kairos\`)`,
});
export const dataDir = anyText({
  name: 'KAIROS_DATA_DIR',
  default: DEFAULT_DATA_DIR,
  meaning: 'the embedded Postgres keeps its data in `<this>/pg` (relative to the working directory)',
});
export const embeddedPort = integer({ name: 'KAIROS_EMBEDDED_PG_PORT', default: EMBEDDED_POSTGRES_PORT, min: 1, max: 65535, meaning: "the embedded Postgres's port on 127.0.0.1" });
export const embeddedPostgres = new Derived<EmbeddedPostgresConfig | null>([dataDir, embeddedPort], (context) =>
  databaseUrl.read(context) === null ? { dataDir: `${dataDir.read(context)}/pg`, port: embeddedPort.read(context) } : null,
);
/** The ledger; with DATABASE_URL unset, the embedded server's `kairos` database. */
export const directUrl = optionalUrl({
  name: 'DATABASE_DIRECT_URL',
  default: null,
  shown: '`DATABASE_URL`, unless it ends in `?pgbouncer=true`',
  protocols: ['postgres:', 'postgresql:'],
  meaning:
    "Postgres itself, for what needs a session: the scheduler's presence locks, `LISTEN`, and the Postgres transport. Set it when `DATABASE_URL` is a transaction-mode pooler (see Production engines)",
});
/**
 * The ledger, as every pool connects to it; with DATABASE_URL unset, the embedded server's `kairos`
 * database. Marked as a pooler's (POOLED_PARAMETER) when DATABASE_DIRECT_URL names another address.
 */
export const ledgerUrl = new Derived<string>([databaseUrl], (context) => {
  const given = databaseUrl.read(context);
  if (given === null) return `postgresql://postgres@127.0.0.1:${embeddedPort.read(context)}/kairos`;
  const direct = directUrl.read(context);
  if (direct === null || direct === given || isPooledDatabaseUrl(given)) return given;
  const marked = new URL(given);
  marked.searchParams.set(POOLED_PARAMETER, 'true');
  return marked.toString();
});
/**
 * Where session work connects: DATABASE_DIRECT_URL, else the ledger itself unless that is a
 * pooler's, in which case nothing may keep a session (null): the scheduler judges leaders by their
 * leases alone and polls instead of listening.
 */
export const databaseDirectUrl = new Derived<string | null>([directUrl], (context) => {
  const direct = directUrl.read(context);
  if (direct !== null) {
    if (databaseUrl.read(context) === null) throw new ConfigError('DATABASE_DIRECT_URL needs DATABASE_URL: set both, DATABASE_URL to the pooler and DATABASE_DIRECT_URL to Postgres itself');
    if (isPooledDatabaseUrl(direct)) throw new ConfigError(`DATABASE_DIRECT_URL must reach Postgres itself: remove ?${POOLED_PARAMETER}=true from it`);
    return direct;
  }
  const ledger = ledgerUrl.read(context);
  return isPooledDatabaseUrl(ledger) ? null : ledger;
});
export const redisUrl = optionalUrl({
  name: 'REDIS_URL',
  default: null,
  shown: 'unset: the Postgres transport',
  protocols: ['redis:', 'rediss:'],
  meaning: `the transport; unset, the queues live in the ledger's database, schema \`${TRANSPORT_SCHEMA}\``,
});
export const redisClusterNodes = optionalText({
  name: 'REDIS_CLUSTER_NODES',
  default: null,
  shown: 'unset',
  meaning:
    'seed nodes of a Redis Cluster (`host:7000,host:7001`; an entry may be a URL, `rediss://:password@host:7000`, for the credentials and TLS of every node); set instead of `REDIS_URL`',
});
export const redisSentinels = optionalText({
  name: 'REDIS_SENTINELS',
  default: null,
  shown: 'unset',
  meaning:
    "Redis Sentinels (`host:26379,host:26380`) that name the master, followed through failovers; set instead of `REDIS_URL` (an entry may be a URL, for the master's credentials and TLS)",
});
export const redisSentinelName = text({
  name: 'REDIS_SENTINEL_NAME',
  default: 'mymaster',
  pattern: /^[A-Za-z0-9_.-]{1,64}$/,
  meaning: 'the master the Sentinels watch, as their `sentinel monitor` names it',
});
export const queueShards = optionalInteger({
  name: 'KAIROS_QUEUE_SHARDS',
  default: null,
  min: 1,
  max: MAX_QUEUE_SHARDS,
  shown: 'unset: `1` on one Redis or behind Sentinels, twice the masters on a Cluster',
  meaning:
    'BullMQ queues each runs queue is spread over, each under a hash tag of its own (`{<prefix>:<queue>:<n>}`), so a Redis Cluster places them on different slots and masters; a run goes to the shard its id picks. Read at start; every process of a deployment should agree (a job left on a shard no longer used is moved by the reconciler)',
});
export const transport = new Derived<TransportConfig>([redisUrl, redisClusterNodes, redisSentinels, redisSentinelName, queueShards], (context) => {
  const url = redisUrl.read(context);
  const shards = queueShards.read(context);
  const cluster = redisClusterNodes.read(context);
  const sentinels = redisSentinels.read(context);
  const given = [url && 'REDIS_URL', cluster && 'REDIS_CLUSTER_NODES', sentinels && 'REDIS_SENTINELS'].filter(Boolean);
  if (given.length > 1) throw new ConfigError(`${given.join(' and ')} are both set: set only the one that describes your Redis`);
  if (cluster !== null) {
    const nodes = redisNodes('REDIS_CLUSTER_NODES', cluster);
    return { kind: 'redis', url: nodes.url, topology: { kind: 'cluster', nodes: nodes.nodes }, ...shardsSet(shards) };
  }
  if (sentinels !== null) {
    const nodes = redisNodes('REDIS_SENTINELS', sentinels);
    return { kind: 'redis', url: nodes.url, topology: { kind: 'sentinel', sentinels: nodes.nodes, name: redisSentinelName.read(context) }, ...shardsSet(shards) };
  }
  if (url !== null) return { kind: 'redis', url, topology: { kind: 'single' }, ...shardsSet(shards) };
  if (shards !== null && shards !== 1) {
    throw new ConfigError(`KAIROS_QUEUE_SHARDS=${shards} shards Redis queues, and the queues live in Postgres (REDIS_URL is unset): unset KAIROS_QUEUE_SHARDS, or set REDIS_URL or REDIS_CLUSTER_NODES`);
  }
  const direct = databaseDirectUrl.read(context);
  if (direct === null) {
    throw new ConfigError(
      `the Postgres transport needs a session of its own, which a pooler's DATABASE_URL (?${POOLED_PARAMETER}=true) does not give: set DATABASE_DIRECT_URL to Postgres itself, or set REDIS_URL`,
    );
  }
  return { kind: 'postgres', url: direct, schema: TRANSPORT_SCHEMA };
});

/** The shards set by KAIROS_QUEUE_SHARDS; unset, the transport picks them for its topology. */
const shardsSet = (shards: number | null): { shards?: number } => (shards === null ? {} : { shards });

/**
 * A list of Redis addresses, each `host:port` or a URL (`redis://user:password@host:port`,
 * `rediss://` for TLS). `url` is the first entry as a URL: the credentials and scheme the nodes share.
 */
function redisNodes(name: string, value: string): { nodes: RedisNode[]; url: string } {
  const entries = value.split(',').map((e) => e.trim()).filter((e) => e.length > 0);
  if (entries.length === 0) throw new ConfigError(`${name} lists no node: write host:port,host:port`);
  const urls = entries.map((entry) => {
    let parsed: URL;
    try {
      parsed = new URL(/^[a-z]+:\/\//i.test(entry) ? entry : `redis://${entry}`);
    } catch {
      throw new ConfigError(`${name}: "${entry}" is not host:port or a redis:// URL`);
    }
    if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:') throw new ConfigError(`${name}: "${entry}" must start with redis:// or rediss://`);
    if (!parsed.hostname || !parsed.port) throw new ConfigError(`${name}: "${entry}" needs a host and a port (host:port)`);
    return parsed;
  });
  const first = urls[0]!;
  return {
    nodes: urls.map((u) => ({ host: u.hostname.replace(/^\[|\]$/g, ''), port: Number(u.port) })),
    url: `${first.protocol}//${first.username || first.password ? `${first.username}:${first.password}@` : ''}${first.host}`,
  };
}

/** The URL with its password masked, for messages and logs. */
export function redactUrl(value: string): string {
  try {
    const parsed = new URL(value);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return '(unparseable URL)';
  }
}

/**
 * The ledger in words, without secrets: `embedded postgres .kairos/pg:54329`, `postgres
 * db.internal:5432/kairos`, or through a pooler, with where its sessions go or what it does without them.
 */
export function describeDatabase(config: { databaseUrl: string; databaseDirectUrl: string | null; embeddedPostgres: EmbeddedPostgresConfig | null }): string {
  if (config.embeddedPostgres) return `embedded postgres ${config.embeddedPostgres.dataDir}:${config.embeddedPostgres.port}`;
  const where = (value: string): string => {
    try {
      const url = new URL(value);
      return `${url.hostname}:${url.port || 5432}${url.pathname}`;
    } catch {
      return '(unparseable URL)';
    }
  };
  if (!isPooledDatabaseUrl(config.databaseUrl)) return `postgres ${where(config.databaseUrl)}`;
  const sessions =
    config.databaseDirectUrl === null
      ? 'no DATABASE_DIRECT_URL: no session state anywhere, so leaders are replaced when their lease expires and loops poll instead of LISTEN'
      : `sessions (presence locks, LISTEN) on ${where(config.databaseDirectUrl)}`;
  return `postgres ${where(config.databaseUrl)} through a transaction-mode pooler (${sessions})`;
}
