/**
 * The migration runner against a real Postgres: applies each file once, is idempotent, refuses an
 * edited applied file, refuses unknown applied versions, and two processes starting at once apply
 * each migration exactly once.
 */
import { mkdtempSync, mkdirSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import pg from 'pg';
import { MigrationError, migrate, readMigrations } from '@kairos/ledger';
import { builtMain } from '../support/build.js';
import { spawnProcess } from '../support/processes.js';
import { createDatabase, databaseUrl, dropDatabase, uniqueName } from '../support/services.js';

describe('the migration runner', () => {
  let name: string;
  let dir: string;
  let client: pg.Client;

  const write = (version: string, sql: string): void => {
    mkdirSync(join(dir, version), { recursive: true });
    writeFileSync(join(dir, version, 'migration.sql'), sql);
  };

  beforeEach(async () => {
    name = uniqueName('kairos_mig');
    await createDatabase(name);
    dir = mkdtempSync(join(tmpdir(), 'kairos-migrations-'));
    client = new pg.Client({ connectionString: databaseUrl(name) });
    await client.connect();
  });

  afterEach(async () => {
    await client.end();
    await dropDatabase(name);
    rmSync(dir, { recursive: true, force: true });
  });

  it('applies each migration once, in order, and is idempotent', async () => {
    write('0001_a', 'CREATE TABLE a (id int PRIMARY KEY);');
    write('0002_b', 'CREATE TABLE b (id int REFERENCES a (id));');
    expect(await migrate(client, readMigrations(dir))).toEqual({ applied: ['0001_a', '0002_b'], alreadyApplied: [] });
    expect(await migrate(client, readMigrations(dir))).toEqual({ applied: [], alreadyApplied: ['0001_a', '0002_b'] });
    write('0003_c', 'ALTER TABLE a ADD COLUMN c text;');
    expect((await migrate(client, readMigrations(dir))).applied).toEqual(['0003_c']);
    const { rows } = await client.query('SELECT version, length(checksum) AS len FROM kairos_migrations ORDER BY version');
    expect(rows).toEqual([
      { version: '0001_a', len: 64 },
      { version: '0002_b', len: 64 },
      { version: '0003_c', len: 64 },
    ]);
  });

  it('refuses to start when an applied migration was edited', async () => {
    write('0001_a', 'CREATE TABLE a (id int PRIMARY KEY);');
    await migrate(client, readMigrations(dir));
    write('0001_a', 'CREATE TABLE a (id bigint PRIMARY KEY);');
    write('0002_b', 'CREATE TABLE b (id int);');
    await expect(migrate(client, readMigrations(dir))).rejects.toThrow(/0001_a was edited after it was applied/);
    // Nothing after the refusal ran.
    expect((await client.query(`SELECT to_regclass('b') AS t`)).rows[0].t).toBeNull();
  });

  it('refuses a database that has migrations this build does not know', async () => {
    write('0001_a', 'CREATE TABLE a (id int);');
    write('0002_b', 'CREATE TABLE b (id int);');
    await migrate(client, readMigrations(dir));
    rmSync(join(dir, '0002_b'), { recursive: true });
    await expect(migrate(client, readMigrations(dir))).rejects.toBeInstanceOf(MigrationError);
  });

  it('refuses a new migration that sorts before an applied one', async () => {
    write('0002_b', 'CREATE TABLE b (id int);');
    await migrate(client, readMigrations(dir));
    write('0001_a', 'CREATE TABLE a (id int);');
    await expect(migrate(client, readMigrations(dir))).rejects.toThrow(/forward only/);
  });

  it('rolls a failing migration back whole and records nothing for it', async () => {
    write('0001_a', 'CREATE TABLE a (id int); SELECT 1 / 0;');
    await expect(migrate(client, readMigrations(dir))).rejects.toThrow(/0001_a failed/);
    expect((await client.query(`SELECT to_regclass('a') AS t`)).rows[0].t).toBeNull();
    expect((await client.query('SELECT count(*)::int AS n FROM kairos_migrations')).rows[0].n).toBe(0);
  });

  it('applies each migration exactly once when two processes start at the same moment', async () => {
    // Plain CREATE TABLE (no IF NOT EXISTS) fails if it runs twice; the slow one widens the race window.
    write('0001_a', 'CREATE TABLE a (id int); SELECT pg_sleep(0.5);');
    write('0002_b', 'CREATE TABLE b (id int);');
    const runOne = async () => {
      const child = spawnProcess(process.execPath, [builtMain('cli'), 'migrate'], {
        env: { ...process.env, DATABASE_URL: databaseUrl(name), KAIROS_MIGRATIONS_DIR: dir },
      });
      return { code: await child.exited, out: child.output() };
    };
    const results = await Promise.all([runOne(), runOne()]);
    expect(results.map((r) => r.code)).toEqual([0, 0]);
    const outputs = results.map((r) => r.out.trim()).sort();
    expect(outputs).toEqual(['applied 0001_a, 0002_b', 'the ledger is up to date']);
    expect((await client.query('SELECT count(*)::int AS n FROM kairos_migrations')).rows[0].n).toBe(2);
  });
});
