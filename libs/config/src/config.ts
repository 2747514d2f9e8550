/**
 * Configuration, read once from the environment and validated at start-up. A bad value stops the
 * process with a message naming the variable; nothing downstream re-reads process.env.
 *
 * CONFIGURATION declares every variable once: loadConfig reads it into a KairosConfig of the same
 * shape, and the README's configuration table is written from it (`npm run docs:config`).
 */
import { DurationError, parseDuration } from '@kairos/domain';

export type Role = 'api' | 'scheduler' | 'worker';
export const ROLES: readonly Role[] = ['api', 'scheduler', 'worker'];

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

/** What a variable is read against: the environment, and the roles of the entry point for when KAIROS_ROLES is unset. */
interface Context {
  env: Env;
  defaultRoles: readonly Role[];
}

/** One environment variable: its name, its default and meaning as the README shows them (markdown), and its reader. */
export class Variable<T> {
  constructor(
    readonly name: string,
    readonly shownDefault: string,
    readonly meaning: string,
    readonly read: (context: Context) => T,
  ) {}

  /** The same variable, its value passed through `f`. */
  map<U>(f: (value: T) => U): Variable<U> {
    return new Variable(this.name, this.shownDefault, this.meaning, (context) => f(this.read(context)));
  }
}

/**
 * A value read from several variables (or from one, in the light of others): it shows in the README
 * as the rows of `variables`, which must each be declared nowhere else.
 */
export class Derived<T> {
  constructor(
    readonly variables: readonly Variable<unknown>[],
    readonly read: (context: Context) => T,
  ) {}
}

/** A default, either fixed or taken from the rest of the environment; the latter needs `shown` to say how. */
type Fallback<T> = T | ((context: Context) => T);

interface Spec<D> {
  name: string;
  default: D;
  meaning: string;
  /** The README's default column, when the default is not one value. */
  shown?: string;
}

function variable<D, T>(spec: Spec<Fallback<D>>, read: (value: string | undefined, fallback: () => D) => T): Variable<T> {
  const fallback = (context: Context) => (): D =>
    typeof spec.default === 'function' ? (spec.default as (context: Context) => D)(context) : spec.default;
  const shown = spec.shown ?? `\`${String(spec.default)}\``;
  return new Variable(spec.name, shown, spec.meaning, (context) => read(raw(context.env, spec.name), fallback(context)));
}

function raw(env: Env, name: string): string | undefined {
  const value = env[name]?.trim();
  return value === undefined || value === '' ? undefined : value;
}

function flag(spec: Spec<Fallback<boolean>>): Variable<boolean> {
  return variable(spec, (value, fallback) => {
    if (value === undefined) return fallback();
    if (value === 'true' || value === '1') return true;
    if (value === 'false' || value === '0') return false;
    throw new ConfigError(`${spec.name}="${value}" must be true or false`);
  });
}

function url(spec: Spec<string> & { protocols: string[] }): Variable<string> {
  return variable(spec, (value = spec.default) => {
    let parsed: URL;
    try {
      parsed = new URL(value);
    } catch {
      throw new ConfigError(`${spec.name} is not a valid URL`);
    }
    if (!spec.protocols.includes(parsed.protocol)) {
      throw new ConfigError(`${spec.name} must start with ${spec.protocols.map((p) => `${p}//`).join(' or ')}`);
    }
    return value;
  });
}

function text(spec: Spec<string> & { pattern: RegExp }): Variable<string> {
  return variable(spec, (value = spec.default) => {
    if (!spec.pattern.test(value)) throw new ConfigError(`${spec.name}="${value}" is not valid (expected ${spec.pattern.source})`);
    return value;
  });
}

/** Any text, or null when unset. */
function optionalText(spec: Spec<null> & { shown: string }): Variable<string | null> {
  return variable(spec, (value) => value ?? null);
}

/** Any text, or `default` when unset. */
function anyText(spec: Spec<string>): Variable<string> {
  return variable(spec, (value = spec.default) => value);
}

/** A URL, or null when unset. */
function optionalUrl(spec: Spec<null> & { shown: string; protocols: string[] }): Variable<string | null> {
  const checked = url({ ...spec, default: '' });
  return new Variable(spec.name, spec.shown, spec.meaning, (context) => (raw(context.env, spec.name) === undefined ? null : checked.read(context)));
}

function oneOf<T extends string>(spec: Spec<Fallback<T>> & { allowed: readonly T[] }): Variable<T> {
  return variable(spec, (value, fallback) => {
    const chosen = value ?? fallback();
    if (!(spec.allowed as readonly string[]).includes(chosen)) {
      throw new ConfigError(`${spec.name}="${chosen}" is not one of ${spec.allowed.join(', ')}`);
    }
    return chosen as T;
  });
}

function integer(spec: Spec<number> & { min: number; max: number }): Variable<number> {
  return variable(spec, (value) => {
    if (value === undefined) return spec.default;
    const n = /^\d+$/.test(value) ? Number(value) : Number.NaN;
    if (!Number.isInteger(n) || n < spec.min || n > spec.max) {
      throw new ConfigError(`${spec.name}="${value}" must be an integer from ${spec.min} to ${spec.max}`);
    }
    return n;
  });
}

/** Leases shorter than a second would expire between renewals on a busy machine. */
const SECOND = 1_000;
/** Loops polling faster than this would only burn the database. */
const LOOP_MIN = 10;

/** A duration (`90s`, `1h30m`, or bare milliseconds) read as milliseconds, at least `min` and at most `max`. */
function duration(spec: Spec<string> & { min?: number; max?: number }): Variable<number> {
  const minMs = spec.min ?? 0;
  return variable(spec, (value = spec.default) => {
    let ms: number;
    try {
      ms = parseDuration(/^\d+$/.test(value) ? Number(value) : value);
    } catch (error) {
      if (error instanceof DurationError) throw new ConfigError(`${spec.name}="${value}": ${error.message}`);
      throw error;
    }
    if (ms < minMs) throw new ConfigError(`${spec.name}="${value}" must be at least ${minMs} ms`);
    if (spec.max !== undefined && ms > spec.max) throw new ConfigError(`${spec.name}="${value}" must be at most ${spec.max} ms`);
    return ms;
  });
}

/** A comma-separated list; blanks between commas are dropped. */
function list(spec: Omit<Spec<never>, 'default'>): Variable<string[]> {
  return variable({ ...spec, default: [], shown: 'empty' }, (value) =>
    (value ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s.length > 0),
  );
}

const roles = variable<readonly Role[], Role[]>(
  { name: 'KAIROS_ROLES', default: (context) => context.defaultRoles, shown: 'per entry point', meaning: '`api,scheduler,worker` for `npm start`' },
  (value, fallback) => {
    if (value === undefined) return [...fallback()];
    const parsed = value
      .split(',')
      .map((r) => r.trim())
      .filter((r) => r.length > 0);
    for (const role of parsed) {
      if (!(ROLES as readonly string[]).includes(role)) {
        throw new ConfigError(`KAIROS_ROLES: unknown role "${role}"; use a comma-separated list of ${ROLES.join(', ')}`);
      }
    }
    return [...new Set(parsed)] as Role[];
  },
);

const host = text({
  name: 'HOST',
  default: '127.0.0.1',
  pattern: /^[A-Za-z0-9.:-]+$/,
  meaning: 'address the HTTP listener binds (every role serves `/health`); `0.0.0.0` to be reachable from other machines',
});

/**
 * Where the queues live: Redis when REDIS_URL is set, else BullMQ's PostgreSQL backend in a schema
 * of the ledger's database.
 */
export type TransportConfig = { kind: 'redis'; url: string; topology?: RedisTopology } | { kind: 'postgres'; url: string; schema: string };

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

const databaseUrl = optionalUrl({
  name: 'DATABASE_URL',
  default: null,
  shown: 'unset: the embedded Postgres',
  protocols: ['postgres:', 'postgresql:'],
  meaning: `the ledger; unset, Kairos runs its own server and uses its \`kairos\` database (\`postgresql://postgres@127.0.0.1:${EMBEDDED_POSTGRES_PORT}/kairos\`)`,
});
const dataDir = anyText({
  name: 'KAIROS_DATA_DIR',
  default: DEFAULT_DATA_DIR,
  meaning: 'the embedded Postgres keeps its data in `<this>/pg` (relative to the working directory)',
});
const embeddedPort = integer({ name: 'KAIROS_EMBEDDED_PG_PORT', default: EMBEDDED_POSTGRES_PORT, min: 1, max: 65535, meaning: "the embedded Postgres's port on 127.0.0.1" });
const embeddedPostgres = new Derived<EmbeddedPostgresConfig | null>([dataDir, embeddedPort], (context) =>
  databaseUrl.read(context) === null ? { dataDir: `${dataDir.read(context)}/pg`, port: embeddedPort.read(context) } : null,
);
/** The ledger; with DATABASE_URL unset, the embedded server's `kairos` database. */
const directUrl = optionalUrl({
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
const ledgerUrl = new Derived<string>([databaseUrl], (context) => {
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
const databaseDirectUrl = new Derived<string | null>([directUrl], (context) => {
  const direct = directUrl.read(context);
  if (direct !== null) {
    if (databaseUrl.read(context) === null) throw new ConfigError('DATABASE_DIRECT_URL needs DATABASE_URL: set both, DATABASE_URL to the pooler and DATABASE_DIRECT_URL to Postgres itself');
    if (isPooledDatabaseUrl(direct)) throw new ConfigError(`DATABASE_DIRECT_URL must reach Postgres itself: remove ?${POOLED_PARAMETER}=true from it`);
    return direct;
  }
  const ledger = ledgerUrl.read(context);
  return isPooledDatabaseUrl(ledger) ? null : ledger;
});
const redisUrl = optionalUrl({
  name: 'REDIS_URL',
  default: null,
  shown: 'unset: the Postgres transport',
  protocols: ['redis:', 'rediss:'],
  meaning: `the transport; unset, the queues live in the ledger's database, schema \`${TRANSPORT_SCHEMA}\``,
});
const redisClusterNodes = optionalText({
  name: 'REDIS_CLUSTER_NODES',
  default: null,
  shown: 'unset',
  meaning:
    'seed nodes of a Redis Cluster (`host:7000,host:7001`; an entry may be a URL, `rediss://:password@host:7000`, for the credentials and TLS of every node); set instead of `REDIS_URL`',
});
const redisSentinels = optionalText({
  name: 'REDIS_SENTINELS',
  default: null,
  shown: 'unset',
  meaning:
    "Redis Sentinels (`host:26379,host:26380`) that name the master, followed through failovers; set instead of `REDIS_URL` (an entry may be a URL, for the master's credentials and TLS)",
});
const redisSentinelName = text({
  name: 'REDIS_SENTINEL_NAME',
  default: 'mymaster',
  pattern: /^[A-Za-z0-9_.-]{1,64}$/,
  meaning: 'the master the Sentinels watch, as their `sentinel monitor` names it',
});
const transport = new Derived<TransportConfig>([redisUrl, redisClusterNodes, redisSentinels, redisSentinelName], (context) => {
  const url = redisUrl.read(context);
  const cluster = redisClusterNodes.read(context);
  const sentinels = redisSentinels.read(context);
  const given = [url && 'REDIS_URL', cluster && 'REDIS_CLUSTER_NODES', sentinels && 'REDIS_SENTINELS'].filter(Boolean);
  if (given.length > 1) throw new ConfigError(`${given.join(' and ')} are both set: set only the one that describes your Redis`);
  if (cluster !== null) {
    const nodes = redisNodes('REDIS_CLUSTER_NODES', cluster);
    return { kind: 'redis', url: nodes.url, topology: { kind: 'cluster', nodes: nodes.nodes } };
  }
  if (sentinels !== null) {
    const nodes = redisNodes('REDIS_SENTINELS', sentinels);
    return { kind: 'redis', url: nodes.url, topology: { kind: 'sentinel', sentinels: nodes.nodes, name: redisSentinelName.read(context) } };
  }
  if (url !== null) return { kind: 'redis', url, topology: { kind: 'single' } };
  const direct = databaseDirectUrl.read(context);
  if (direct === null) {
    throw new ConfigError(
      `the Postgres transport needs a session of its own, which a pooler's DATABASE_URL (?${POOLED_PARAMETER}=true) does not give: set DATABASE_DIRECT_URL to Postgres itself, or set REDIS_URL`,
    );
  }
  return { kind: 'postgres', url: direct, schema: TRANSPORT_SCHEMA };
});

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

const otlpTracesEndpoint = optionalUrl({
  name: 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
  default: null,
  shown: 'unset',
  protocols: ['http:', 'https:'],
  meaning: 'the traces URL itself, used as given; wins over `OTEL_EXPORTER_OTLP_ENDPOINT`',
});
const otlpEndpoint = optionalUrl({
  name: 'OTEL_EXPORTER_OTLP_ENDPOINT',
  default: null,
  shown: 'unset',
  protocols: ['http:', 'https:'],
  meaning: 'OTLP/HTTP collector (e.g. `http://collector:4318`): spans go to its `/v1/traces`. Unset (and no traces endpoint): nothing is traced or exported',
});
/**
 * The OTLP/HTTP traces endpoint, as the OpenTelemetry specification derives it: the signal's own
 * variable is used as it is, the general one gets `/v1/traces` appended.
 */
const tracesUrl = new Derived<string | null>([otlpEndpoint, otlpTracesEndpoint], (context) => {
  const own = otlpTracesEndpoint.read(context);
  if (own !== null) return own;
  const base = otlpEndpoint.read(context);
  return base === null ? null : `${base.replace(/\/+$/, '')}/v1/traces`;
});

/** Requests per second per key; a dashboard page load is a dozen, a busy script rarely needs more. */
export const DEFAULT_RATE_LIMIT = 100;

/** Every variable, in the shape of KairosConfig. Adding a variable is adding one entry here. */
export const CONFIGURATION = {
  roles,
  databaseUrl: ledgerUrl,
  databaseDirectUrl,
  embeddedPostgres,
  databasePoolSize: integer({
    name: 'DATABASE_POOL_SIZE',
    default: 10,
    min: 1,
    max: 200,
    meaning: 'Postgres connections per process; a worker opens up to 3 more for its batched claims and verdicts',
  }),
  migrationsDir: optionalText({
    name: 'KAIROS_MIGRATIONS_DIR',
    default: null,
    shown: 'the `prisma/migrations` this build ships with',
    meaning: 'where the SQL migrations are read from',
  }),
  transport,
  queuePrefix: text({
    name: 'KAIROS_QUEUE_PREFIX',
    default: 'kairos',
    pattern: /^[A-Za-z0-9_.:-]{1,64}$/,
    meaning: 'prefix of every BullMQ key in Redis, so several deployments (or test runs) can share one, and the name of the event stream (or NOTIFY channel)',
  }),
  logLevel: oneOf({
    name: 'LOG_LEVEL',
    default: 'log',
    allowed: ['error', 'warn', 'log', 'debug', 'verbose'] as const,
    meaning: '`error`, `warn`, `log`, `debug` or `verbose`',
  }),
  logFormat: oneOf({
    name: 'LOG_FORMAT',
    default: 'auto',
    allowed: ['auto', 'json', 'pretty', 'text'] as const,
    meaning:
      '`json`: one JSON object per line (pino): `level`, `time`, `msg`, `role`, `context` and, where there is one, `runId`, `scheduleId`, `namespace`, `epoch`, `requestId`, with an access-log line per API request (`method`, `path`, `status`, `durationMs`); never payloads, results or secrets. `pretty` (or `text`): readable lines for a terminal. `auto`: `json` unless stdout is a terminal',
  }).map((format) => (format === 'text' ? 'pretty' : format)),
  shutdownGraceMs: duration({ name: 'KAIROS_SHUTDOWN_GRACE', default: '10s', meaning: 'how long a stopping worker lets runs finish' }),
  api: {
    host,
    port: integer({ name: 'PORT', default: 3000, min: 0, max: 65535, meaning: 'port of the HTTP listener; `0` picks a free one' }),
    auth: oneOf({
      name: 'KAIROS_AUTH',
      // Anonymous callers get every scope, which is only safe when nobody else can connect.
      default: (context) => (isLoopbackHost(host.read(context)) ? 'optional' : 'required'),
      shown: '`optional` on a loopback `HOST`, else `required`',
      allowed: ['optional', 'required'] as const,
      meaning: '`required`: every API request needs a key; `optional`: a request without one acts in `default` with every scope',
    }),
    sessionTtlMs: duration({
      name: 'KAIROS_SESSION_TTL',
      default: '12h',
      min: SECOND,
      meaning: 'how long a browser session opened by `POST /auth/login` lasts',
    }),
    rateLimit: integer({
      name: 'KAIROS_RATE_LIMIT',
      default: DEFAULT_RATE_LIMIT,
      min: 0,
      max: 1_000_000,
      meaning:
        'requests per second per API key (per address without one), shared by every API replica through Redis (on the Postgres transport, counted in each API process); `0` turns it off',
    }),
    graphqlIntrospection: flag({
      name: 'KAIROS_GRAPHQL_INTROSPECTION',
      default: (context) => raw(context.env, 'NODE_ENV') !== 'production',
      shown: '`true`, `false` when `NODE_ENV=production`',
      meaning: 'whether GraphQL answers introspection queries',
    }),
    signingSecretGraceMs: duration({
      name: 'KAIROS_SIGNING_SECRET_GRACE',
      default: '24h',
      meaning: 'how long a rotated-away signing secret still signs deliveries beside the new one',
    }),
  },
  scheduler: {
    leaderTtlMs: duration({
      name: 'KAIROS_LEADER_TTL',
      default: '10s',
      min: SECOND,
      meaning:
        'scheduler lease and partition leases; renewed every third of it. A leader or partition owner whose process dies is replaced within about a second regardless; the TTL bounds only a frozen or partitioned one',
    }),
    tickMaxIdleMs: duration({
      name: 'KAIROS_TICK_MAX_IDLE',
      default: '1s',
      min: LOOP_MIN,
      meaning: 'longest tick sleep (new schedules also wake it)',
    }),
    tickBatchSize: integer({
      name: 'KAIROS_TICK_BATCH',
      default: 2_000,
      min: 1,
      max: 10_000,
      meaning: 'schedules one tick transaction claims and writes; the next batch is written while the last one is handed to BullMQ',
    }),
    lookaheadMs: duration({
      name: 'KAIROS_LOOKAHEAD',
      default: '15s',
      meaning: 'slots this far ahead are made into runs early and handed to BullMQ as delayed jobs (see Lookahead); `0s` makes each run at its instant',
    }),
    relayIntervalMs: duration({
      name: 'KAIROS_RELAY_INTERVAL',
      default: '1s',
      min: LOOP_MIN,
      meaning: 'how often the leader hands undispatched runs to Redis and publishes outbox events once it is caught up',
    }),
    reconcileIntervalMs: duration({
      name: 'KAIROS_RECONCILE_INTERVAL',
      default: '5s',
      min: LOOP_MIN,
      meaning: 'how often the leader checks overdue queued runs against Redis',
    }),
    reconcileGraceMs: duration({
      name: 'KAIROS_RECONCILE_GRACE',
      default: '10s',
      meaning: 'a queued run this overdue is checked against Redis and re-enqueued when Redis lost it',
    }),
    reaperIntervalMs: duration({
      name: 'KAIROS_REAPER_INTERVAL',
      default: '2s',
      min: LOOP_MIN,
      meaning: 'how often the leader looks for runs whose lease expired',
    }),
    reaperSkewMs: duration({ name: 'KAIROS_REAPER_SKEW', default: '5s', meaning: 'how long past expiry the reaper waits' }),
    reaperBackoffMs: duration({ name: 'KAIROS_REAPER_BACKOFF', default: '5s', meaning: 'the delay before a reaped run is due again' }),
    crashBudget: integer({
      name: 'KAIROS_CRASH_BUDGET',
      default: 3,
      min: 1,
      max: 100,
      meaning: 'executors that may die holding a run before it is `POISONED`',
    }),
  },
  alerts: {
    publicUrl: optionalUrl({
      name: 'KAIROS_PUBLIC_URL',
      default: null,
      shown: 'unset',
      protocols: ['http:', 'https:'],
      meaning: "the dashboard's address as people reach it (e.g. `https://kairos.example.com`); subscription deliveries link to runs and schedules under it, and carry no link while it is unset",
    }),
    retryWindowMs: duration({
      name: 'KAIROS_SUBSCRIPTION_RETRY_WINDOW',
      default: '24h',
      min: SECOND,
      meaning: 'how long a subscription delivery is retried (with backoff) before the subscription is disabled and `subscription.disabled` goes to the namespace\'s other subscriptions',
    }),
    deliveryTimeoutMs: duration({
      name: 'KAIROS_SUBSCRIPTION_TIMEOUT',
      default: '10s',
      min: 100,
      meaning: 'how long one subscription delivery may take before it counts as failed and is retried',
    }),
  },
  retention: {
    retentionMs: duration({
      name: 'KAIROS_RETENTION',
      default: '30d',
      min: SECOND,
      meaning:
        'finished runs (with their events and ticks), run-less ticks, published outbox rows, old sessions and outages are pruned past this age',
    }),
    deadLetterRetentionMs: duration({
      name: 'KAIROS_DEAD_LETTER_RETENTION',
      default: '90d',
      min: SECOND,
      meaning: 'how long a dead letter nobody republished is kept (a republished one follows `KAIROS_RETENTION`)',
    }),
    // Small, so each transaction is short.
    batchSize: integer({ name: 'KAIROS_RETENTION_BATCH', default: 500, min: 1, max: 10_000, meaning: 'rows per pruning statement' }),
    intervalMs: duration({
      name: 'KAIROS_RETENTION_INTERVAL',
      default: '1m',
      min: LOOP_MIN,
      meaning: 'how often the leader looks for something to prune once it is caught up',
    }),
  },
  tracing: {
    tracesUrl,
    serviceName: optionalText({
      name: 'OTEL_SERVICE_NAME',
      default: null,
      shown: '`kairos-<process>`',
      meaning: 'the traces\' `service.name`; by default `kairos-api`, `kairos-scheduler`, `kairos-worker` or `kairos-all-in-one`',
    }),
  },
  worker: {
    concurrency: integer({
      name: 'KAIROS_WORKER_CONCURRENCY',
      default: 256,
      min: 1,
      max: 1000,
      meaning:
        'runs one worker executes at once; their claims and verdicts go to Postgres in shared batches, so a higher value also means fewer, larger statements (a herd of 20,000 started 1.1 to 1.7 times as fast at 256 as at 64, and cost Postgres half the CPU per run with two workers)',
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
  },
};

/** What a declaration reads into: each Variable<T> becomes its T. */
type Read<D> = D extends Variable<infer T> ? T : D extends Derived<infer T> ? T : { [K in keyof D]: Read<D[K]> };

export type KairosConfig = Read<typeof CONFIGURATION>;

/** Every declared variable, in declaration order. */
export function configVariables(declaration: object = CONFIGURATION): Variable<unknown>[] {
  return Object.values(declaration).flatMap((entry: object) =>
    entry instanceof Variable ? [entry] : entry instanceof Derived ? [...entry.variables] : configVariables(entry),
  );
}

export function loadConfig(env: Env = process.env, defaultRoles: Role[] = [...ROLES]): KairosConfig {
  const context: Context = { env, defaultRoles };
  const read = (declaration: object): unknown =>
    declaration instanceof Variable || declaration instanceof Derived
      ? declaration.read(context)
      : Object.fromEntries(Object.entries(declaration).map(([key, entry]: [string, object]) => [key, read(entry)]));
  return read(CONFIGURATION) as KairosConfig;
}

/** Whether a listener on `host` is reachable from this machine only. */
export function isLoopbackHost(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
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
export function describeDatabase(config: Pick<KairosConfig, 'databaseUrl' | 'databaseDirectUrl' | 'embeddedPostgres'>): string {
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
