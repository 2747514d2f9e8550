/**
 * Once per integration project: a template database with every migration applied. Each test file
 * clones it (CREATE DATABASE ... TEMPLATE), so files never see each other's rows, also when they
 * run at the same time; all are dropped at the end. And the build the spawned processes start
 * from, made when it is older than the sources (see build.ts).
 */
import type { TestProject } from 'vitest/node';
import pg from 'pg';
import { runMigrations } from 'bullmq';
import { TRANSPORT_SCHEMA } from '@kairos/config';
import { defaultMigrationsDir, migrate, readMigrations } from '@kairos/ledger';
import { ensureBuilt } from './build.js';
import { ADMIN_DATABASE_URL, createDatabase, databaseUrl, dropDatabase, uniqueName } from './services.js';

declare module 'vitest' {
  export interface ProvidedContext {
    templateDatabase: string;
    runId: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  await ensureBuilt();
  const runId = uniqueName('kairos_test');
  const template = `${runId}_tpl`;
  await createDatabase(template);
  const client = new pg.Client({ connectionString: databaseUrl(template) });
  await client.connect();
  try {
    await migrate(client, readMigrations(defaultMigrationsDir()));
    // The Postgres transport's schema too, so each test database does not create it again.
    if (project.config.env?.KAIROS_TEST_TRANSPORT === 'postgres') await runMigrations(client, TRANSPORT_SCHEMA);
  } finally {
    await client.end();
  }
  project.provide('templateDatabase', template);
  project.provide('runId', runId);
  return async () => {
    const admin = new pg.Client({ connectionString: ADMIN_DATABASE_URL });
    await admin.connect();
    const { rows } = await admin.query<{ datname: string }>(`SELECT datname FROM pg_database WHERE datname LIKE $1`, [`${runId}%`]);
    await admin.end();
    for (const { datname } of rows) await dropDatabase(datname);
  };
}
