/**
 * Overlap policies with a handler that outlives the interval: a run sleeps 2.5 s while its
 * schedule fires every second. Each policy is checked in the ticks and in the runs' own history.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { RunRepository } from '@kairos/ledger';
import { useKairos, waitFor } from '../support/kairos.js';

describe('overlap policies', () => {
  const ids: Record<string, string> = {};

  // Lease renewal every 500 ms carries cancellations (replace) to the worker quickly.
  const { t, client } = useKairos({ env: { KAIROS_RUN_LEASE_TTL: '1500ms' } });

  beforeAll(async () => {
    for (const overlap of ['allow', 'skip', 'buffer_one', 'buffer_all', 'replace']) {
      const created = await client.post('/v1/schedules', {
        name: `overlap-${overlap}`,
        every: '1s',
        overlap,
        target: { type: 'handler', name: 'sleep' },
        payload: { ms: 2_500 },
      });
      expect(created.status).toBe(201);
      ids[overlap] = created.body.id;
    }
    // Until every policy has had slots enough to act: six fired slots where all fire, three
    // skipped or replaced where the active run blocks or yields, buffer_one both buffering and skipping.
    const outcomes = async (id: string): Promise<Record<string, number>> =>
      (await t.db.query(`SELECT reason_code AS reason, count(*)::int AS n FROM ticks WHERE schedule_id = $1 GROUP BY reason_code`, [id])).rows.reduce(
        (counts: Record<string, number>, r) => ({ ...counts, [r.reason]: r.n }),
        {},
      );
    await waitFor(
      async () => {
        const [allow, skip, one, all] = await Promise.all([ids.allow, ids.skip, ids.buffer_one, ids.buffer_all].map((id) => outcomes(id!)));
        const replaced = (await t.db.query(`SELECT count(*)::int AS n FROM runs WHERE schedule_id = $1 AND reason_code = 'REPLACED_BY_OVERLAP'`, [ids.replace])).rows[0].n;
        const fired = (counts: Record<string, number>) => Object.values(counts).reduce((a, b) => a + b, 0);
        return fired(allow!) >= 6 && (skip!.OVERLAP_SKIPPED ?? 0) >= 3 && one!.OVERLAP_BUFFERED && one!.OVERLAP_SKIPPED && fired(all!) >= 6 && replaced >= 3 ? true : undefined;
      },
      'every policy to act',
      30_000,
      250,
    );
    for (const id of Object.values(ids)) await client.post(`/v1/schedules/${id}/pause`);
    // Let everything still queued or running drain (buffer_all has a backlog of ~2.5 s per run).
    await waitFor(async () => {
      const { rows } = await t.db.query(`SELECT count(*)::int AS n FROM runs WHERE state IN ('queued', 'running')`);
      return rows[0].n === 0 ? true : undefined;
    }, 'all runs to end', 40_000, 250);
  }, 90_000);

  const ticks = async (id: string) =>
    (await t.db.query(`SELECT outcome, reason_code AS reason, run_id FROM ticks WHERE schedule_id = $1 ORDER BY scheduled_for`, [id])).rows;
  const runs = async (id: string) =>
    (
      await t.db.query(
        // Runs made ahead (lookahead) that the closing pause withdrew before their slot never belonged to a slot.
        `SELECT id, state, reason_code AS reason, started_at, finished_at FROM runs
         WHERE schedule_id = $1 AND reason_code IS DISTINCT FROM 'SCHEDULE_PAUSED' ORDER BY scheduled_for`,
        [id],
      )
    ).rows.map((r) => ({ ...r, started: r.started_at ? new Date(r.started_at).getTime() : null, finished: r.finished_at ? new Date(r.finished_at).getTime() : null }));
  /** The most runs that were executing at the same instant. */
  const maxConcurrent = (rs: { started: number | null; finished: number | null }[]) => {
    const edges = rs.filter((r) => r.started !== null).flatMap((r) => [[r.started!, 1] as const, [r.finished!, -1] as const]);
    edges.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
    let now = 0;
    let max = 0;
    for (const [, d] of edges) max = Math.max(max, (now += d));
    return max;
  };

  it('allow: every slot runs, and runs overlap', async () => {
    const tk = await ticks(ids.allow!);
    expect(tk.length).toBeGreaterThanOrEqual(6);
    expect(tk.every((x) => x.outcome === 'triggered')).toBe(true);
    const rs = await runs(ids.allow!);
    expect(rs.every((r) => r.state === 'succeeded')).toBe(true);
    expect(maxConcurrent(rs)).toBeGreaterThanOrEqual(2);
  });

  it('skip: slots that come due while a run is active are skipped with a reason', async () => {
    const tk = await ticks(ids.skip!);
    const skipped = tk.filter((x) => x.outcome === 'skipped');
    expect(skipped.length).toBeGreaterThanOrEqual(3);
    expect(skipped.every((x) => x.reason === 'OVERLAP_SKIPPED' && x.run_id === null)).toBe(true);
    const rs = await runs(ids.skip!);
    expect(rs.length).toBe(tk.filter((x) => x.outcome === 'triggered').length);
    expect(rs.every((r) => r.state === 'succeeded')).toBe(true);
    expect(maxConcurrent(rs)).toBe(1);
  });

  it('buffer_one: at most one run waits behind the active one; the rest are skipped', async () => {
    const tk = await ticks(ids.buffer_one!);
    expect(tk.some((x) => x.reason === 'OVERLAP_BUFFERED')).toBe(true);
    expect(tk.some((x) => x.reason === 'OVERLAP_SKIPPED')).toBe(true);
    const rs = await runs(ids.buffer_one!);
    expect(rs.every((r) => r.state === 'succeeded')).toBe(true);
    expect(maxConcurrent(rs)).toBe(1);
    const buffered = (await t.db.query(`SELECT defer_reason FROM runs WHERE schedule_id = $1 AND defer_reason LIKE 'waiting for run%'`, [ids.buffer_one])).rows;
    expect(buffered.length).toBeGreaterThanOrEqual(1);
  });

  it('buffer_all: every slot runs, one after another', async () => {
    const tk = await ticks(ids.buffer_all!);
    expect(tk.length).toBeGreaterThanOrEqual(6);
    expect(tk.every((x) => x.outcome === 'triggered')).toBe(true);
    const rs = await runs(ids.buffer_all!);
    expect(rs).toHaveLength(tk.length);
    expect(rs.every((r) => r.state === 'succeeded')).toBe(true);
    expect(maxConcurrent(rs)).toBe(1);
    // Released in slot order.
    const starts = rs.map((r) => r.started!);
    expect([...starts].sort((a, b) => a - b)).toEqual(starts);
  });

  it('replace: each new slot cancels the active run, which ends as REPLACED_BY_OVERLAP', async () => {
    const rs = await runs(ids.replace!);
    const replaced = rs.filter((r) => r.state === 'cancelled');
    expect(replaced.length).toBeGreaterThanOrEqual(3);
    expect(replaced.every((r) => r.reason === 'REPLACED_BY_OVERLAP')).toBe(true);
    expect(maxConcurrent(rs)).toBe(1);
    // The newest run was not replaced by anything and completed.
    expect(rs.at(-1)!.state).toBe('succeeded');
    const events = (await new RunRepository().events(t.db, replaced[0]!.id)).map((e) => e.kind);
    expect(events).toEqual(expect.arrayContaining(['queued', 'cancel_requested', 'cancelled']));
  });
});
