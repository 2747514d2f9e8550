/**
 * What the engine tests share. The workload every engine test runs while it breaks the engine: an
 * every-second schedule, an every-second four-step graph (a -> b, c -> d), and a burst of ad-hoc runs
 * whose HTTP target counts each call by run id. `audit` then checks that nothing was lost or
 * doubled: every run succeeded and its target was called once (again only after the worker
 * holding it died, once per such crash, as at-least-once delivery allows), the schedule fired each slot
 * of the window once, without a gap, every graph ran its four steps, and `fsck` finds nothing.
 */
import { createServer, type Server } from 'node:http';
import { expect } from 'vitest';
import { MAX_BATCH_ITEMS } from '@kairos/domain/wire';
import { fsck } from '@kairos/ledger';
import { api, waitFor, type TestEnvironment } from '../support/kairos.js';

/** A Kairos process may call the receiver on loopback. */
export const ALLOW_LOOPBACK = { KAIROS_HTTP_ALLOWLIST: '127.0.0.1' };

/**
 * Run leases for the workload: the tests' fast 3 s lease expires under a worker that a busy machine
 * holds back for a few seconds, and its run is then executed again (at least once, as documented),
 * which the exactly-once count would flag. 10 s, as in production's order of magnitude (30 s).
 */
export const WORKLOAD_LEASES = { KAIROS_RUN_LEASE_TTL: '10s' };

export interface Workload {
  scheduleId: string;
  graphScheduleId: string;
  runIds: string[];
  /** The HTTP target of the ad-hoc runs: the receiver that counts calls. */
  target: { type: 'http'; url: string; method: 'POST' };
  /** Calls the receiver got, by run id. */
  calls: Map<string, number>;
  /** Submits `count` ad-hoc runs (in batches of the most one request may carry). */
  submit(count: number): Promise<void>;
  stop(): Promise<void>;
}

/** Starts the every-second schedule on the API at `baseUrl`, and a receiver for the ad-hoc runs' HTTP target. */
export async function startWorkload(baseUrl: string): Promise<Workload> {
  const calls = new Map<string, number>();
  const server: Server = createServer((req, res) => {
    const id = String(req.headers['kairos-run-id']);
    calls.set(id, (calls.get(id) ?? 0) + 1);
    req.resume();
    req.on('end', () => res.writeHead(204).end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const target: Workload['target'] = { type: 'http', url: `http://127.0.0.1:${(server.address() as { port: number }).port}/hook`, method: 'POST' };
  const client = api(baseUrl);
  const schedule = await client.post('/v1/schedules', {
    name: 'every-second',
    every: '1s',
    target: { type: 'handler', name: 'noop' },
    catchup: { mode: 'all' },
    overlap: 'allow',
  });
  expect(schedule.status, JSON.stringify(schedule.body)).toBe(201);
  const noop = { type: 'handler', name: 'noop' };
  const graph = await client.post('/v1/schedules', {
    name: 'every-second-graph',
    every: '1s',
    steps: [
      { name: 'a', target: noop },
      { name: 'b', dependsOn: ['a'], target: noop },
      { name: 'c', target: noop },
      { name: 'd', dependsOn: ['c'], target: noop },
    ],
    overlap: 'allow',
  });
  expect(graph.status, JSON.stringify(graph.body)).toBe(201);
  const runIds: string[] = [];
  const submit = async (count: number): Promise<void> => {
    for (let sent = 0; sent < count; sent += MAX_BATCH_ITEMS) {
      const items = Array.from({ length: Math.min(MAX_BATCH_ITEMS, count - sent) }, () => ({ target, payload: { n: runIds.length } }));
      const answer = await client.post('/v1/runs/batch', { items });
      expect(answer.status, JSON.stringify(answer.body).slice(0, 500)).toBe(200);
      for (const item of answer.body.items) {
        expect(item.id, JSON.stringify(item.error)).toBeTypeOf('string');
        runIds.push(item.id);
      }
    }
  };
  return { scheduleId: schedule.body.id, graphScheduleId: graph.body.id, runIds, target, calls, submit, stop: () => new Promise((resolve) => server.close(() => resolve())) };
}

/**
 * Waits for every ad-hoc run to succeed, then checks the target saw each once and the schedule
 * fired every slot from its first to `until` once, each run succeeded, the slots spanning the
 * instant `across` at which the engine broke.
 */
export async function audit(t: TestEnvironment, workload: Workload, window: { across: number; until: number }, timeoutMs = 120_000): Promise<void> {
  const { across, until } = window;
  const waitingSince = Date.now();
  await waitFor(
    async () => {
      const { rows } = await t.db.query(`SELECT count(*)::int AS n FROM runs WHERE id = ANY($1::uuid[]) AND state = 'succeeded'`, [workload.runIds]);
      return rows[0].n === workload.runIds.length ? true : undefined;
    },
    `the ${workload.runIds.length} ad-hoc runs to succeed`,
    timeoutMs,
    250,
  ).catch(async (error: Error) => {
    // Why each run left is still waiting: its state, defer reason, hand-over to the transport and lease.
    const { rows } = await t.db.query(
      `SELECT id, state, attempt, defer_reason, available_at, enqueued_at, lease_owner, lease_epoch, lease_expires_at, reason_code
         FROM runs WHERE id = ANY($1::uuid[]) AND state <> 'succeeded' ORDER BY available_at LIMIT 20`,
      [workload.runIds],
    );
    throw new Error(`${error.message}; left:\n${rows.map((r) => JSON.stringify(r)).join('\n')}`);
  });
  console.info(`audit: every ad-hoc run had succeeded ${Date.now() - waitingSince} ms after the audit began`);
  // Each run's target was called once, but for a run whose holder died (or froze past its lease)
  // after the call and before its verdict: the reaper gave it to another worker, which called again
  // (at least once, with the same Idempotency-Key). Such a run counts the crash; none was lost.
  expect(workload.calls.size).toBe(workload.runIds.length);
  const again = workload.runIds.filter((id) => workload.calls.get(id) !== 1);
  const { rows: reaped } = await t.db.query(`SELECT id, crash_count AS "crashCount" FROM runs WHERE id = ANY($1::uuid[])`, [again]);
  const crashes = new Map(reaped.map((r: { id: string; crashCount: number }) => [r.id, r.crashCount]));
  const unexplained = again.filter((id) => (workload.calls.get(id) ?? 0) < 1 || (workload.calls.get(id) ?? 0) - 1 > (crashes.get(id) ?? 0));
  expect(unexplained.map((id) => `${id}: ${workload.calls.get(id) ?? 0} calls, ${crashes.get(id) ?? 0} crashes`), 'runs called other than once per execution').toEqual([]);
  if (again.length > 0) console.info(`audit: ${again.length} runs were executed again after their worker died holding them`);

  // The schedule: one tick per slot, a second apart, each with one run that succeeded.
  await waitFor(
    async () => {
      const { rows } = await t.db.query(
        `SELECT count(*)::int AS n FROM runs WHERE schedule_id = $1 AND scheduled_for <= to_timestamp($2 / 1000.0) AND state <> 'succeeded'`,
        [workload.scheduleId, until],
      );
      return rows[0].n === 0 ? true : undefined;
    },
    'the slots up to the end of the workload to run',
    30_000,
  );
  const ticks = (
    await t.db.query(`SELECT scheduled_for, outcome FROM ticks WHERE schedule_id = $1 AND scheduled_for <= to_timestamp($2 / 1000.0) ORDER BY scheduled_for`, [
      workload.scheduleId,
      until,
    ])
  ).rows;
  const slots = ticks.map((tk) => new Date(tk.scheduled_for).getTime());
  expect(slots[0]).toBeLessThan(across);
  expect(slots.at(-1)).toBeGreaterThan(across);
  for (let i = 1; i < slots.length; i++) expect(slots[i]! - slots[i - 1]!).toBe(1_000);
  expect(ticks.every((tk) => tk.outcome === 'triggered')).toBe(true);
  const runs = (
    await t.db.query(`SELECT scheduled_for, state FROM runs WHERE schedule_id = $1 AND scheduled_for <= to_timestamp($2 / 1000.0)`, [workload.scheduleId, until])
  ).rows;
  expect(runs.length).toBe(slots.length);
  expect(new Set(runs.map((r) => new Date(r.scheduled_for).getTime())).size).toBe(runs.length);

  // The graph: every run of a slot up to `until` ends succeeded with its four steps succeeded once.
  const graphs = await waitFor(
    async () => {
      const { rows } = await t.db.query(
        `SELECT g.id, g.state, (SELECT count(*)::int FROM runs s WHERE s.parent_run_id = g.id AND s.state = 'succeeded') AS steps
           FROM runs g WHERE g.schedule_id = $1 AND g.scheduled_for <= to_timestamp($2 / 1000.0)`,
        [workload.graphScheduleId, until],
      );
      return rows.every((g) => g.state === 'succeeded') ? rows : undefined;
    },
    'the graphs up to the end of the workload to run',
    30_000,
  );
  expect(graphs.length).toBeGreaterThan(0);
  expect(graphs.filter((g) => g.steps !== 4)).toEqual([]);
  expect(await fsck(t.db)).toEqual([]);
}

/** Resolves once the schedule has run `n` slots: the workload is under way. */
export async function slotsRan(t: TestEnvironment, workload: Workload, n: number): Promise<void> {
  await waitFor(
    async () => {
      const { rows } = await t.db.query(`SELECT count(*)::int AS n FROM runs WHERE schedule_id = $1 AND state = 'succeeded'`, [workload.scheduleId]);
      return rows[0].n >= n ? true : undefined;
    },
    `${n} slots to run`,
    // A slot's run may queue behind the workload's backlog on a busy machine: the bound is liveness, not speed.
    60_000,
  );
}

/**
 * Waits for the Kairos process at `base` to answer /health/ready with 503 and Postgres down, and
 * answers what it said about Postgres.
 */
export function postgresReportedDown(base: string): Promise<{ status: string; message?: string }> {
  return waitFor(
    async () => {
      const response = await fetch(`${base}/health/ready`).catch(() => null);
      if (response?.status !== 503) return undefined;
      const body = (await response.json()) as { details: Record<string, { status: string; message?: string }> };
      return body.details.postgres?.status === 'down' ? body.details.postgres : undefined;
    },
    'readiness to report Postgres down',
    10_000,
  );
}

/** Waits for the Kairos process at `base` to be ready again; if it is not, the error gives its last answer. */
export async function readyAgain(base: string): Promise<void> {
  let last = 'no answer';
  await waitFor(
    async () => {
      const response = await fetch(`${base}/health/ready`).catch((error: Error) => error);
      if (response instanceof Error) {
        last = response.message;
        return undefined;
      }
      last = `${response.status} ${await response.text()}`;
      return response.status === 200 ? true : undefined;
    },
    'readiness to recover',
    30_000,
  ).catch((error: Error) => {
    throw new Error(`${error.message}; /health/ready last answered: ${last}`);
  });
}
