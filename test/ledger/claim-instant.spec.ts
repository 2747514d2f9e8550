/**
 * No run starts before its instant: a claim that takes a run a few milliseconds early (its delayed
 * job fired early by the worker's estimate of the database's clock) records the instant as the
 * run's start and answers only once the database's clock has passed it, so the handler starts
 * after it. A claim of runs already due does not wait.
 */
import { describe, expect, it } from 'vitest';
import { useKairos } from '../support/kairos.js';

describe('a claim before the instant', () => {
  const { t, client } = useKairos({ roles: ['api'] });
  const target = { type: 'http', url: 'https://example.com/job' };

  /** Claims the run through the worker protocol: the answer's rows, and when the claim returned by the database's clock. */
  async function claim(runId: string): Promise<{ claimed: number; answeredAt: Date; tookMs: number }> {
    const started = performance.now();
    const { rowCount } = await t.db.query(`SELECT * FROM kairos_worker.claim_runs_v2('claim-instant:1', ARRAY[$1]::uuid[], 30000)`, [runId]);
    const tookMs = performance.now() - started;
    const answeredAt = (await t.db.query<{ now: Date }>(`SELECT clock_timestamp() AS now`)).rows[0]!.now;
    return { claimed: rowCount ?? 0, answeredAt, tookMs };
  }

  it.each([5, 12, 19])('%i ms early: starts at its instant, and the claim answers after it', async (earlyMs) => {
    const run = (await client.post('/v1/runs', { target })).body;
    // Due `earlyMs` from now by the database's clock, within the claim's 20 ms tolerance.
    const { rows } = await t.db.query<{ due: Date }>(
      `UPDATE runs SET available_at = clock_timestamp() + $2 * interval '1 millisecond' WHERE id = $1 RETURNING available_at AS due`,
      [run.id, earlyMs],
    );
    const due = rows[0]!.due;
    const { claimed, answeredAt } = await claim(run.id);
    expect(claimed).toBe(1);
    const started = (await t.db.query<{ started: Date }>(`SELECT started_at AS started FROM runs WHERE id = $1`, [run.id])).rows[0]!.started;
    expect(started.getTime()).toBeGreaterThanOrEqual(due.getTime());
    expect(answeredAt.getTime()).toBeGreaterThanOrEqual(due.getTime());
  });

  it('claims a run already due without waiting, its start the claim', async () => {
    const run = (await client.post('/v1/runs', { target })).body;
    const { rows } = await t.db.query<{ due: Date }>(`UPDATE runs SET available_at = clock_timestamp() - interval '1 second' WHERE id = $1 RETURNING available_at AS due`, [run.id]);
    const { claimed, tookMs } = await claim(run.id);
    expect(claimed).toBe(1);
    const started = (await t.db.query<{ started: Date }>(`SELECT started_at AS started FROM runs WHERE id = $1`, [run.id])).rows[0]!.started;
    expect(started.getTime() - rows[0]!.due.getTime()).toBeGreaterThanOrEqual(1_000);
    expect(tookMs).toBeLessThan(1_000);
  });

  it('refuses a run due more than 20 ms from now, as before', async () => {
    const run = (await client.post('/v1/runs', { target })).body;
    await t.db.query(`UPDATE runs SET available_at = clock_timestamp() + interval '200 milliseconds' WHERE id = $1`, [run.id]);
    expect((await claim(run.id)).claimed).toBe(0);
  });
});
