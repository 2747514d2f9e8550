/** The Postgres connection pool and the one way to run a transaction on it. */
import pg from 'pg';
import { isPooledDatabaseUrl } from '@kairos/config/connections';
import { isUuid, storableText } from '@kairos/domain';

// int8 columns (epochs, durations in ms, counts) all fit in a double; read them as numbers.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value));

export type Db = pg.Pool;
export type Tx = pg.PoolClient;
export type Queryable = pg.Pool | pg.ClientBase;

export interface PoolOptions {
  connectionString: string;
  max?: number;
  applicationName?: string;
  /** Session settings for every connection of the pool (`-c name=value`). */
  settings?: Record<string, string>;
}

/**
 * A client for a transaction-mode pooler (PgBouncer and the like): each statement may reach another
 * server session, where a named prepared statement of an earlier one does not exist (or another
 * client's of the same name does). Its statements drop their names and go unnamed, which Postgres
 * parses within the one round trip.
 */
class PooledClient extends pg.Client {
  override query(...args: unknown[]): never {
    const [config] = args;
    if (typeof config === 'object' && config !== null && 'name' in config && 'text' in config) {
      const { name: _name, ...unnamed } = config as { name?: string };
      args[0] = unnamed;
    }
    return (pg.Client.prototype.query as (...a: unknown[]) => never).apply(this, args);
  }
}

/**
 * A pool on `connectionString`. When the URL is a pooler's (`?pgbouncer=true`, see
 * isPooledDatabaseUrl), its connections keep no session state: statements go unnamed, and the
 * pool's settings must be set per transaction instead (a pooler drops startup options).
 */
export function createPool(options: PoolOptions): Db {
  const pooled = isPooledDatabaseUrl(options.connectionString);
  if (pooled && options.settings) throw new TypeError('a pooler drops session settings: set them per transaction (SET LOCAL)');
  const pool = new pg.Pool({
    ...(pooled && { Client: PooledClient }),
    connectionString: options.connectionString,
    max: options.max ?? 10,
    application_name: options.applicationName ?? 'kairos',
    connectionTimeoutMillis: 10_000,
    idleTimeoutMillis: 30_000,
    ...(options.settings && { options: Object.entries(options.settings).map(([k, v]) => `-c ${k}=${v}`).join(' ') }),
  });
  // An idle client that loses its connection must not crash the process; the next query reconnects.
  pool.on('error', () => undefined);
  return pool;
}

/**
 * A `uuid[]` parameter written as Postgres's array literal. The driver's own array encoding
 * escapes every element, which on the worker's batches costs more than the rest of the statement;
 * each id is checked to be a UUID, so nothing else can reach the literal.
 */
export function uuidArray(ids: readonly string[]): string {
  for (const id of ids) if (!isUuid(id)) throw new TypeError(`not a UUID: ${JSON.stringify(id)}`);
  return `{${ids.join(',')}}`;
}

/**
 * A batch statement takes its rows as one JSON parameter, read with `json_to_recordset`. Postgres
 * turns each string of that document into text, so a JSON field goes in as its own JSON text and
 * is cast in SQL: `jsonText` for a json column, stored exactly as given whatever its strings hold;
 * `jsonbText` for a jsonb column. Free text goes through `storableText`.
 */
export function jsonText(value: unknown): string | null {
  return value === null || value === undefined ? null : JSON.stringify(value);
}

/**
 * A JSON field of a batch row bound for a jsonb column. Its strings (a handler's error message, an
 * HTTP response) get U+FFFD for what jsonb refuses, which would otherwise fail the whole batch.
 */
export function jsonbText(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  // JSON.stringify writes a NUL or an unpaired surrogate as a \u escape: without one, every string
  // is storable already, and the replacer (which made each row's target and retry cost several µs) is not needed.
  const json = JSON.stringify(value);
  return json === undefined || !json.includes('\\u') ? json : JSON.stringify(value, (_key, v: unknown) => (typeof v === 'string' ? storableText(v) : v));
}

/**
 * Runs `work` on one connection checked out of the pool. A connection that ends while it is out
 * (a restarted server or pooler, a terminated backend) makes the client emit 'error' whether or not
 * a statement is running, which with no listener would end the process: here it is noted, the
 * statement in flight fails as usual, and the connection is discarded rather than returned.
 */
export async function withConnection<T>(db: Db, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await db.connect();
  let broken: Error | undefined;
  const onError = (error: Error): void => {
    broken = error;
  };
  client.on('error', onError);
  try {
    return await work(client);
  } finally {
    client.removeListener('error', onError);
    client.release(broken);
  }
}

/**
 * Runs `work` inside BEGIN ... COMMIT on one pooled connection (see withConnection), rolling back
 * on any error. The callback must do database work only: no network or Redis I/O while the
 * transaction holds locks.
 */
export async function inTransaction<T>(db: Db, work: (tx: Tx) => Promise<T>): Promise<T> {
  return withConnection(db, async (client) => {
    try {
      await client.query('BEGIN');
      const result = await work(client);
      await client.query('COMMIT');
      return result;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    }
  });
}

/** The Postgres error code of a failed query (`23505` unique violation, ...), if it is one. */
export function pgErrorCode(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'code' in error && typeof error.code === 'string'
    ? error.code
    : undefined;
}

export function pgConstraint(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'constraint' in error && typeof error.constraint === 'string'
    ? error.constraint
    : undefined;
}

/**
 * Errors Postgres raises to break a lock cycle (40P01) or a serialization conflict (40001): the
 * statement was rolled back whole, and running it again is safe.
 */
const TRANSIENT_CODES = new Set(['40P01', '40001']);

/**
 * Runs `work` (one autocommitted statement, or a whole transaction) again when Postgres rolled it
 * back as a deadlock victim or for a serialization conflict, up to `attempts` times in all, after a
 * short jittered pause so the transactions that collided do not collide again.
 */
export async function retryTransient<T>(work: () => Promise<T>, attempts = 3): Promise<T> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await work();
    } catch (error) {
      if (attempt >= attempts || !TRANSIENT_CODES.has(pgErrorCode(error) ?? '')) throw error;
      await new Promise((resolve) => setTimeout(resolve, attempt * 10 + Math.random() * 20));
    }
  }
}

/** Socket-level failures, and the SQLSTATEs of a server (or pooler) that ended or refused the session (53300: too many clients). */
const UNREACHABLE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENOTFOUND', 'EAI_AGAIN', '57P01', '57P02', '57P03', '53300']);
const UNREACHABLE_MESSAGES = /connection terminated|not queryable|timeout exceeded when trying to connect|connection ended|server closed the connection/i;

/**
 * Whether a statement failed because Postgres could not be reached or dropped the session (a
 * restart, a pooler that dropped its connections), rather than because of what it asked: the
 * same statement may succeed once Postgres answers again.
 */
export function isUnreachable(error: unknown): boolean {
  const code = pgErrorCode(error) ?? '';
  if (UNREACHABLE_CODES.has(code) || code.startsWith('08')) return true;
  return code === '' && error instanceof Error && UNREACHABLE_MESSAGES.test(error.message);
}

/**
 * Runs `work` again while Postgres cannot be reached, after 100 ms doubling to a second, until
 * `forMs` have passed; any other failure, or the last one, is thrown. For writes that must not be
 * given up over a short outage (a worker's verdicts: given up, its run would be executed again),
 * and that are safe to send twice.
 */
export async function retryUnreachable<T>(work: () => Promise<T>, forMs: number): Promise<T> {
  const deadline = performance.now() + forMs;
  for (let pauseMs = 100; ; pauseMs = Math.min(1_000, pauseMs * 2)) {
    try {
      return await work();
    } catch (error) {
      if (!isUnreachable(error) || performance.now() + pauseMs > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, pauseMs));
    }
  }
}
