/**
 * Configuration, read once from the environment and validated at start-up. A bad value stops the
 * process with a message naming the variable; nothing downstream re-reads process.env.
 */
import { DurationError, parseDuration } from '@kairos/domain';

export type Role = 'api' | 'scheduler' | 'worker';
export const ROLES: readonly Role[] = ['api', 'scheduler', 'worker'];

export interface KairosConfig {
  roles: Role[];
  databaseUrl: string;
  databasePoolSize: number;
  /** Where the SQL migrations are; null means the prisma/migrations folder this build ships with. */
  migrationsDir: string | null;
  redisUrl: string;
  /** Prefix of every BullMQ key, so several deployments (or test runs) can share one Redis. */
  queuePrefix: string;
  logLevel: 'error' | 'warn' | 'log' | 'debug' | 'verbose';
  /** `auto`: JSON lines when stdout is not a terminal, readable lines when it is. `text` is `pretty`. */
  logFormat: 'auto' | 'json' | 'pretty';
  shutdownGraceMs: number;
  api: {
    host: string;
    port: number;
    /**
     * `optional`: a request without a key acts in the default namespace with every scope; a key,
     * when sent, is checked and scoped. `required`: every request needs a valid key. Unset, it is
     * `optional` only while the listener is loopback-only.
     */
    auth: 'optional' | 'required';
    /** How long a browser session opened by POST /auth/login lasts. */
    sessionTtlMs: number;
    /** Requests per second per API key (per address when anonymous), counted in Redis; 0 turns the limit off. */
    rateLimit: number;
    /** Whether GraphQL answers introspection queries (off by default when NODE_ENV=production). */
    graphqlIntrospection: boolean;
    /** How long the previous signing secret still signs deliveries after a rotation. */
    signingSecretGraceMs: number;
  };
  scheduler: {
    leaderTtlMs: number;
    /** The longest the tick sleeps when nothing is due (a new schedule also wakes it). */
    tickMaxIdleMs: number;
    tickBatchSize: number;
    /** Slots up to this far in the future are materialised early, as delayed jobs. */
    lookaheadMs: number;
    relayIntervalMs: number;
    reconcileIntervalMs: number;
    /** A queued run this overdue is checked against Redis and re-enqueued when Redis lost it. */
    reconcileGraceMs: number;
    reaperIntervalMs: number;
    /** How long past its lease expiry the reaper waits before taking a run back. */
    reaperSkewMs: number;
    /** The delay before a reaped run is due again. */
    reaperBackoffMs: number;
    /** Executors that may die holding one run before it is quarantined as POISONED. */
    crashBudget: number;
  };
  retention: {
    /** Finished runs (with their events and ticks), run-less ticks and published outbox rows older than this are pruned. */
    retentionMs: number;
    /** How long a dead letter that was never republished is kept. */
    deadLetterRetentionMs: number;
    /** Rows per pruning statement: small, so each transaction is short. */
    batchSize: number;
    /** How long the pruner sleeps once nothing is left to prune. */
    intervalMs: number;
  };
  worker: {
    concurrency: number;
    runLeaseTtlMs: number;
    /** Hosts and CIDR ranges an HTTP target may reach even though they are private or loopback. */
    httpAllowList: string[];
  };
}

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

export function loadConfig(env: Env = process.env, defaultRoles: Role[] = [...ROLES]): KairosConfig {
  const leaderTtlMs = duration(env, 'KAIROS_LEADER_TTL', '10s', SECOND);
  return {
    roles: roles(env, defaultRoles),
    databaseUrl: url(env, 'DATABASE_URL', 'postgresql://postgres@127.0.0.1:5432/kairos', ['postgres:', 'postgresql:']),
    databasePoolSize: integer(env, 'DATABASE_POOL_SIZE', 10, 1, 200),
    migrationsDir: raw(env, 'KAIROS_MIGRATIONS_DIR') ?? null,
    redisUrl: url(env, 'REDIS_URL', 'redis://127.0.0.1:6379', ['redis:', 'rediss:']),
    queuePrefix: text(env, 'KAIROS_QUEUE_PREFIX', 'kairos', /^[A-Za-z0-9_.:-]{1,64}$/),
    logLevel: oneOf(env, 'LOG_LEVEL', 'log', ['error', 'warn', 'log', 'debug', 'verbose'] as const),
    logFormat: logFormat(env),
    shutdownGraceMs: duration(env, 'KAIROS_SHUTDOWN_GRACE', '10s'),
    api: apiConfig(env),
    scheduler: {
      leaderTtlMs,
      tickMaxIdleMs: duration(env, 'KAIROS_TICK_MAX_IDLE', '1s', LOOP_MIN),
      tickBatchSize: integer(env, 'KAIROS_TICK_BATCH', 500, 1, 10_000),
      lookaheadMs: duration(env, 'KAIROS_LOOKAHEAD', '0s'),
      relayIntervalMs: duration(env, 'KAIROS_RELAY_INTERVAL', '1s', LOOP_MIN),
      reconcileIntervalMs: duration(env, 'KAIROS_RECONCILE_INTERVAL', '5s', LOOP_MIN),
      reconcileGraceMs: duration(env, 'KAIROS_RECONCILE_GRACE', '10s'),
      reaperIntervalMs: duration(env, 'KAIROS_REAPER_INTERVAL', '2s', LOOP_MIN),
      reaperSkewMs: duration(env, 'KAIROS_REAPER_SKEW', '5s'),
      reaperBackoffMs: duration(env, 'KAIROS_REAPER_BACKOFF', '5s'),
      crashBudget: integer(env, 'KAIROS_CRASH_BUDGET', 3, 1, 100),
    },
    retention: {
      retentionMs: duration(env, 'KAIROS_RETENTION', '30d', SECOND),
      deadLetterRetentionMs: duration(env, 'KAIROS_DEAD_LETTER_RETENTION', '90d', SECOND),
      batchSize: integer(env, 'KAIROS_RETENTION_BATCH', 500, 1, 10_000),
      intervalMs: duration(env, 'KAIROS_RETENTION_INTERVAL', '1m', LOOP_MIN),
    },
    worker: {
      concurrency: integer(env, 'KAIROS_WORKER_CONCURRENCY', 16, 1, 1000),
      runLeaseTtlMs: duration(env, 'KAIROS_RUN_LEASE_TTL', '30s', SECOND),
      httpAllowList: list(env, 'KAIROS_HTTP_ALLOWLIST'),
    },
  };
}

/** Requests per second per key; a dashboard page load is a dozen, a busy script rarely needs more. */
export const DEFAULT_RATE_LIMIT = 100;

function apiConfig(env: Env): KairosConfig['api'] {
  const host = text(env, 'HOST', '127.0.0.1', /^[A-Za-z0-9.:-]+$/);
  return {
    host,
    port: integer(env, 'PORT', 3000, 0, 65535),
    // Anonymous callers get every scope, which is only safe when nobody else can connect.
    auth: oneOf(env, 'KAIROS_AUTH', isLoopbackHost(host) ? 'optional' : 'required', ['optional', 'required'] as const),
    sessionTtlMs: duration(env, 'KAIROS_SESSION_TTL', '12h', SECOND),
    rateLimit: integer(env, 'KAIROS_RATE_LIMIT', DEFAULT_RATE_LIMIT, 0, 1_000_000),
    graphqlIntrospection: flag(env, 'KAIROS_GRAPHQL_INTROSPECTION', raw(env, 'NODE_ENV') !== 'production'),
    signingSecretGraceMs: duration(env, 'KAIROS_SIGNING_SECRET_GRACE', '24h'),
  };
}

/** Whether a listener on `host` is reachable from this machine only. */
export function isLoopbackHost(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

function flag(env: Env, name: string, fallback: boolean): boolean {
  const value = raw(env, name);
  if (value === undefined) return fallback;
  if (value === 'true' || value === '1') return true;
  if (value === 'false' || value === '0') return false;
  throw new ConfigError(`${name}="${value}" must be true or false`);
}

function logFormat(env: Env): KairosConfig['logFormat'] {
  const format = oneOf(env, 'LOG_FORMAT', 'auto', ['auto', 'json', 'pretty', 'text'] as const);
  return format === 'text' ? 'pretty' : format;
}

function raw(env: Env, name: string): string | undefined {
  const value = env[name]?.trim();
  return value === undefined || value === '' ? undefined : value;
}

function roles(env: Env, fallback: Role[]): Role[] {
  const value = raw(env, 'KAIROS_ROLES');
  if (value === undefined) return fallback;
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
}

function url(env: Env, name: string, fallback: string, protocols: string[]): string {
  const value = raw(env, name) ?? fallback;
  let parsed: URL;
  try {
    parsed = new URL(value);
  } catch {
    throw new ConfigError(`${name} is not a valid URL`);
  }
  if (!protocols.includes(parsed.protocol)) {
    throw new ConfigError(`${name} must start with ${protocols.map((p) => `${p}//`).join(' or ')}`);
  }
  return value;
}

function text(env: Env, name: string, fallback: string, pattern: RegExp): string {
  const value = raw(env, name) ?? fallback;
  if (!pattern.test(value)) throw new ConfigError(`${name}="${value}" is not valid (expected ${pattern.source})`);
  return value;
}

function oneOf<T extends string>(env: Env, name: string, fallback: T, allowed: readonly T[]): T {
  const value = raw(env, name) ?? fallback;
  if (!(allowed as readonly string[]).includes(value)) {
    throw new ConfigError(`${name}="${value}" is not one of ${allowed.join(', ')}`);
  }
  return value as T;
}

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const value = raw(env, name);
  if (value === undefined) return fallback;
  const n = /^\d+$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new ConfigError(`${name}="${value}" must be an integer from ${min} to ${max}`);
  }
  return n;
}

/** Leases shorter than a second would expire between renewals on a busy machine. */
const SECOND = 1_000;
/** Loops polling faster than this would only burn the database. */
const LOOP_MIN = 10;

function duration(env: Env, name: string, fallback: string, minMs = 0): number {
  const value = raw(env, name) ?? fallback;
  let ms: number;
  try {
    ms = parseDuration(/^\d+$/.test(value) ? Number(value) : value);
  } catch (error) {
    if (error instanceof DurationError) throw new ConfigError(`${name}="${value}": ${error.message}`);
    throw error;
  }
  if (ms < minMs) throw new ConfigError(`${name}="${value}" must be at least ${minMs} ms`);
  return ms;
}

function list(env: Env, name: string): string[] {
  return (raw(env, name) ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
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
