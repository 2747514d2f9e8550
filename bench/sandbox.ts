/**
 * What every bench scenario shares: a fresh database and Redis prefix per phase, waiting,
 * percentiles and the table printer.
 */
import pg from 'pg';
import { deleteKeysWithPrefix } from '@kairos/queue';

export const ADMIN_URL = process.env.KAIROS_BENCH_ADMIN_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

export interface Sandbox {
  name: string;
  url: string;
  prefix: string;
  db: pg.Pool;
  drop(): Promise<void>;
}

export async function admin(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/**
 * A fresh database (a copy of `template` when given, which must have no connections) and Redis
 * prefix; on the Postgres transport the queues live in the database, so there are no keys to drop.
 */
export async function sandbox(label: string, template?: string, transport: 'redis' | 'postgres' = 'redis'): Promise<Sandbox> {
  const name = `kairos_bench_${label}_${Date.now().toString(36)}`;
  await admin(`CREATE DATABASE ${name}${template ? ` TEMPLATE ${template}` : ''}`);
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  const db = new pg.Pool({ connectionString: url.toString(), max: 4 });
  // DROP DATABASE ... WITH (FORCE) may still find a connection the pool is closing.
  db.on('error', () => undefined);
  return {
    name,
    url: url.toString(),
    prefix: `kb-${name}`,
    db,
    drop: async () => {
      // A template's pool is closed before it is copied.
      if (!db.ended) await db.end();
      await admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      if (transport === 'redis') await deleteKeysWithPrefix(REDIS_URL, `kb-${name}`);
    },
  };
}

export async function until(probe: () => Promise<boolean>, timeoutMs: number, what: string, intervalMs = 50): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`bench: timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** The p-th percentile of ascending `sorted`. */
export const percentile = (sorted: readonly number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;

export const median = (values: readonly number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

export const fmt = (n: number, digits = 0): string => n.toFixed(digits);

/** Prints rows as aligned columns, the first row as the header. */
export function printTable(rows: string[][]): void {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  process.stdout.write(`\n${rows.map((r) => r.map((c, i) => c.padEnd(widths[i]!)).join('  ')).join('\n')}\n\n`);
}
