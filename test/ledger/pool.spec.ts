/** Connection pools: session settings reach every connection a pool opens, and only that pool's. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPool, type Db } from '@kairos/ledger';
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
