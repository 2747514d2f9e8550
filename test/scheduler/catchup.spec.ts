/**
 * Catch-up after downtime and after a pause: stop the scheduler for about five slots, restart it,
 * and check which slots of each schedule fired and which were recorded as missed, per mode, window
 * and limit. Slots are two seconds apart and aligned.
 */
import { describe, expect, it } from 'vitest';
import { api, sleepUntil, startInProcess, useKairos, waitFor } from '../support/kairos.js';

const SLOT = 2_000;

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

    // The slots T0 and T0+2 s fire; the scheduler stops at about T0+3 s and is back at about
    // T0+13 s. What the test expects is derived from what it observes: the last slot ticked before
    // the stop, and when the restarted scheduler took each schedule's partition (its catch-up
    // boundary), so a slow machine moves the gap but does not break the scenario.
    await sleepUntil(t0 + 3_000);
    await ticked(Object.values(ids), t0 + 2_000);
    await scheduler.app.close();
    const tickedBefore = new Map<string, number[]>();
    for (const [name, id] of Object.entries(ids)) tickedBefore.set(name, (await ticksOf(id, t0 + 86_400_000)).map((x) => x.slot));
    await sleepUntil(t0 + 12_700);
    scheduler = await startInProcess(schedulerEnv, ['scheduler']);
    const end = t0 + 18_000;
    await ticked(Object.values(ids), end);
    await scheduler.app.close();

    const slotsUpTo = (last: number) => Array.from({ length: (last - t0) / SLOT + 1 }, (_, i) => t0 + i * SLOT);
    const fired = (slot: number) => ({ slot, outcome: 'triggered', reason: 'TRIGGERED' });
    const missed = (slot: number, reason: string) => ({ slot, outcome: 'missed', reason });
    const gaps: number[] = [];
    for (const [name, id] of Object.entries(ids)) {
      const before = tickedBefore.get(name)!;
      // Every slot up to the stop fired on time, one after another from T0.
      expect(before, name).toEqual(slotsUpTo(before.at(-1)!));
      const boundary = (
        await t.db.query(`SELECT l.covered_since FROM schedules s JOIN partition_leases l ON l.partition = s.tick_partition WHERE s.id = $1`, [id])
      ).rows[0].covered_since.getTime() as number;
      const gap = slotsUpTo(end).filter((s) => s > before.at(-1)! && s < boundary);
      gaps.push(gap.length);
      // The gap was decided in one evaluation, against the database clock of that tick.
      const decided = (
        await t.db.query(`SELECT DISTINCT created_at FROM ticks WHERE schedule_id = $1 AND scheduled_for = ANY($2::timestamptz[])`, [
          id,
          gap.map((s) => new Date(s)),
        ])
      ).rows.map((r) => new Date(r.created_at).getTime());
      expect(decided, name).toHaveLength(1);
      const now = decided[0]!;
      const onTimeAlongside = slotsUpTo(end).some((s) => s >= boundary && s <= now);
      const inWindow = (s: number) => now - s <= 4_000;
      const gapTicks = {
        none: gap.map((s) => missed(s, 'CATCHUP_NONE')),
        // latest fires the newest missed slot, unless a slot on time fires in the same evaluation.
        latest: gap.map((s, i) => (i === gap.length - 1 && !onTimeAlongside ? fired(s) : missed(s, 'CATCHUP_SUPERSEDED'))),
        all: gap.map(fired),
        allLimit2: gap.map((s, i) => (i >= gap.length - 2 ? fired(s) : missed(s, 'CATCHUP_LIMIT_EXCEEDED'))),
        allWindow4s: gap.map((s) => (inWindow(s) ? fired(s) : missed(s, 'CATCHUP_WINDOW_MISSED'))),
      }[name]!;
      const onTime = slotsUpTo(end).filter((s) => s <= before.at(-1)! || s >= boundary);
      expect(await ticksOf(id, end), name).toEqual([...onTime.map(fired), ...gapTicks].sort((a, b) => a.slot - b.slot));
      if (name === 'allWindow4s') {
        // The window drops the oldest slots of a gap this long and keeps the newest.
        expect(gapTicks.some((x) => x.outcome === 'missed') && gapTicks.some((x) => x.outcome === 'triggered'), JSON.stringify(gapTicks)).toBe(true);
      }
    }
    // About five slots fell due while no scheduler ran: enough for limit, window and latest to differ.
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(3);

    // The downtime is on record as an outage, from the stop to the restart.
    const outage = (await t.db.query(`SELECT started_at, ended_at, reason_code FROM outages ORDER BY id DESC LIMIT 1`)).rows[0];
    expect(outage.reason_code).toBe('SCHEDULER_STOPPED');
    expect(new Date(outage.started_at).getTime()).toBeGreaterThan(t0 + 2_000);
    expect(new Date(outage.started_at).getTime()).toBeLessThan(new Date(outage.ended_at).getTime());
    expect(new Date(outage.ended_at).getTime()).toBeGreaterThan(t0 + 12_000);
  });

  it('applies the policy to the slots a pause swallowed when the schedule resumes', async () => {
    const client = api(apiAndWorker.url);
    const scheduler = await startInProcess(t.env(), ['scheduler']);
    try {
      // Slots 4 s apart: the resume lands 3 s before the next one, so a stalled tick still reads
      // the swallowed slots before that slot is due (with it due too, `latest` would pick it).
      const every = 2 * SLOT;
      const t0 = Math.ceil((Date.now() + 3_000) / every) * every;
      const base = { every: '4s', startAt: new Date(t0).toISOString(), target: { type: 'handler', name: 'noop' } };
      const latest = (await client.post('/v1/schedules', { name: 'paused-latest', ...base })).body.id;
      const none = (await client.post('/v1/schedules', { name: 'paused-none', ...base, catchup: { mode: 'none' } })).body.id;
      // Paused at T0+1 s, once the slot T0 fired; resumed at T0+9 s, between slots.
      await sleepUntil(t0 + 1_000);
      await ticked([latest, none], t0);
      for (const id of [latest, none]) expect((await client.post(`/v1/schedules/${id}/pause`)).body.status).toBe('paused');
      await sleepUntil(t0 + 9_000);
      for (const id of [latest, none]) expect((await client.post(`/v1/schedules/${id}/resume`)).body.status).toBe('active');
      const next = t0 + 12_000;
      await ticked([latest, none], next);

      const paused = [4, 8].map((s) => t0 + s * 1_000);
      expect(await ticksOf(latest, next)).toEqual([
        { slot: t0, outcome: 'triggered', reason: 'TRIGGERED' },
        { slot: paused[0], outcome: 'missed', reason: 'CATCHUP_SUPERSEDED' },
        { slot: paused[1], outcome: 'triggered', reason: 'TRIGGERED' },
        { slot: next, outcome: 'triggered', reason: 'TRIGGERED' },
      ]);
      expect(await ticksOf(none, next)).toEqual([
        { slot: t0, outcome: 'triggered', reason: 'TRIGGERED' },
        ...paused.map((slot) => ({ slot, outcome: 'missed', reason: 'CATCHUP_NONE' })),
        { slot: next, outcome: 'triggered', reason: 'TRIGGERED' },
      ]);
    } finally {
      await scheduler.app.close();
    }
  });
});
