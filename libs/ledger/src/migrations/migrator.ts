/**
 * Kairos's own migration runner. Forward only: the SQL files under prisma/migrations/<version>/
 * migration.sql are applied in lexical order, each in its own transaction, each pinned by its
 * sha256 in kairos_migrations. Every process runs it at start; each transaction takes a
 * transaction-scoped advisory lock first and reads what is applied under it, so concurrent starts
 * apply each file once, and no lock outlives its transaction: migrations run as well through a
 * transaction-mode pooler as on Postgres itself. It refuses to run against a database whose applied
 * files were edited, or which holds migrations this build does not know.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type pg from 'pg';

/** Arbitrary, fixed: the key every Kairos process locks on while migrating. */
const MIGRATION_LOCK_KEY = 7_236_189_011;

export interface MigrationFile {
  version: string;
  sql: string;
  checksum: string;
}

export interface MigrationResult {
  applied: string[];
  alreadyApplied: string[];
}

/** A migration problem that needs a human: the message says which file and what to do. */
export class MigrationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MigrationError';
  }
}

/** prisma/migrations, found by walking up from this module (it sits at a different depth in src and dist). */
export function defaultMigrationsDir(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = join(dir, 'prisma', 'migrations');
    if (existsSync(candidate)) return candidate;
    const parent = dirname(dir);
    if (parent === dir) throw new MigrationError('cannot find prisma/migrations above ' + fileURLToPath(import.meta.url));
    dir = parent;
  }
}

export function readMigrations(dir: string): MigrationFile[] {
  return readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && existsSync(join(dir, entry.name, 'migration.sql')))
    .map((entry) => entry.name)
    .sort()
    .map((version) => {
      const sql = readFileSync(join(dir, version, 'migration.sql'), 'utf8');
      return { version, sql, checksum: createHash('sha256').update(sql).digest('hex') };
    });
}

export async function migrate(client: pg.ClientBase, files: MigrationFile[]): Promise<MigrationResult> {
  const known = new Set(files.map((f) => f.version));
  await locked(client, async () => {
    await client.query(`
      CREATE TABLE IF NOT EXISTS kairos_migrations (
        version     text PRIMARY KEY,
        checksum    text NOT NULL,
        applied_at  timestamptz NOT NULL DEFAULT now(),
        duration_ms integer NOT NULL
      )`);
    for (const version of (await appliedMigrations(client)).keys()) {
      if (!known.has(version)) {
        throw new MigrationError(
          `the database has migration ${version} applied, which this build of Kairos does not have; run a build that includes it`,
        );
      }
    }
  });
  const result: MigrationResult = { applied: [], alreadyApplied: [] };
  for (const file of files) {
    const appliedNow = await locked(client, async () => {
      const applied = await appliedMigrations(client);
      const recorded = applied.get(file.version);
      if (recorded !== undefined) {
        if (recorded !== file.checksum) {
          throw new MigrationError(
            `migration ${file.version} was edited after it was applied (recorded sha256 ${recorded}, file now ${file.checksum}); ` +
              'restore the applied file and put the change in a new migration',
          );
        }
        return false;
      }
      const lastApplied = [...applied.keys()].at(-1);
      if (lastApplied !== undefined && file.version < lastApplied) {
        throw new MigrationError(
          `migration ${file.version} sorts before the already applied ${lastApplied}; migrations are forward only, give it a later version`,
        );
      }
      const started = Date.now();
      try {
        await client.query(file.sql);
      } catch (error) {
        throw new MigrationError(`migration ${file.version} failed: ${(error as Error).message}`);
      }
      await client.query('INSERT INTO kairos_migrations (version, checksum, duration_ms) VALUES ($1, $2, $3)', [file.version, file.checksum, Date.now() - started]);
      return true;
    });
    (appliedNow ? result.applied : result.alreadyApplied).push(file.version);
  }
  return result;
}

/** The applied versions and their checksums, in version order. */
async function appliedMigrations(client: pg.ClientBase): Promise<Map<string, string>> {
  const { rows } = await client.query<{ version: string; checksum: string }>('SELECT version, checksum FROM kairos_migrations ORDER BY version');
  return new Map(rows.map((r) => [r.version, r.checksum]));
}

/** Runs `work` in a transaction that holds the migration lock until it ends (commit, or rollback on error). */
async function locked<T>(client: pg.ClientBase, work: () => Promise<T>): Promise<T> {
  await client.query('BEGIN');
  try {
    await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK_KEY]);
    const result = await work();
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}
