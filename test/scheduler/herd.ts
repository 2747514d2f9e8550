/**
 * The herd at CI scale, for any transport: `pending` schedules (one-shots, intervals and daily crons
 * in several zones), `herd` of them due at one instant and the rest spread over the day, under the
 * default configuration (lookahead, tick batch, worker concurrency). Every slot of the herd gets
 * exactly one tick and one run, and every run has started, not before its slot, and succeeded
 * within a bound.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StartedKairos } from '@kairos/process';
import { insertSchedules } from '../../bench/herd-seed.js';
import { sleepUntil, startInProcess, testEnvironment, waitFor, type TestEnvironment } from '../support/kairos.js';

/** All of the herd must have started this long after its instant (a loaded two-core machine). */
export const HERD_BOUND_MS = 45_000;

export interface HerdOptions {
  /** Schedules in all. */
  pending: number;
  /** Of them, those due at the one instant. */
  herd: number;
  /**
   * Where the queues live when not on the test's own transport: variables on top of the test
   * environment's, and what to stop once Kairos has closed.
   */
  transport?: () => Promise<{ env: Record<string, string>; stop: () => Promise<void> }>;
  /** The shards per runs queue Kairos must have picked. */
  shards?: number;
}

/** A describe block `title` that seeds the herd, starts Kairos in this process and checks the herd's instant. */
export function describeHerd(title: string, { pending, herd, transport, shards }: HerdOptions): void {
  describe(title, () => {
    let t: TestEnvironment;
    let kairos: StartedKairos;
    let stopTransport: (() => Promise<void>) | undefined;
    let t0: number;

    beforeAll(async () => {
      t = await testEnvironment();
      const own = await transport?.();
      stopTransport = own?.stop;
      // The instant: a whole minute (the crons' granularity), far enough to seed and start before it.
      t0 = Math.ceil((Date.now() + 15_000) / 60_000) * 60_000;
      await Promise.all([
        insertSchedules(t.db, 1, pending - herd, null),
        insertSchedules(t.db, pending - herd + 1, pending, t0),
        startInProcess(t.env({ LOG_LEVEL: 'error', ...own?.env })).then((k) => (kairos = k)),
      ]);
      await t.db.query('ANALYZE schedules');
    }, 60_000);

    afterAll(async () => {
      await kairos?.app.close();
      await stopTransport?.();
      await t?.cleanup();
    });

    const herdIds = `(SELECT id FROM schedules WHERE name LIKE 'herd-%')`;
    const ofHerd = `r.schedule_id IN ${herdIds}`;

    it(`starts all ${herd} runs of the herd, one per slot, within ${HERD_BOUND_MS / 1000} s of the instant`, async () => {
      if (shards !== undefined) expect(kairos.transport.shards).toBe(shards);
      await sleepUntil(t0);
      const started = async () =>
        (await t.db.query(`SELECT count(*)::int AS n FROM runs r WHERE r.scheduled_for = $1 AND r.started_at IS NOT NULL AND ${ofHerd}`, [new Date(t0)])).rows[0].n;
      await waitFor(async () => ((await started()) === herd ? true : undefined), 'the herd to start', HERD_BOUND_MS + 5_000, 500);
      await waitFor(
        async () => {
          const { rows } = await t.db.query(`SELECT count(*)::int AS n FROM runs r WHERE r.state = 'succeeded' AND ${ofHerd}`);
          return rows[0].n === herd ? true : undefined;
        },
        'the herd to succeed',
        30_000,
        500,
      );

      const runs = (
        await t.db.query(
          `SELECT r.schedule_id, r.scheduled_for, r.state, (extract(epoch FROM r.started_at - r.scheduled_for) * 1000)::float8 AS late,
                  (extract(epoch FROM r.finished_at - r.scheduled_for) * 1000)::float8 AS done
           FROM runs r WHERE ${ofHerd}`,
        )
      ).rows;
      expect(runs).toHaveLength(herd);
      expect(new Set(runs.map((r) => r.schedule_id)).size).toBe(herd);
      expect(runs.every((r) => new Date(r.scheduled_for).getTime() === t0 && r.state === 'succeeded')).toBe(true);
      // None started before its slot (runs made ahead wait as delayed jobs), the last within the bound.
      const late = runs.map((r) => r.late as number).sort((a, b) => a - b);
      const done = Math.max(...runs.map((r) => r.done as number));
      console.info(
        `herd (${title}): ${herd} runs of ${pending} schedules started ${Math.round(late[0]!)} to ${Math.round(late.at(-1)!)} ms after their instant (median ${Math.round(late[Math.floor(late.length / 2)]!)} ms), the last finished at ${Math.round(done)} ms`,
      );
      expect(late[0]).toBeGreaterThanOrEqual(0);
      expect(late.at(-1)).toBeLessThan(HERD_BOUND_MS);

      // One tick per slot, each pointing at its run; no slot of any schedule ticked twice.
      const ticks = (
        await t.db.query(`SELECT count(*)::int AS n, count(DISTINCT t.run_id)::int AS runs FROM ticks t WHERE t.scheduled_for = $1 AND t.schedule_id IN ${herdIds}`, [
          new Date(t0),
        ])
      ).rows[0];
      expect(ticks).toEqual({ n: herd, runs: herd });
      const twice = (await t.db.query(`SELECT count(*)::int AS n FROM (SELECT 1 FROM runs WHERE origin = 'schedule' GROUP BY schedule_id, scheduled_for HAVING count(*) > 1) d`))
        .rows[0].n;
      expect(twice).toBe(0);
      // The rest of the day is still pending, with nothing fired early.
      const still = (await t.db.query(`SELECT count(*)::int AS n FROM schedules WHERE status = 'active' AND name LIKE 'spread-%'`)).rows[0].n;
      expect(still).toBeGreaterThan((pending - herd) * 0.99);
    }, 120_000);
  });
}
