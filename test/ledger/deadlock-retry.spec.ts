/**
 * A worker's verdict batch locks many runs in one statement; a transaction that locks two of the
 * same runs in the other order makes a lock cycle, and Postgres rolls one of them back. Shown on
 * real locks: the batch alone fails with 40P01, and under retryTransient it is written.
 */
import { describe, expect, it } from 'vitest';
import { createPool, pgErrorCode, retryTransient } from '@kairos/ledger';
import { api, useKairos, waitFor } from '../support/kairos.js';
import { WorkerProtocol, type ClaimResult, type FinalVerdict } from '../../packages/sdk/src/worker/worker-protocol.js';

describe('a verdict batch caught in a deadlock', () => {
  const leases = new WorkerProtocol();
  const { t, kairos } = useKairos({ roles: ['api'] });
  const verdict: FinalVerdict = { state: 'succeeded', result: null, error: null, reasonCode: 'SUCCEEDED', reasonText: null, response: null };

  /** Two ad-hoc runs claimed by worker-a, never dispatched. */
  async function claimedPair(): Promise<[string, string]> {
    const client = api(kairos.url);
    const ids: string[] = [];
    for (let i = 0; i < 2; i += 1) {
      const created = await client.post('/v1/runs', { target: { type: 'handler', name: 'noop' }, availableAt: '2999-01-01T00:00:00Z' });
      ids.push(created.body.id);
    }
    await t.db.query(`UPDATE runs SET available_at = now() WHERE id = ANY($1::uuid[])`, [ids]);
    const claimed = await leases.claimMany(t.db, ids, 'worker-a', 60_000);
    expect(claimed.map((c: ClaimResult) => c.kind)).toEqual(['claimed', 'claimed']);
    return ids as [string, string];
  }

  /**
   * Runs `batch` (a verdict for [a, b], which locks a then b) against a transaction that holds b and
   * then asks for a. The transaction waits 10 s before it checks for a cycle, the batch's session the
   * default 1 s, so the batch is the one Postgres rolls back.
   */
  async function collide<T>(batch: () => Promise<T>, [a, b]: [string, string]): Promise<PromiseSettledResult<T>> {
    const other = await t.db.connect();
    try {
      await other.query(`BEGIN`);
      await other.query(`SET LOCAL deadlock_timeout = '10s'`);
      await other.query(`UPDATE runs SET updated_at = now() WHERE id = $1`, [b]);
      const outcome = batch().then(
        (value) => ({ status: 'fulfilled', value }) as const,
        (reason: unknown) => ({ status: 'rejected', reason }) as const,
      );
      await waitFor(async () => {
        const { rows } = await t.db.query(`SELECT count(*)::int AS n FROM pg_locks WHERE NOT granted AND locktype = 'transactionid'`);
        return rows[0].n > 0 ? true : undefined;
      }, 'the batch to wait for the run the transaction holds');
      await other.query(`UPDATE runs SET updated_at = now() WHERE id = $1`, [a]);
      await other.query(`COMMIT`);
      return await outcome;
    } finally {
      other.release();
    }
  }

  it('fails the batch with 40P01 on its own, and writes every verdict under retryTransient', async () => {
    // Index lookups in the array's order, as on the worker's batch connections.
    const pool = createPool({ connectionString: t.databaseUrl, max: 2, settings: { enable_seqscan: 'off' } });
    try {
      const first = await claimedPair();
      const alone = await collide(() => leases.finishMany(pool, 'worker-a', first.map((runId) => ({ runId, epoch: 1, verdict }))), first);
      expect(alone.status).toBe('rejected');
      expect(pgErrorCode((alone as PromiseRejectedResult).reason)).toBe('40P01');
      const states = (await t.db.query(`SELECT state FROM runs WHERE id = ANY($1::uuid[])`, [first])).rows.map((r) => r.state);
      expect(states).toEqual(['running', 'running']);

      const second = await claimedPair();
      const retried = await collide(() => retryTransient(() => leases.finishMany(pool, 'worker-a', second.map((runId) => ({ runId, epoch: 1, verdict })))), second);
      expect(retried).toEqual({ status: 'fulfilled', value: { written: new Set(second), released: [] } });
      const after = (await t.db.query(`SELECT state FROM runs WHERE id = ANY($1::uuid[])`, [second])).rows.map((r) => r.state);
      expect(after).toEqual(['succeeded', 'succeeded']);
    } finally {
      await pool.end();
    }
  });

  it('passes other errors through at once', async () => {
    let calls = 0;
    const failure = Object.assign(new Error('duplicate key'), { code: '23505' });
    await expect(
      retryTransient(async () => {
        calls += 1;
        throw failure;
      }),
    ).rejects.toBe(failure);
    expect(calls).toBe(1);
  });

  it('gives up after the attempts it was given', async () => {
    let calls = 0;
    const deadlock = Object.assign(new Error('deadlock detected'), { code: '40P01' });
    await expect(
      retryTransient(async () => {
        calls += 1;
        throw deadlock;
      }, 3),
    ).rejects.toBe(deadlock);
    expect(calls).toBe(3);
  });
});
