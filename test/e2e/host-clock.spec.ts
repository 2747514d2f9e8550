/**
 * The database's clock is the only clock: Kairos processes whose host clock is 30 s ahead, 30 s
 * behind, or stepped back an hour while they run (libfaketime, on the Kairos processes only; the
 * monotonic clock untouched, as NTP leaves it) still start every run at its instant by the
 * database's clock, never before it, resolve `in` from the request by the database's clock, and
 * fire each slot of an every-second schedule exactly once. Roles apart, a skewed worker alone or a
 * skewed scheduler alone changes nothing either.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SPAWNING_TIMEOUT_MS, api, spawnKairos, useTestEnvironment, waitFor, type ApiClient, type KairosChild, type TestEnvironment } from '../support/kairos.js';
import { allowance, watchMachineLag } from '../support/timer-lag.js';

const LIBFAKETIME = '/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1';
const TIMERS = 40;
/** The scheduler's lookahead here: runs are made this far ahead of their instant, as with the default 15 s, only sooner. */
const LOOKAHEAD = '4s';
/** Past the lookahead, so the timers' runs are made ahead and handed to the transport as delayed jobs. */
const TIMERS_AHEAD_MS = 8_000;
const TIMERS_SPREAD_MS = 2_000;
/**
 * Start minus instant at p99 on a machine that holds nothing back; the bound adds what this machine
 * was seen holding timers back during the timers' window (timer-lag.ts). The figures of a quiet
 * machine are `npm run bench -- lateness`'s.
 */
const P99_BOUND_MS = 75;

/** Environment that runs a process on a host clock `offset` (libfaketime's syntax, e.g. `+30s`) read from a file, so a test can step it. */
function skewedClock(file: string, offset: string): Record<string, string> {
  writeFileSync(file, `${offset}\n`);
  return {
    LD_PRELOAD: LIBFAKETIME,
    FAKETIME_TIMESTAMP_FILE: file,
    // Re-read the file once a second, so a step written to it takes hold while the process runs.
    FAKETIME_CACHE_DURATION: '1',
    // A wall clock stepped by NTP leaves the monotonic clock alone; timers run on the monotonic one.
    FAKETIME_DONT_FAKE_MONOTONIC: '1',
  };
}

async function databaseNow(t: TestEnvironment): Promise<number> {
  const { rows } = await t.db.query<{ now: Date }>('SELECT clock_timestamp() AS now');
  return rows[0]!.now.getTime();
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

interface Scenario {
  name: string;
  /** The processes to start: roles and host clock offset of each. */
  processes: { roles: string; offset: string }[];
  /** Written to the stepped process's clock file once the timers' runs are in the transport. */
  stepTo?: string;
}

const SCENARIOS: Scenario[] = [
  { name: 'all roles, host clock 30 s ahead', processes: [{ roles: 'api,scheduler,worker', offset: '+30s' }] },
  { name: 'all roles, host clock 30 s behind', processes: [{ roles: 'api,scheduler,worker', offset: '-30s' }] },
  { name: 'all roles, host clock stepped back an hour mid-run', processes: [{ roles: 'api,scheduler,worker', offset: '+0s' }], stepTo: '-3600s' },
  {
    name: 'roles apart, only the worker 30 s ahead',
    processes: [
      { roles: 'api,scheduler', offset: '+0s' },
      { roles: 'worker', offset: '+30s' },
    ],
  },
  {
    name: 'roles apart, only the worker 30 s behind',
    processes: [
      { roles: 'api,scheduler', offset: '+0s' },
      { roles: 'worker', offset: '-30s' },
    ],
  },
  {
    name: 'roles apart, only the scheduler 30 s ahead',
    processes: [
      { roles: 'api,scheduler', offset: '+30s' },
      { roles: 'worker', offset: '+0s' },
    ],
  },
];

/**
 * Scenarios run side by side, this many at once: their processes mostly wait on timers, and with
 * precise starts (each worker starts a run at its instant on its own timer) two cores still start
 * every run well within the bound; before them, at three, the last starts of a scenario fell behind it.
 */
const AT_ONCE = 3;
let running = 0;
const waiting: (() => void)[] = [];
async function turn(): Promise<() => void> {
  if (running >= AT_ONCE) await new Promise<void>((resolve) => waiting.push(resolve));
  running += 1;
  return () => {
    running -= 1;
    waiting.shift()?.();
  };
}

describe.concurrent.each(SCENARIOS)('a Kairos host whose clock is wrong: $name', (scenario) => {
  const t = useTestEnvironment();
  const clocks = mkdtempSync(join(tmpdir(), 'kairos-clock-'));
  const children: KairosChild[] = [];
  afterAll(async () => {
    for (const child of children) child.process.kill('SIGKILL');
    await Promise.all(children.map((c) => c.exited));
    rmSync(clocks, { recursive: true, force: true });
  });

  it(
    'starts every run at its instant by the database, resolves `in` by it, and fires each every-second slot once',
    async ({ onTestFinished }) => {
      expect(existsSync(LIBFAKETIME), `${LIBFAKETIME} (Debian's faketime package) is installed`).toBe(true);
      const done = await turn();
      onTestFinished(done);
      const clockFiles = scenario.processes.map((_, i) => join(clocks, `clock-${i}`));
      for (const [i, p] of scenario.processes.entries()) {
        children.push(spawnKairos(p.roles === 'worker' ? 'worker' : 'kairos', t.env({ KAIROS_ROLES: p.roles, KAIROS_LOOKAHEAD: LOOKAHEAD, ...skewedClock(clockFiles[i]!, p.offset) })));
      }
      const bases = await Promise.all(children.map((c) => c.ready));
      const client: ApiClient = api(bases[0]!);
      // The worker's registry row carries its clock offset, which producers read before handing it delayed jobs.
      await waitFor(async () => ((await t.db.query(`SELECT 1 FROM workers WHERE clock_offset_ms IS NOT NULL`)).rowCount ? true : undefined), 'the worker to register');

      const requestedAt = await databaseNow(t);
      const inTimer = await client.post('/v1/schedules', { in: '6s', target: { type: 'handler', name: 'echo' } });
      const answeredAt = await databaseNow(t);
      expect(inTimer.status).toBe(201);
      const inFiresAt = Date.parse(inTimer.body.nextFireAt);
      expect(inFiresAt).toBeGreaterThanOrEqual(requestedAt + 6_000 - 5);
      expect(inFiresAt).toBeLessThanOrEqual(answeredAt + 6_000 + 5);

      // An `at` 5 s ahead by the database is accepted, whatever the host's clock says.
      expect((await client.post('/v1/schedules', { at: new Date((await databaseNow(t)) + 5_000).toISOString(), target: { type: 'handler', name: 'echo' } })).status).toBe(201);

      const lag = await watchMachineLag(bases);
      const every = await client.post('/v1/schedules', { name: 'every-second', every: '1s', target: { type: 'handler', name: 'echo' } });
      expect(every.status).toBe(201);
      const firstAt = (await databaseNow(t)) + TIMERS_AHEAD_MS;
      const timerIds = await Promise.all(
        Array.from({ length: TIMERS }, async (_, i) => {
          const at = new Date(firstAt + Math.round((i * TIMERS_SPREAD_MS) / TIMERS)).toISOString();
          const created = await client.post('/v1/schedules', { at, target: { type: 'handler', name: 'echo' } });
          expect(created.status).toBe(201);
          return created.body.id as string;
        }),
      );

      if (scenario.stepTo) {
        // Once the first timers' runs are made ahead and handed to the transport, the host's clock is stepped.
        await waitFor(
          async () => ((await t.db.query(`SELECT 1 FROM runs WHERE schedule_id = ANY($1::uuid[])`, [timerIds])).rowCount! >= TIMERS / 2 ? true : undefined),
          'the timers to be made ahead',
          TIMERS_AHEAD_MS,
          100,
        );
        writeFileSync(clockFiles[0]!, `${scenario.stepTo}\n`);
      }

      const timerRuns = await waitFor(
        async () => {
          const { rows } = await t.db.query<{ lateMs: number }>(
            `SELECT (extract(epoch FROM started_at - scheduled_for) * 1000)::float8 AS "lateMs" FROM runs
              WHERE schedule_id = ANY($1::uuid[]) AND state = 'succeeded'`,
            [timerIds],
          );
          return rows.length === TIMERS ? rows.map((r) => r.lateMs).sort((a, b) => a - b) : undefined;
        },
        'every timer to have run',
        TIMERS_AHEAD_MS + TIMERS_SPREAD_MS + 20_000,
        250,
      );
      const machine = await lag.stop();
      const bound = P99_BOUND_MS + allowance(machine);
      console.info(`${scenario.name}: timers started ${Math.round(percentile(timerRuns, 50))} ms after their instant at the median, ${Math.round(percentile(timerRuns, 99))} at p99 (bound ${bound} ms: ${machine.describe()})`);
      expect(timerRuns[0], 'no run starts before its instant').toBeGreaterThanOrEqual(0);
      expect(percentile(timerRuns, 99), `start minus instant, ms: ${timerRuns.map((l) => Math.round(l)).join(' ')}; ${machine.describe()}`).toBeLessThanOrEqual(bound);

      const inRun = await waitFor(async () => {
        const { rows } = await t.db.query<{ lateMs: number }>(
          `SELECT (extract(epoch FROM started_at - scheduled_for) * 1000)::float8 AS "lateMs" FROM runs WHERE schedule_id = $1 AND state = 'succeeded'`,
          [inTimer.body.id],
        );
        return rows[0];
      }, 'the `in` timer to have run');
      expect(inRun.lateMs).toBeGreaterThanOrEqual(0);
      expect(inRun.lateMs).toBeLessThanOrEqual(P99_BOUND_MS * 4 + allowance(machine));

      // Every slot of the every-second schedule, from its first to its last, was triggered once and has one run.
      const { rows: slots } = await t.db.query<{ slot: Date; outcome: string; reasonCode: string | null; runs: number; lateMs: number | null }>(
        `SELECT t.scheduled_for AS slot, t.outcome, t.reason_code AS "reasonCode", count(r.id)::int AS runs,
                min(extract(epoch FROM r.started_at - r.scheduled_for) * 1000)::float8 AS "lateMs"
           FROM ticks t LEFT JOIN runs r ON r.schedule_id = t.schedule_id AND r.scheduled_for = t.scheduled_for
          WHERE t.schedule_id = $1 GROUP BY t.scheduled_for, t.outcome, t.reason_code ORDER BY t.scheduled_for`,
        [every.body.id],
      );
      const story = slots.map((s) => `${s.slot.toISOString()} ${s.outcome} ${s.reasonCode ?? ''} runs=${s.runs} late=${s.lateMs === null ? '-' : Math.round(s.lateMs)}`).join('\n');
      expect(slots.length).toBeGreaterThanOrEqual(TIMERS_AHEAD_MS / 1_000);
      for (const [i, slot] of slots.entries()) {
        expect(`${slot.outcome} runs=${slot.runs}`, `slot ${slot.slot.toISOString()}:\n${story}`).toBe('triggered runs=1');
        if (i > 0) expect(slot.slot.getTime() - slots[i - 1]!.slot.getTime(), `no slot skipped before ${slot.slot.toISOString()}:\n${story}`).toBe(1_000);
        if (slot.lateMs !== null) expect(slot.lateMs, `slot ${slot.slot.toISOString()} started before its instant:\n${story}`).toBeGreaterThanOrEqual(0);
      }
    },
    SPAWNING_TIMEOUT_MS + TIMERS_AHEAD_MS + 60_000,
  );
});
