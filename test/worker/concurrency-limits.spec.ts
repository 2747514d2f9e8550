/**
 * Concurrency keys and queue limits, end to end on the built-in worker: 500 runs over 20 customers
 * with a key of limit 1 never run two of one customer at once (checked from the ledger's start and
 * finish instants), all finish, and a freed place is taken at once; `maxRunning: 3` over three
 * workers of concurrency 8 never runs more than 3; a rate of 20 a second never starts more than 20
 * in any second; a worker killed mid-run gives its place back when the reaper takes its run; a run
 * held back shows why, and a held run that is cancelled ends at once.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { StartedKairos } from '@kairos/process';
import { api, runInState, spawnKairos, startInProcess, useTestEnvironment, waitFor, type KairosChild } from '../support/kairos.js';
import { allSucceeded, createRuns, percentile } from '../support/run-batches.js';
import { allowance, watchMachineLag } from '../support/timer-lag.js';

interface Span {
  id: string;
  key: string;
  startedAt: Date;
  finishedAt: Date;
  createdAt: Date;
}

describe('concurrency keys and queue limits', () => {
  const t = useTestEnvironment();
  const started: StartedKairos[] = [];
  const children: KairosChild[] = [];

  afterEach(async () => {
    for (const child of children.splice(0)) child.process.kill('SIGKILL');
    await Promise.all(started.splice(0).map((k) => k.app.close()));
  });

  async function start(env: Record<string, string> = {}, roles?: ('api' | 'scheduler' | 'worker')[]): Promise<StartedKairos> {
    const kairos = await startInProcess(t.env(env), roles);
    started.push(kairos);
    // The leader's relay hands over what a freed place releases: measure from when it leads.
    await waitFor(async () => ((await t.db.query(`SELECT 1 FROM leases WHERE name = 'scheduler' AND expires_at > now()`)).rowCount ? true : undefined), 'a leading scheduler');
    return kairos;
  }

  async function spans(ids: readonly string[]): Promise<Span[]> {
    const { rows } = await t.db.query<Span>(
      `SELECT id, concurrency_key AS key, started_at AS "startedAt", finished_at AS "finishedAt", created_at AS "createdAt"
       FROM runs WHERE id = ANY($1::uuid[]) ORDER BY started_at, id`,
      [ids],
    );
    return rows;
  }

  it('500 runs over 20 customers with limit 1: never two of one customer at once, all finish, a freed place is taken within 100 ms p99 (plus what the machine held back)', async () => {
    const kairos = await start();
    const client = api(kairos.url);
    const lag = await watchMachineLag();
    const bodies = Array.from({ length: 500 }, (_, i) => ({
      target: { type: 'handler', name: 'sleep' },
      payload: { ms: 5 + ((i * 7) % 21), customerId: `c${i % 20}` },
      concurrency: { key: 'customer-{{payload.customerId}}', limit: 1 },
    }));
    const ids = await createRuns(client, bodies);
    await allSucceeded(t.db, ids, 120_000);

    const byCustomer = new Map<string, Span[]>();
    for (const span of await spans(ids)) byCustomer.set(span.key, [...(byCustomer.get(span.key) ?? []), span]);
    expect([...byCustomer.keys()].sort()).toEqual(Array.from({ length: 20 }, (_, i) => `customer-c${i}`).sort());
    const gaps: number[] = [];
    for (const [key, runs] of byCustomer) {
      expect(runs).toHaveLength(25);
      for (let i = 1; i < runs.length; i++) {
        const previous = runs[i - 1]!;
        const next = runs[i]!;
        expect(next.startedAt.getTime(), `${key}: run ${next.id} started before ${previous.id} ended`).toBeGreaterThanOrEqual(previous.finishedAt.getTime());
        // It waited while its customer had no running run from the end of the one before (it was created long before).
        gaps.push(next.startedAt.getTime() - Math.max(previous.finishedAt.getTime(), next.createdAt.getTime()));
      }
    }
    // A hand-over is a verdict, a release and a claim: the machine may hold each back (timer-lag.ts).
    const machine = await lag.stop();
    const bound = 100 + allowance(machine);
    console.info(`idle gaps of a customer's runs over ${gaps.length} hand-overs: p50 ${percentile(gaps, 50)} ms, p99 ${percentile(gaps, 99)} ms, max ${Math.max(...gaps)} ms (bound ${bound} ms: ${machine.describe()})`);
    expect(percentile(gaps, 99), `idle gaps (ms) p50 ${percentile(gaps, 50)}, max ${Math.max(...gaps)}; ${machine.describe()}`).toBeLessThanOrEqual(bound);
    // Every run held back says so in its story, and was released.
    const { rows: events } = await t.db.query<{ held: number; released: number }>(
      `SELECT count(*) FILTER (WHERE kind = 'held')::int AS held, count(*) FILTER (WHERE kind = 'released')::int AS released
       FROM run_events WHERE run_id = ANY($1::uuid[])`,
      [ids],
    );
    expect(events[0]!.held).toBeGreaterThan(0);
    expect(events[0]!.released).toBeGreaterThan(0);
  }, 180_000);

  it('maxRunning 3 over three workers of concurrency 8 never runs more than 3, and a rate of 20 a second never starts more than 20 in a second', async () => {
    const control = await start({ KAIROS_WORKER_CONCURRENCY: '8' });
    await start({ KAIROS_WORKER_CONCURRENCY: '8' }, ['worker']);
    await start({ KAIROS_WORKER_CONCURRENCY: '8' }, ['worker']);
    const client = api(control.url);

    expect((await client.put('/v1/queues/default', { maxRunning: 3 })).status).toBe(200);
    const limited = await createRuns(client, Array.from({ length: 60 }, () => ({ target: { type: 'handler', name: 'sleep' }, payload: { ms: 60 } })));
    // Whichever runs a worker tried while three ran are held: the API shows one of them waiting, and why.
    const held = await waitFor(async () => {
      const { rows } = await t.db.query<{ id: string }>(`SELECT id FROM runs WHERE id = ANY($1::uuid[]) AND defer_reason = 'QUEUE_LIMIT' AND state = 'queued' LIMIT 1`, [limited]);
      const run = rows[0] && (await client.get(`/v1/runs/${rows[0].id}`)).body;
      return run?.deferReason === 'QUEUE_LIMIT' ? run : undefined;
    }, 'a run held back by the queue limit', 15_000, 20);
    expect(held.state).toBe('queued');
    await allSucceeded(t.db, limited, 60_000);
    const limitedSpans = await spans(limited);
    // At every start, the runs whose span covers it (started before or at it, not yet finished).
    const overlapAt = (at: Date, all: Span[]): number => all.filter((s) => s.startedAt <= at && s.finishedAt > at).length;
    expect(Math.max(...limitedSpans.map((s) => overlapAt(s.startedAt, limitedSpans)))).toBe(3);

    expect((await client.put('/v1/queues/default', { maxRunning: null, rate: { max: 20, per: '1s' } })).status).toBe(200);
    const paced = await createRuns(client, Array.from({ length: 70 }, () => ({ target: { type: 'handler', name: 'noop' } })));
    await allSucceeded(t.db, paced, 60_000);
    const starts = (await spans(paced)).map((s) => s.startedAt.getTime());
    // In every window of one second (each opened at a start), at most 20 starts.
    const densest = Math.max(...starts.map((from) => starts.filter((at) => at >= from && at < from + 1_000).length));
    expect(densest).toBeLessThanOrEqual(20);
    expect(densest).toBeGreaterThanOrEqual(15);
    // 70 starts at 20 a second take at least three full windows.
    expect(Math.max(...starts) - Math.min(...starts)).toBeGreaterThanOrEqual(3_000);
  }, 180_000);

  it('a place held by a worker killed mid-run is given back when the reaper takes its run, and the held run starts', async () => {
    const control = await start({ KAIROS_RUN_LEASE_TTL: '2s', KAIROS_REAPER_SKEW: '300ms' }, ['api', 'scheduler']);
    const client = api(control.url);
    const victim = spawnKairos('worker', t.env({ KAIROS_RUN_LEASE_TTL: '2s', KAIROS_WORKER_CONCURRENCY: '4' }));
    children.push(victim);
    await victim.ready;
    const key = { key: 'tenant-{{payload.tenant}}', limit: 1 };
    const [first] = await createRuns(client, [{ target: { type: 'handler', name: 'sleep' }, payload: { ms: 1_500, tenant: 't' }, concurrency: key, retry: { maxAttempts: 1 } }]);
    await runInState(client, first!, 'running');
    const [second] = await createRuns(client, [{ target: { type: 'handler', name: 'noop' }, payload: { tenant: 't' }, concurrency: key }]);
    expect((await client.get(`/v1/runs/${second}`)).body.deferReason).toBe('CONCURRENCY_LIMIT');
    victim.process.kill('SIGKILL');
    await victim.exited;
    await start({ KAIROS_RUN_LEASE_TTL: '2s' }, ['worker']);
    // The reaper requeues the first run and frees its place: the second starts; the first runs again after it.
    await allSucceeded(t.db, [first!, second!], 30_000);
    const [reaped, b] = await Promise.all([first, second].map(async (id) => (await t.db.query(`SELECT started_at, finished_at, crash_count FROM runs WHERE id = $1`, [id])).rows[0]));
    expect(reaped.crash_count).toBe(1);
    const events = (await t.db.query(`SELECT kind FROM run_events WHERE run_id = $1 ORDER BY id`, [second])).rows.map((e) => e.kind);
    expect(events).toEqual(expect.arrayContaining(['held', 'released']));
    // Never both running: the second ran while the first waited requeued, or after it.
    const { rows: overlap } = await t.db.query(
      `SELECT count(*)::int AS n FROM run_events e WHERE e.run_id = $1 AND e.kind = 'claimed' AND e.at < $2 AND e.at > $3`,
      [first, b.finished_at, b.started_at],
    );
    expect(overlap[0].n).toBe(0);
  }, 90_000);

  it('a held run shows why, is cancelled at once, and a key the payload cannot resolve is a 400 that changes nothing', async () => {
    const kairos = await start();
    const client = api(kairos.url);
    const [long] = await createRuns(client, [{ target: { type: 'handler', name: 'sleep' }, payload: { ms: 5_000, who: 'a' }, concurrency: { key: 'who-{{payload.who}}', limit: 1 } }]);
    await runInState(client, long!, 'running');
    const [waiting] = await createRuns(client, [{ target: { type: 'handler', name: 'noop' }, payload: { who: 'a' }, concurrency: { key: 'who-{{payload.who}}', limit: 1 } }]);
    const held = await waitFor(async () => {
      const run = (await client.get(`/v1/runs/${waiting}`)).body;
      return run.deferReason === 'CONCURRENCY_LIMIT' ? run : undefined;
    }, 'the second run held back');
    expect(held).toMatchObject({ state: 'queued', concurrency: { key: 'who-a', limit: 1 } });
    expect((await client.post(`/v1/runs/${waiting}/cancel`)).status).toBeLessThan(300);
    expect((await runInState(client, waiting!, ['cancelled'])).reasonCode).toBe('CANCELLED_BY_USER');

    const before = (await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM runs')).rows[0]!.n;
    const refused = await client.post('/v1/runs', { target: { type: 'handler', name: 'noop' }, payload: { other: 1 }, concurrency: { key: 'who-{{payload.who}}' } });
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ code: 'VALIDATION_FAILED', field: 'concurrency.key' });
    expect(refused.body.message).toContain('payload.who');
    const badTemplate = await client.post('/v1/runs', { target: { type: 'handler', name: 'noop' }, concurrency: { key: 'x-{{customer}}', limit: 1 } });
    expect(badTemplate.status).toBe(400);
    expect(badTemplate.body.field).toBe('concurrency.key');
    const badLimit = await client.post('/v1/schedules', { every: '1m', target: { type: 'handler', name: 'noop' }, payload: { who: 'b' }, concurrency: { key: 'who-{{payload.who}}', limit: 0 } });
    expect(badLimit.status).toBe(400);
    expect(badLimit.body.field).toBe('concurrency.limit');
    expect((await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM runs')).rows[0]!.n).toBe(before);
  }, 60_000);
});
