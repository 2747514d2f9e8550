/**
 * Migration 0003 (the `auto` DST policy) on a ledger that already holds schedules: the rows keep
 * the policy they were stored with, and only schedules written afterwards get the new default.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import pg from 'pg';
import { defaultMigrationsDir, migrate, readMigrations } from '@kairos/ledger';
import { createDatabase, databaseUrl, dropDatabase, uniqueName } from '../support/services.js';

const AUTO_MIGRATION = '0003_dst_auto';

describe('migration 0003: dst auto', () => {
  let name: string;
  let client: pg.Client;

  /** A cron schedule row in the default namespace; dst columns only when given. */
  const insertSchedule = async (scheduleName: string, dst?: { gap: string; overlap: string }): Promise<void> => {
    const columns = dst ? ', dst_gap, dst_overlap' : '';
    const values = dst ? ', $3, $4' : '';
    await client.query(
      `INSERT INTO schedules (id, namespace_id, name, kind, cron, target, retry, timeout_ms, spec_hash, next_fire_at${columns})
       SELECT gen_random_uuid(), id, $1, 'cron', $2, '{"type":"handler","name":"noop"}', '{}', 60000, 'h', now()${values}
       FROM namespaces WHERE name = 'default'`,
      [scheduleName, '0 * * * *', ...(dst ? [dst.gap, dst.overlap] : [])],
    );
  };
  const dstOf = async (scheduleName: string) =>
    (await client.query('SELECT dst_gap AS gap, dst_overlap AS overlap FROM schedules WHERE name = $1', [scheduleName])).rows[0];

  beforeEach(async () => {
    name = uniqueName('kairos_dst');
    await createDatabase(name);
    client = new pg.Client({ connectionString: databaseUrl(name) });
    await client.connect();
  });

  afterEach(async () => {
    await client.end();
    await dropDatabase(name);
  });

  it('keeps every stored policy, admits auto and makes it the default for new rows', async () => {
    const all = readMigrations(defaultMigrationsDir());
    expect(all.map((m) => m.version)).toContain(AUTO_MIGRATION);
    await migrate(client, all.filter((m) => m.version < AUTO_MIGRATION));

    // Before 0003: a definition without dst was stored with the default of its day.
    await insertSchedule('implicit-default');
    await insertSchedule('explicit-skip-both', { gap: 'skip', overlap: 'both' });
    await insertSchedule('explicit-shift-last', { gap: 'shift', overlap: 'last' });
    await expect(insertSchedule('too-early', { gap: 'auto', overlap: 'auto' })).rejects.toThrow(/schedules_dst_gap_check/);

    expect((await migrate(client, all)).applied).toContain(AUTO_MIGRATION);

    expect(await dstOf('implicit-default')).toEqual({ gap: 'shift', overlap: 'first' });
    expect(await dstOf('explicit-skip-both')).toEqual({ gap: 'skip', overlap: 'both' });
    expect(await dstOf('explicit-shift-last')).toEqual({ gap: 'shift', overlap: 'last' });

    await insertSchedule('after-default');
    expect(await dstOf('after-default')).toEqual({ gap: 'auto', overlap: 'auto' });
    await insertSchedule('after-auto-gap', { gap: 'auto', overlap: 'first' });
    expect(await dstOf('after-auto-gap')).toEqual({ gap: 'auto', overlap: 'first' });
    await expect(insertSchedule('unknown-gap', { gap: 'later', overlap: 'auto' })).rejects.toThrow(/schedules_dst_gap_check/);
    await expect(insertSchedule('unknown-overlap', { gap: 'auto', overlap: 'middle' })).rejects.toThrow(/schedules_dst_overlap_check/);
  });
});
