/**
 * Opening the ledger at process start: create the database when it does not exist yet, apply
 * migrations, and turn connection failures into one line an operator can act on.
 */
import pg from 'pg';
import { createPool, pgErrorCode, withConnection, type Db } from './database.js';
import { defaultMigrationsDir, migrate, readMigrations, type MigrationResult } from './migrations/migrator.js';

/** Postgres could not be reached or used; the message says where and what to do. */
export class LedgerUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'LedgerUnavailableError';
  }
}

export interface OpenedLedger {
  db: Db;
  migrations: MigrationResult;
}

export async function openLedger(options: {
  databaseUrl: string;
  /** Postgres itself when `databaseUrl` is a pooler's (a pooler cannot create the database); null to use `databaseUrl`. */
  directUrl?: string | null;
  poolSize: number;
  applicationName: string;
  migrationsDir?: string;
}): Promise<OpenedLedger> {
  await ensureDatabase(options.directUrl ?? options.databaseUrl);
  const db = createPool({ connectionString: options.databaseUrl, max: options.poolSize, applicationName: options.applicationName });
  try {
    const migrations = await withConnection(db, (client) => migrate(client, readMigrations(options.migrationsDir ?? defaultMigrationsDir())));
    return { db, migrations };
  } catch (error) {
    await db.end().catch(() => undefined);
    throw explain(error, options.databaseUrl);
  }
}

/** Connects once and closes, turning any failure into a LedgerUnavailableError that says what to do. */
export async function assertReachable(databaseUrl: string): Promise<void> {
  const probe = new pg.Client({ connectionString: databaseUrl, connectionTimeoutMillis: 5_000 });
  try {
    await probe.connect();
  } catch (error) {
    throw explain(error, databaseUrl);
  } finally {
    await probe.end().catch(() => undefined);
  }
}

/** Creates the database named in the URL when the server has no such database yet. */
export async function ensureDatabase(databaseUrl: string): Promise<void> {
  const probe = new pg.Client({ connectionString: databaseUrl, connectionTimeoutMillis: 5_000 });
  try {
    await probe.connect();
    await probe.end();
    return;
  } catch (error) {
    await probe.end().catch(() => undefined);
    if (pgErrorCode(error) !== '3D000') throw explain(error, databaseUrl);
  }
  const url = new URL(databaseUrl);
  const name = decodeURIComponent(url.pathname.slice(1));
  url.pathname = '/postgres';
  const admin = new pg.Client({ connectionString: url.toString(), connectionTimeoutMillis: 5_000 });
  // A connection that drops mid-statement fails the statement; its 'error' event must not end the process.
  admin.on('error', () => undefined);
  try {
    await admin.connect();
    await admin.query(`CREATE DATABASE ${pg.escapeIdentifier(name)}`);
  } catch (error) {
    // Another process creating it at the same moment is fine.
    if (pgErrorCode(error) !== '42P04') throw explain(error, databaseUrl);
  } finally {
    await admin.end().catch(() => undefined);
  }
}

function explain(error: unknown, databaseUrl: string): Error {
  if (error instanceof LedgerUnavailableError || (error instanceof Error && error.name === 'MigrationError')) return error;
  const url = new URL(databaseUrl);
  const where = `${url.hostname}:${url.port || 5432}`;
  const code = pgErrorCode(error);
  const message = error instanceof Error ? error.message : String(error);
  if (code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'ETIMEDOUT' || code === 'EAI_AGAIN' || /timeout/i.test(message)) {
    return new LedgerUnavailableError(
      `cannot reach Postgres at ${where} (${code ?? message}); start Postgres or point DATABASE_URL at a running server`,
    );
  }
  if (code === '3D000') {
    return new LedgerUnavailableError(`Postgres at ${where} has no database ${url.pathname.slice(1)}; start Kairos once (or run kairos migrate) to create it`);
  }
  if (code === '28P01' || code === '28000') {
    return new LedgerUnavailableError(`Postgres at ${where} refused the credentials in DATABASE_URL (${message})`);
  }
  return new LedgerUnavailableError(`Postgres at ${where}: ${message}`);
}
