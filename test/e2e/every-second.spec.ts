/**
 * A schedule firing every second for 10 s, all roles in one process: one tick per slot, one
 * succeeded run per tick, and the echo result byte-for-byte equal to the payload.
 */
import { describe, expect, it } from 'vitest';
import { api, sleep, useKairos, waitFor } from '../support/kairos.js';

describe('a schedule firing every second', () => {
  const { t, kairos } = useKairos();

  it('fires each slot once and records one succeeded run per tick', async () => {
    const client = api(kairos.url);
    const payload = { zeta: 1, alpha: [1, 2.5, 'three'], nested: { b: null, a: true }, unicode: 'Καιρός ✓' };
    const created = await client.post('/v1/schedules', { name: 'every-second', every: '1s', target: { type: 'handler', name: 'echo' }, payload });
    expect(created.status).toBe(201);
    const id = created.body.id as string;

    // The window the schedule is watched over: about ten slots.
    await sleep(10_000);
    await client.post(`/v1/schedules/${id}/pause`);
    const lastSlot = new Date((await t.db.query('SELECT max(scheduled_for) AS m FROM ticks WHERE schedule_id = $1', [id])).rows[0].m);
    await waitFor(async () => {
      const { rows } = await t.db.query(`SELECT count(*)::int AS n FROM runs WHERE schedule_id = $1 AND state IN ('queued', 'running')`, [id]);
      return rows[0].n === 0 ? true : undefined;
    }, 'the last runs to finish');

    const ticks = (await t.db.query('SELECT scheduled_for, outcome, run_id FROM ticks WHERE schedule_id = $1 ORDER BY scheduled_for', [id])).rows;
    expect(ticks.length).toBeGreaterThanOrEqual(9);
    expect(ticks.length).toBeLessThanOrEqual(11);
    // Slots are exactly one second apart, starting one second after creation: none skipped, none doubled.
    const createdAt = Date.parse(created.body.createdAt);
    ticks.forEach((tick, i) => {
      expect(tick.outcome).toBe('triggered');
      expect(new Date(tick.scheduled_for).getTime()).toBe(createdAt + (i + 1) * 1000);
    });
    expect(new Date(ticks.at(-1)!.scheduled_for).getTime()).toBe(lastSlot.getTime());

    // A run made ahead (lookahead) for a slot after the pause was withdrawn with its tick.
    const all = (await client.get(`/v1/runs?scheduleId=${id}&limit=100`)).body.items as any[];
    const withdrawn = all.filter((r) => r.reasonCode === 'SCHEDULE_PAUSED');
    expect(withdrawn.every((r) => r.state === 'cancelled' && r.startedAt === null && Date.parse(r.scheduledFor) > lastSlot.getTime())).toBe(true);
    const runs = all.filter((r) => r.reasonCode !== 'SCHEDULE_PAUSED');
    expect(runs).toHaveLength(ticks.length);
    expect(new Set(runs.map((r) => r.id))).toEqual(new Set(ticks.map((tk) => tk.run_id)));
    for (const run of runs) {
      expect(run.state).toBe('succeeded');
      expect(run.reasonCode).toBe('SUCCEEDED');
      expect(JSON.stringify(run.payload)).toBe(JSON.stringify(payload));
      expect(JSON.stringify(run.result)).toBe(JSON.stringify(payload));
      // Fired close to its slot: the run started within a second of it.
      expect(Date.parse(run.startedAt) - Date.parse(run.scheduledFor)).toBeLessThan(1_000);
    }
  });
});
