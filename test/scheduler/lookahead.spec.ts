/**
 * Lookahead (default 15 s): slots due soon are made into runs ahead of their instant and handed to
 * BullMQ as delayed jobs. A pause, a delete or a redefinition after that withdraws the runs not
 * started yet, with their reason, and the slot is planned again from what holds when it comes due;
 * overlap, maxRuns and endAt hold as without lookahead.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StartedKairos } from '@kairos/process';
import { fsck } from '@kairos/ledger';
import { api, runsQueue, sleep, sleepUntil, startInProcess, testEnvironment, waitFor, type TestEnvironment } from '../support/kairos.js';

const noop = { type: 'handler', name: 'noop' };
const iso = (ms: number): string => new Date(ms).toISOString();

describe('lookahead', () => {
  let t: TestEnvironment;
  let kairos: StartedKairos;
  let client: ReturnType<typeof api>;

  beforeAll(async () => {
    t = await testEnvironment();
    // The default lookahead, not one set for the test.
    kairos = await startInProcess(t.env({ KAIROS_RUN_LEASE_TTL: '1500ms' }));
    client = api(kairos.url);
  }, 60_000);

  afterAll(async () => {
    await kairos?.app.close();
    await t?.cleanup();
  });

  const runsOf = async (scheduleId: string) =>
    (
      await t.db.query(
        `SELECT id, state, reason_code AS reason, scheduled_for, created_at, started_at, finished_at FROM runs WHERE schedule_id = $1 ORDER BY scheduled_for, created_at`,
        [scheduleId],
      )
    ).rows.map((r) => ({
      id: r.id as string,
      state: r.state as string,
      reason: r.reason as string | null,
      slot: new Date(r.scheduled_for).getTime(),
      created: new Date(r.created_at).getTime(),
      started: r.started_at ? new Date(r.started_at).getTime() : null,
      finished: r.finished_at ? new Date(r.finished_at).getTime() : null,
    }));
  const ticksOf = async (scheduleId: string) =>
    (await t.db.query(`SELECT scheduled_for, outcome, reason_code AS reason, run_id FROM ticks WHERE schedule_id = $1 ORDER BY scheduled_for`, [scheduleId])).rows;
  /** Waits until the schedule has `n` runs, and returns them. */
  const madeAhead = (scheduleId: string, n = 1) =>
    waitFor(async () => {
      const rs = await runsOf(scheduleId);
      return rs.length >= n ? rs : undefined;
    }, `${n} run(s) made ahead`, 10_000);
  /** The most runs executing at one instant. */
  const maxConcurrent = (rs: { started: number | null; finished: number | null }[]) => {
    const edges = rs.filter((r) => r.started !== null).flatMap((r) => [[r.started!, 1] as const, [r.finished ?? Infinity, -1] as const]);
    edges.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
    let now = 0;
    let max = 0;
    for (const [, d] of edges) max = Math.max(max, (now += d));
    return max;
  };

  // Each case has schedules of its own and mostly waits for their instants: side by side in the one
  // Kairos, the waits overlap. Their bounds are seconds wide, so other files running meanwhile do not move them.
  describe.concurrent('schedules of their own, side by side', () => {
    it('makes the run of a slot due soon ahead of time, as a delayed job, and starts it at its instant', async () => {
      const at = Date.now() + 6_000;
      const s = (await client.post('/v1/schedules', { at: iso(at), target: noop })).body;
      const [run] = await madeAhead(s.id);
      expect(run!.slot).toBe(at);
      expect(run!.created).toBeLessThan(at - 2_000);
      const queue = await runsQueue(t);
      try {
        // The run's row commits before the relay hands it to the transport: wait for the job to exist.
        const state = await waitFor(async () => {
          const st = await queue.getJobState(run!.id);
          return st === 'unknown' ? undefined : st;
        }, 'the run to be enqueued', 3_000);
        expect(state).toBe('delayed');
      } finally {
        await queue.close();
      }
      const done = await waitFor(async () => ((await runsOf(s.id))[0]!.state === 'succeeded' ? (await runsOf(s.id))[0] : undefined), 'the run to succeed', 15_000);
      expect(done!.started).toBeGreaterThanOrEqual(at);
      expect((await client.get(`/v1/schedules/${s.id}`)).body.status).toBe('completed');
    });

    it('pause withdraws a run made ahead (SCHEDULE_PAUSED, with its actor); a resume before the instant plans the slot again', async () => {
      const at = Date.now() + 8_000;
      const s = (await client.post('/v1/schedules', { at: iso(at), target: noop })).body;
      const [ahead] = await madeAhead(s.id);
      // The one-shot's only run was made, so the schedule had completed; it can still be paused.
      const paused = await client.post(`/v1/schedules/${s.id}/pause`);
      expect(paused.status).toBe(200);
      expect(paused.body).toMatchObject({ status: 'paused', paused: true });
      expect((await client.get(`/v1/runs/${ahead!.id}`)).body).toMatchObject({ state: 'cancelled', reasonCode: 'SCHEDULE_PAUSED' });
      const events = (await client.get(`/v1/runs/${ahead!.id}/events`)).body.items;
      expect(events.at(-1)).toMatchObject({ kind: 'cancelled', toState: 'cancelled', reasonCode: 'SCHEDULE_PAUSED', actor: 'anonymous' });
      expect(await ticksOf(s.id)).toEqual([]);

      expect((await client.post(`/v1/schedules/${s.id}/resume`)).body).toMatchObject({ status: 'active' });
      const rs = await madeAhead(s.id, 2);
      const replanned = rs.find((r) => r.id !== ahead!.id)!;
      expect(replanned.slot).toBe(at);
      await waitFor(async () => ((await runsOf(s.id)).find((r) => r.id === replanned.id)!.state === 'succeeded' ? true : undefined), 'the slot to run', 15_000);
      const ticks = await ticksOf(s.id);
      expect(ticks).toHaveLength(1);
      expect(ticks[0]).toMatchObject({ outcome: 'triggered', run_id: replanned.id });
      expect((await runsOf(s.id)).find((r) => r.id === ahead!.id)!.started).toBeNull();
    });

    it('a slot that passes while paused is left to catch-up after its run made ahead was withdrawn', async () => {
      const at = Date.now() + 5_000;
      const s = (await client.post('/v1/schedules', { at: iso(at), catchup: { mode: 'none' }, target: noop })).body;
      const [ahead] = await madeAhead(s.id);
      await client.post(`/v1/schedules/${s.id}/pause`);
      // The slot passes while the schedule is paused.
      await sleepUntil(at + 500);
      await client.post(`/v1/schedules/${s.id}/resume`);
      const tick = await waitFor(async () => (await ticksOf(s.id))[0], 'the slot to be decided', 10_000);
      expect(tick).toMatchObject({ outcome: 'missed', reason: 'CATCHUP_NONE', run_id: null });
      expect((await runsOf(s.id)).map((r) => [r.id, r.state, r.reason])).toEqual([[ahead!.id, 'cancelled', 'SCHEDULE_PAUSED']]);
    });

    it('delete cancels a run made ahead (SCHEDULE_DELETED) before it starts', async () => {
      const at = Date.now() + 6_000;
      const s = (await client.post('/v1/schedules', { at: iso(at), target: noop })).body;
      const [ahead] = await madeAhead(s.id);
      expect((await client.delete(`/v1/schedules/${s.id}`)).status).toBe(204);
      expect((await client.get(`/v1/runs/${ahead!.id}`)).body).toMatchObject({ state: 'cancelled', reasonCode: 'SCHEDULE_DELETED' });
      // Nothing starts it at its instant: a delayed job due then would be claimed well within half a second.
      await sleepUntil(at + 500);
      const [run] = await runsOf(s.id);
      expect(run).toMatchObject({ state: 'cancelled', started: null });
    });

    it('a PATCH of the timing withdraws the runs made ahead (SCHEDULE_CHANGED) and plans the slots from the new definition', async () => {
      const s = (await client.post('/v1/schedules', { every: '4s', overlap: 'allow', target: noop })).body;
      const ahead = await madeAhead(s.id, 3);
      const patched = await client.patch(`/v1/schedules/${s.id}`, { every: '5s' });
      expect(patched.status).toBe(200);
      const patchedAt = Date.now();
      const withdrawn = (await runsOf(s.id)).filter((r) => ahead.some((a) => a.id === r.id) && r.reason === 'SCHEDULE_CHANGED');
      expect(withdrawn.length).toBeGreaterThanOrEqual(2);
      expect(withdrawn.every((r) => r.state === 'cancelled' && r.slot > patchedAt - 1_000 && r.started === null)).toBe(true);
      const events = (await client.get(`/v1/runs/${withdrawn[0]!.id}/events`)).body.items;
      expect(events.at(-1)).toMatchObject({ kind: 'cancelled', reasonCode: 'SCHEDULE_CHANGED', actor: 'anonymous' });
      // The new slots are anchored at creation, every 5 s, and made ahead again.
      const created = Date.parse(s.createdAt);
      const fresh = await waitFor(async () => {
        const rs = (await runsOf(s.id)).filter((r) => r.created >= patchedAt - 1_000 && r.reason !== 'SCHEDULE_CHANGED');
        return rs.length >= 2 ? rs : undefined;
      }, 'runs of the new timing', 10_000);
      expect(fresh.every((r) => (r.slot - created) % 5_000 === 0)).toBe(true);
      // Every slot still has exactly one tick, and it points at a run of the new timing.
      const ticks = await ticksOf(s.id);
      expect(new Set(ticks.map((x) => String(x.scheduled_for))).size).toBe(ticks.length);
      expect(ticks.some((x) => withdrawn.some((w) => w.id === x.run_id))).toBe(false);
      await client.post(`/v1/schedules/${s.id}/pause`);
    });

    it('a PATCH to the same instant re-plans that slot with the new definition', async () => {
      const at = Date.now() + 8_000;
      const s = (await client.post('/v1/schedules', { at: iso(at), target: { type: 'handler', name: 'echo' }, payload: { v: 1 } })).body;
      const [ahead] = await madeAhead(s.id);
      expect((await client.patch(`/v1/schedules/${s.id}`, { at: iso(at), payload: { v: 2 } })).status).toBe(200);
      const run = await waitFor(async () => (await runsOf(s.id)).find((r) => r.id !== ahead!.id && r.state === 'succeeded'), 'the re-planned run', 15_000);
      expect(run.slot).toBe(at);
      expect((await client.get(`/v1/runs/${run.id}`)).body.result).toEqual({ v: 2 });
      expect((await client.get(`/v1/runs/${ahead!.id}`)).body).toMatchObject({ state: 'cancelled', reasonCode: 'SCHEDULE_CHANGED' });
    });

    describe('overlap with runs made ahead', () => {
      const ids: Record<string, string> = {};

      beforeAll(async () => {
        // The first slot is 5 s out, so its run is made ahead however slowly a loaded machine ticks.
        const startAt = iso(Date.now() + 5_000);
        for (const overlap of ['skip', 'replace']) {
          const created = await client.post('/v1/schedules', { every: '2s', startAt, overlap, target: { type: 'handler', name: 'sleep' }, payload: { ms: 3_000 } });
          ids[overlap] = created.body.id;
        }
        // Until each policy has acted twice: two slots skipped, two runs replaced.
        await waitFor(
          async () => {
            const skipped = (await ticksOf(ids.skip!)).filter((x) => x.outcome === 'skipped').length;
            const replaced = (await runsOf(ids.replace!)).filter((r) => r.reason === 'REPLACED_BY_OVERLAP').length;
            return skipped >= 2 && replaced >= 2 ? true : undefined;
          },
          'two skipped slots and two replaced runs',
          30_000,
          250,
        );
        for (const id of Object.values(ids)) await client.post(`/v1/schedules/${id}/pause`);
        await waitFor(async () => {
          const { rows } = await t.db.query(`SELECT count(*)::int AS n FROM runs WHERE schedule_id = ANY($1::uuid[]) AND state IN ('queued', 'running')`, [
            Object.values(ids),
          ]);
          return rows[0].n === 0 ? true : undefined;
        }, 'the runs to end', 20_000);
      }, 60_000);

      it('skip: the first run is made ahead; a slot due while it runs is skipped, never run beside it', async () => {
        const rs = (await runsOf(ids.skip!)).filter((r) => r.reason !== 'SCHEDULE_PAUSED');
        expect(rs[0]!.created).toBeLessThan(rs[0]!.slot - 1_000);
        const ticks = await ticksOf(ids.skip!);
        const skipped = ticks.filter((x) => x.outcome === 'skipped');
        expect(skipped.length).toBeGreaterThanOrEqual(2);
        expect(skipped.every((x) => x.reason === 'OVERLAP_SKIPPED')).toBe(true);
        expect(rs.length).toBe(ticks.filter((x) => x.outcome === 'triggered').length);
        expect(rs.every((r) => r.state === 'succeeded')).toBe(true);
        expect(maxConcurrent(rs)).toBe(1);
      });

      it('replace: a slot due while the run made ahead runs replaces it', async () => {
        const rs = (await runsOf(ids.replace!)).filter((r) => r.reason !== 'SCHEDULE_PAUSED');
        expect(rs[0]!.created).toBeLessThan(rs[0]!.slot - 1_000);
        expect(rs[0]).toMatchObject({ state: 'cancelled', reason: 'REPLACED_BY_OVERLAP' });
        expect(rs[0]!.started).not.toBeNull();
        expect(rs.filter((r) => r.reason === 'REPLACED_BY_OVERLAP').length).toBeGreaterThanOrEqual(2);
        expect(maxConcurrent(rs)).toBe(1);
      });
    });

    it('maxRuns: the runs made ahead use it up, a pause gives them back, and no more runs than maxRuns ever start', async () => {
      const s = (await client.post('/v1/schedules', { every: '3s', overlap: 'allow', maxRuns: 3, target: noop })).body;
      await madeAhead(s.id, 3);
      expect((await client.get(`/v1/schedules/${s.id}`)).body).toMatchObject({ status: 'completed' });
      expect((await client.post(`/v1/schedules/${s.id}/pause`)).body).toMatchObject({ status: 'paused' });
      const withdrawn = (await runsOf(s.id)).filter((r) => r.reason === 'SCHEDULE_PAUSED');
      expect(withdrawn).toHaveLength(3);
      expect((await t.db.query(`SELECT fire_count FROM schedules WHERE id = $1`, [s.id])).rows[0].fire_count).toBe(0);
      await client.post(`/v1/schedules/${s.id}/resume`);
      const done = await waitFor(async () => {
        const rs = (await runsOf(s.id)).filter((r) => r.state === 'succeeded');
        return rs.length === 3 ? rs : undefined;
      }, 'three runs', 20_000);
      // No fourth run in the interval after the third (3 s) and half a second more.
      await sleep(3_500);
      expect((await runsOf(s.id)).filter((r) => r.reason !== 'SCHEDULE_PAUSED')).toHaveLength(3);
      expect(done.every((r) => r.started! >= r.slot)).toBe(true);
      expect((await client.get(`/v1/schedules/${s.id}`)).body).toMatchObject({ status: 'completed', fireCount: 3 });
    });

    it('endAt: no slot after it is made ahead', async () => {
      const endAt = Date.now() + 4_500;
      const s = (await client.post('/v1/schedules', { every: '1s', overlap: 'allow', endAt: iso(endAt), target: noop })).body;
      await waitFor(async () => ((await client.get(`/v1/schedules/${s.id}`)).body.status === 'completed' ? true : undefined), 'the schedule to complete', 10_000);
      // A slot after endAt would be due a second after it; the last run before it has finished by then.
      await sleepUntil(endAt + 1_500);
      const rs = await runsOf(s.id);
      expect(rs.length).toBeGreaterThanOrEqual(3);
      expect(rs.every((r) => r.slot <= endAt && r.state === 'succeeded' && r.started! >= r.slot)).toBe(true);
    });
  });

  it('leaves the ledger consistent (fsck)', async () => {
    expect(await fsck(t.db)).toEqual([]);
  });
});
