/**
 * Catch-up after downtime and after a pause: stop the scheduler for five slots, restart it, and
 * check which slots of each schedule fired and which were recorded as missed, per mode, window and
 * limit. Slots are two seconds apart and aligned, and the restart lands between slots, so no slot
 * is on the boundary between "missed" and "on time".
 */
import { describe, expect, it } from 'vitest';
import { api, sleep, startInProcess, useKairos, waitFor } from '../support/kairos.js';

const SLOT = 2_000;
const sleepUntil = (at: number) => sleep(Math.max(0, at - Date.now()));

describe('catch-up', () => {
  const { t, kairos: apiAndWorker } = useKairos({ roles: ['api', 'worker'] });

  /** The ticks of a schedule up to and including the slot `last`, oldest first. */
  const ticksOf = async (id: string, last: number) =>
    (
      await t.db.query(`SELECT scheduled_for, outcome, reason_code FROM ticks WHERE schedule_id = $1 AND scheduled_for <= $2 ORDER BY scheduled_for`, [
        id,
        new Date(last),
      ])
    ).rows.map((r) => ({
      slot: new Date(r.scheduled_for).getTime(),
      outcome: r.outcome as string,
      reason: r.reason_code as string,
    }));
  /**
   * Waits until every schedule in `ids` has a tick for `slot`. A loaded machine can delay a tick
   * past the instant the test would otherwise read or stop the scheduler at.
   */
  const ticked = (ids: string[], slot: number) =>
    waitFor(async () => {
      const { rows } = await t.db.query(`SELECT count(*)::int AS n FROM ticks WHERE schedule_id = ANY($1::uuid[]) AND scheduled_for = $2`, [
        ids,
        new Date(slot),
      ]);
      return rows[0].n === ids.length ? true : undefined;
    }, `the slot ${new Date(slot).toISOString()} of every schedule to be ticked`);

  it('applies each policy to the slots that fell due while no scheduler ran', async () => {
    const client = api(apiAndWorker.url);
    // Without lookahead: a slot whose run was made ahead before the stop is committed and fires
    // through the outage, which would blur the gap this scenario checks slot by slot.
    const schedulerEnv = t.env({ KAIROS_LOOKAHEAD: '0s' });
    let scheduler = await startInProcess(schedulerEnv, ['scheduler']);
    // T0: an even second at least 3 s away, so creation is done before the first slot.
    const t0 = Math.ceil((Date.now() + 3_000) / SLOT) * SLOT;
    const base = { every: '2s', startAt: new Date(t0).toISOString(), target: { type: 'handler', name: 'noop' } };
    const policies = {
      none: { catchup: { mode: 'none' } },
      latest: {},
      all: { catchup: { mode: 'all' }, overlap: 'allow' },
      allLimit2: { catchup: { mode: 'all', limit: 2 }, overlap: 'allow' },
      allWindow4s: { catchup: { mode: 'all', window: '4s' }, overlap: 'allow' },
    };
    const ids: Record<string, string> = {};
    for (const [name, policy] of Object.entries(policies)) {
      const created = await client.post('/v1/schedules', { name, ...base, ...policy });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      expect(Date.parse(created.body.nextFireAt)).toBe(t0);
      ids[name] = created.body.id;
    }

    // Slots T0 and T0+2 s fire; the scheduler stops at T0+3 s, between slots.
    await sleepUntil(t0 + 3_000);
    await ticked(Object.values(ids), t0 + 2_000);
    await scheduler.app.close();
    // Down for the slots T0+4 .. T0+12; back at about T0+13 s, between slots.
    await sleepUntil(t0 + 12_700);
    scheduler = await startInProcess(schedulerEnv, ['scheduler']);
    const acquiredAt = await waitFor(async () => {
      const { rows } = await t.db.query(`SELECT acquired_at FROM leases WHERE name = 'scheduler' AND expires_at > now()`);
      return rows[0] ? new Date(rows[0].acquired_at).getTime() : undefined;
    }, 'the restarted scheduler to lead');
    expect(acquiredAt - t0, 'the restart must land between the slots T0+12 s and T0+14 s').toBeGreaterThan(12_200);
    expect(acquiredAt - t0).toBeLessThan(13_800);
    // The slots T0+14 s and T0+16 s fire on time; later ones are not part of the scenario.
    await ticked(Object.values(ids), t0 + 16_000);
    await scheduler.app.close();

    const gap = [4, 6, 8, 10, 12].map((s) => t0 + s * 1_000);
    const onTime = [0, 2, 14, 16].map((s) => t0 + s * 1_000);
    const fired = (slot: number) => ({ slot, outcome: 'triggered', reason: 'TRIGGERED' });
    const missed = (slot: number, reason: string) => ({ slot, outcome: 'missed', reason });
    const expected: Record<string, { slot: number; outcome: string; reason: string }[]> = {
      none: gap.map((s) => missed(s, 'CATCHUP_NONE')),
      latest: [...gap.slice(0, 4).map((s) => missed(s, 'CATCHUP_SUPERSEDED')), fired(gap[4]!)],
      all: gap.map(fired),
      allLimit2: [...gap.slice(0, 3).map((s) => missed(s, 'CATCHUP_LIMIT_EXCEEDED')), ...gap.slice(3).map(fired)],
      allWindow4s: [...gap.slice(0, 3).map((s) => missed(s, 'CATCHUP_WINDOW_MISSED')), ...gap.slice(3).map(fired)],
    };
    for (const [name, gapTicks] of Object.entries(expected)) {
      const ticks = await ticksOf(ids[name]!, t0 + 16_000);
      const all = [...onTime.map(fired), ...gapTicks].sort((a, b) => a.slot - b.slot);
      expect(ticks, name).toEqual(all);
    }

    // The downtime is on record as an outage.
    const outage = (await t.db.query(`SELECT started_at, ended_at, reason_code FROM outages ORDER BY id DESC LIMIT 1`)).rows[0];
    expect(outage.reason_code).toBe('SCHEDULER_STOPPED');
    expect(new Date(outage.started_at).getTime() - t0).toBeGreaterThan(2_000);
    expect(new Date(outage.started_at).getTime() - t0).toBeLessThan(4_000);
  });

  it('applies the policy to the slots a pause swallowed when the schedule resumes', async () => {
    const client = api(apiAndWorker.url);
    const scheduler = await startInProcess(t.env(), ['scheduler']);
    try {
      const t0 = Math.ceil((Date.now() + 3_000) / SLOT) * SLOT;
      const base = { every: '2s', startAt: new Date(t0).toISOString(), target: { type: 'handler', name: 'noop' } };
      const latest = (await client.post('/v1/schedules', { name: 'paused-latest', ...base })).body.id;
      const none = (await client.post('/v1/schedules', { name: 'paused-none', ...base, catchup: { mode: 'none' } })).body.id;
      // Paused at T0+1 s, once the slot T0 fired; resumed at T0+7 s, between slots.
      await sleepUntil(t0 + 1_000);
      await ticked([latest, none], t0);
      for (const id of [latest, none]) expect((await client.post(`/v1/schedules/${id}/pause`)).body.status).toBe('paused');
      await sleepUntil(t0 + 7_000);
      for (const id of [latest, none]) expect((await client.post(`/v1/schedules/${id}/resume`)).body.status).toBe('active');
      await ticked([latest, none], t0 + 8_000);

      const paused = [2, 4, 6].map((s) => t0 + s * 1_000);
      expect(await ticksOf(latest, t0 + 8_000)).toEqual([
        { slot: t0, outcome: 'triggered', reason: 'TRIGGERED' },
        { slot: paused[0], outcome: 'missed', reason: 'CATCHUP_SUPERSEDED' },
        { slot: paused[1], outcome: 'missed', reason: 'CATCHUP_SUPERSEDED' },
        { slot: paused[2], outcome: 'triggered', reason: 'TRIGGERED' },
        { slot: t0 + 8_000, outcome: 'triggered', reason: 'TRIGGERED' },
      ]);
      expect(await ticksOf(none, t0 + 8_000)).toEqual([
        { slot: t0, outcome: 'triggered', reason: 'TRIGGERED' },
        ...paused.map((slot) => ({ slot, outcome: 'missed', reason: 'CATCHUP_NONE' })),
        { slot: t0 + 8_000, outcome: 'triggered', reason: 'TRIGGERED' },
      ]);
    } finally {
      await scheduler.app.close();
    }
  });
});
