/**
 * Connection pools: session settings reach every connection a pool opens, and only that pool's.
 * And the uuid[] literal the hot path's batches pass instead of the driver's array encoding.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '@kairos/domain';
import { createPool, uuidArray, type Db } from '@kairos/ledger';
import { useTestEnvironment } from '../support/kairos.js';

describe('createPool', () => {
  let keyLookups: Db;

  const t = useTestEnvironment();

  beforeAll(async () => {
    keyLookups = createPool({ connectionString: t.databaseUrl, max: 2, settings: { enable_seqscan: 'off', statement_timeout: '5s' } });
  });

  afterAll(async () => {
    await keyLookups?.end();
  });

  it('applies its session settings to every connection it opens', async () => {
    const [a, b] = await Promise.all([keyLookups.connect(), keyLookups.connect()]);
    try {
      for (const client of [a, b]) {
        expect((await client.query('SHOW enable_seqscan')).rows[0].enable_seqscan).toBe('off');
        expect((await client.query('SHOW statement_timeout')).rows[0].statement_timeout).toBe('5s');
      }
      expect((await a.query('SELECT pg_backend_pid() AS pid')).rows[0].pid).not.toBe((await b.query('SELECT pg_backend_pid() AS pid')).rows[0].pid);
    } finally {
      a.release();
      b.release();
    }
    expect((await t.db.query('SHOW enable_seqscan')).rows[0].enable_seqscan).toBe('on');
  });
});

describe('uuidArray', () => {
  const t = useTestEnvironment();

  it.each([0, 1, 3, 256])('reads back as the same %i ids, in order', async (n) => {
    const ids = Array.from({ length: n }, (_, i) => newId(Date.now() + i));
    const { rows } = await t.db.query<{ ids: string[] }>('SELECT $1::uuid[] AS ids', [uuidArray(ids)]);
    expect(rows[0]!.ids).toEqual(ids);
  });

  it.each(['', 'not-a-uuid', '0190a6c2-0000-7000-8000-000000000000,0190a6c2-0000-7000-8000-000000000001', '{0190a6c2-0000-7000-8000-000000000000}', '"x"'])(
    'refuses %j before it reaches Postgres',
    (bad) => {
      expect(() => uuidArray([newId(), bad])).toThrow(TypeError);
    },
  );
});
