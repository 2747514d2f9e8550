/**
 * What the engine tests share. The workload every engine test runs while it breaks the engine: an every-second schedule and a
 * burst of ad-hoc runs whose HTTP target counts each call by run id. `audit` then checks that nothing
 * was lost or doubled: every run succeeded and its target was called exactly once, and the schedule
 * fired each slot of the window once, without a gap.
 */
import { createServer, type Server } from 'node:http';
import { expect } from 'vitest';
import { MAX_BATCH_ITEMS } from '@kairos/domain/wire';
import { api, waitFor, type TestEnvironment } from '../support/kairos.js';

/** A Kairos process may call the receiver on loopback. */
export const ALLOW_LOOPBACK = { KAIROS_HTTP_ALLOWLIST: '127.0.0.1' };

export interface Workload {
  scheduleId: string;
  runIds: string[];
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
  const target = { type: 'http', url: `http://127.0.0.1:${(server.address() as { port: number }).port}/hook`, method: 'POST' };
  const client = api(baseUrl);
  const schedule = await client.post('/v1/schedules', {
    name: 'every-second',
    every: '1s',
    target: { type: 'handler', name: 'noop' },
    catchup: { mode: 'all' },
    overlap: 'allow',
  });
  expect(schedule.status, JSON.stringify(schedule.body)).toBe(201);
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
  return { scheduleId: schedule.body.id, runIds, calls, submit, stop: () => new Promise((resolve) => server.close(() => resolve())) };
}

/**
 * Waits for every ad-hoc run to succeed, then checks the target saw each once and the schedule
 * fired every slot from its first to `until` once, each run succeeded, the slots spanning the
 * instant `across` at which the engine broke.
 */
export async function audit(t: TestEnvironment, workload: Workload, window: { across: number; until: number }, timeoutMs = 120_000): Promise<void> {
  const { across, until } = window;
  await waitFor(
    async () => {
      const { rows } = await t.db.query(`SELECT count(*)::int AS n FROM runs WHERE id = ANY($1::uuid[]) AND state = 'succeeded'`, [workload.runIds]);
      return rows[0].n === workload.runIds.length ? true : undefined;
    },
    `the ${workload.runIds.length} ad-hoc runs to succeed`,
    timeoutMs,
    250,
  );
  const counts = workload.runIds.map((id) => workload.calls.get(id) ?? 0);
  expect(counts.filter((n) => n !== 1).length, 'runs whose target was not called exactly once').toBe(0);
  expect(workload.calls.size).toBe(workload.runIds.length);

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
}

/** Resolves once the schedule has run `n` slots: the workload is under way. */
export async function slotsRan(t: TestEnvironment, workload: Workload, n: number): Promise<void> {
  await waitFor(
    async () => {
      const { rows } = await t.db.query(`SELECT count(*)::int AS n FROM runs WHERE schedule_id = $1 AND state = 'succeeded'`, [workload.scheduleId]);
      return rows[0].n >= n ? true : undefined;
    },
    `${n} slots to run`,
    30_000,
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
