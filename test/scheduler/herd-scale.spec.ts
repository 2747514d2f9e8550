/**
 * The herd at CI scale: 100,000 pending schedules (one-shots, intervals and daily crons in several
 * zones), 5,000 of them due at one instant and the rest spread over the day, under the default
 * configuration (lookahead, tick batch, worker concurrency). Every slot of the herd gets exactly
 * one tick and one run, and every run has started, not before its slot, and succeeded within a
 * bound.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StartedKairos } from '@kairos/process';
import { insertSchedules } from '../../bench/herd-seed.js';
import { sleepUntil, startInProcess, testEnvironment, waitFor, type TestEnvironment } from '../support/kairos.js';

const PENDING = Number(process.env.KAIROS_TEST_HERD_PENDING ?? 100_000);
const HERD = Number(process.env.KAIROS_TEST_HERD ?? 5_000);
/** All of the herd must have started this long after its instant (a loaded two-core machine). */
const BOUND_MS = 45_000;

describe('a herd at scale', () => {
  let t: TestEnvironment;
  let kairos: StartedKairos;
  let t0: number;

  beforeAll(async () => {
    t = await testEnvironment();
    // The instant: a whole minute (the crons' granularity), far enough to seed and start before it.
    t0 = Math.ceil((Date.now() + 15_000) / 60_000) * 60_000;
    await Promise.all([
      insertSchedules(t.db, 1, PENDING - HERD, null),
      insertSchedules(t.db, PENDING - HERD + 1, PENDING, t0),
      startInProcess(t.env({ LOG_LEVEL: 'error' })).then((k) => (kairos = k)),
    ]);
    await t.db.query('ANALYZE schedules');
  }, 60_000);

  afterAll(async () => {
    await kairos?.app.close();
    await t?.cleanup();
  });

  const herdIds = `(SELECT id FROM schedules WHERE name LIKE 'herd-%')`;
  const ofHerd = `r.schedule_id IN ${herdIds}`;

  it(`starts all ${HERD} runs of the herd, one per slot, within ${BOUND_MS / 1000} s of the instant`, async () => {
    await sleepUntil(t0);
    const started = async () =>
      (await t.db.query(`SELECT count(*)::int AS n FROM runs r WHERE r.scheduled_for = $1 AND r.started_at IS NOT NULL AND ${ofHerd}`, [new Date(t0)])).rows[0].n;
    await waitFor(async () => ((await started()) === HERD ? true : undefined), 'the herd to start', BOUND_MS + 5_000, 500);
    await waitFor(async () => {
      const { rows } = await t.db.query(`SELECT count(*)::int AS n FROM runs r WHERE r.state = 'succeeded' AND ${ofHerd}`);
      return rows[0].n === HERD ? true : undefined;
    }, 'the herd to succeed', 30_000, 500);

    const runs = (
      await t.db.query(
        `SELECT r.schedule_id, r.scheduled_for, r.state, (extract(epoch FROM r.started_at - r.scheduled_for) * 1000)::float8 AS late
         FROM runs r WHERE ${ofHerd}`,
      )
    ).rows;
    expect(runs).toHaveLength(HERD);
    expect(new Set(runs.map((r) => r.schedule_id)).size).toBe(HERD);
    expect(runs.every((r) => new Date(r.scheduled_for).getTime() === t0 && r.state === 'succeeded')).toBe(true);
    // None started before its slot (runs made ahead wait as delayed jobs), the last within the bound.
    const late = runs.map((r) => r.late as number).sort((a, b) => a - b);
    expect(late[0]).toBeGreaterThanOrEqual(0);
    expect(late.at(-1)).toBeLessThan(BOUND_MS);

    // One tick per slot, each pointing at its run; no slot of any schedule ticked twice.
    const ticks = (
      await t.db.query(`SELECT count(*)::int AS n, count(DISTINCT t.run_id)::int AS runs FROM ticks t WHERE t.scheduled_for = $1 AND t.schedule_id IN ${herdIds}`, [new Date(t0)])
    ).rows[0];
    expect(ticks).toEqual({ n: HERD, runs: HERD });
    const twice = (await t.db.query(`SELECT count(*)::int AS n FROM (SELECT 1 FROM runs WHERE origin = 'schedule' GROUP BY schedule_id, scheduled_for HAVING count(*) > 1) d`)).rows[0].n;
    expect(twice).toBe(0);
    // The rest of the day is still pending, with nothing fired early.
    const pending = (await t.db.query(`SELECT count(*)::int AS n FROM schedules WHERE status = 'active' AND name LIKE 'spread-%'`)).rows[0].n;
    expect(pending).toBeGreaterThan((PENDING - HERD) * 0.99);
  }, 120_000);
});
