/**
 * ctx.waitForEvent on a user worker built from the packed @kairos/sdk: runs wait for the event of
 * their own order (`match: { 'data.orderId': ctx.payload.orderId }`) and POST /v1/events resumes
 * them. 200 events sent while their 200 waits are being recorded each resume exactly their run,
 * once, whether the wait looked back and found the event or the event found the parked wait; a
 * worker killed while runs wait changes nothing; a timeout answers null; an event whose values do
 * not fit the match leaves the wait alone; the n-th wait on a name gets its own event; a match that
 * is no match is refused.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { RunRepository } from '@kairos/ledger';
import type { StartedKairos } from '@kairos/process';
import { api, runInState, sleep, startInProcess, useTestEnvironment, waitFor } from '../support/kairos.js';
import { userProject, userWorkers, type UserProject } from './packed-sdk.js';

const WORKER_SCRIPT = `
import { appendFileSync } from 'node:fs';
import { KairosWorker, NonRetryableError } from '@kairos/sdk';

const log = (line) => appendFileSync('events.log', line + '\\n');

const worker = new KairosWorker({
  queue: 'orders',
  concurrency: Number(process.env.CONCURRENCY ?? 16),
  handlers: {
    'ship-order': async (ctx) => {
      // On its way to the wait: an event sent meanwhile must be found by the wait's look back.
      if (ctx.payload.dawdle) await new Promise((r) => setTimeout(r, Math.floor(Math.random() * ctx.payload.dawdle)));
      const shipment = await ctx.waitForEvent('order.shipped', {
        match: { 'data.orderId': ctx.payload.orderId },
        ...(ctx.payload.timeout ? { timeout: ctx.payload.timeout } : {}),
      });
      log('after ' + ctx.runId);
      return { orderId: ctx.payload.orderId, shipment, went: 'on' };
    },
    'count-ticks': async (ctx) => {
      // Each wait on the same name gets an event of its own, whichever way it comes.
      await ctx.step('pause', () => new Promise((r) => setTimeout(r, ctx.payload.pauseMs)));
      const ticks = [];
      for (let i = 0; i < 3; i++) ticks.push((await ctx.waitForEvent('tick', { match: { 'data.counter': ctx.payload.counter } })).data.n);
      return ticks;
    },
    'bad-match': async (ctx) => {
      await ctx.waitForEvent('order.shipped', { match: ctx.payload.match });
      return 'unreachable';
    },
  },
});
await worker.start();
console.log('ready ' + worker.id);
`;

interface EventView {
  id: string;
  name: string;
  data: unknown;
  receivedAt: string;
  deduped: boolean;
  runs: string[];
  skipped: unknown[];
  resumed: string[];
}

describe('ctx.waitForEvent on a user worker', () => {
  const t = useTestEnvironment();
  let control: StartedKairos;
  let client: ReturnType<typeof api>;
  let project: UserProject;
  const workers = userWorkers(t, () => project, { KAIROS_RUN_LEASE_TTL: '2s', KAIROS_SHUTDOWN_GRACE: '1s' });

  beforeAll(async () => {
    [project, control] = await Promise.all([userProject({ 'worker.mjs': WORKER_SCRIPT }), startInProcess(t.env({ KAIROS_RUN_LEASE_TTL: '2s' }))]);
    client = api(control.url);
  }, 300_000);

  afterEach(() => workers.killAll());

  afterAll(async () => {
    await control?.app.close();
    await project?.remove();
  });

  const createRuns = async (name: string, payloads: Record<string, unknown>[]): Promise<string[]> => {
    const created = await client.post('/v1/runs/batch', { items: payloads.map((payload) => ({ target: { type: 'handler', name, queue: 'orders' }, payload })) });
    expect(created.status).toBe(200);
    return created.body.items.map((i: { id: string }) => i.id);
  };
  const send = async (name: string, data: unknown, id?: string): Promise<EventView> => {
    const sent = await client.post('/v1/events', { name, data, ...(id ? { id } : {}) });
    expect(sent.status, JSON.stringify(sent.body)).toBe(202);
    return sent.body;
  };
  const event = async (id: string): Promise<EventView> => (await client.get(`/v1/events/${encodeURIComponent(id)}`)).body;
  const inState = async (ids: string[], state: string): Promise<number> =>
    (await t.db.query(`SELECT count(*)::int AS n FROM runs WHERE id = ANY($1::uuid[]) AND state = $2`, [ids, state])).rows[0].n;
  const allInState = (ids: string[], state: string, timeoutMs = 30_000) =>
    waitFor(async () => ((await inState(ids, state)) === ids.length ? true : undefined), `${ids.length} runs to be ${state}`, timeoutMs, 200);
  const afterWait = async (): Promise<Map<string, number>> => {
    const lines = (await readFile(join(project.dir, 'events.log'), 'utf8').catch(() => '')).split('\n').filter((l) => l.startsWith('after '));
    const counts = new Map<string, number>();
    for (const line of lines) counts.set(line.slice(6), (counts.get(line.slice(6)) ?? 0) + 1);
    return counts;
  };
  /** What became of the runs among `ids` that did not succeed, for a failure to tell. */
  const story = async (ids: string[]) => {
    const { rows } = await t.db.query(
      `SELECT r.id, r.state, r.payload->>'orderId' AS "orderId", r.attempt, r.crash_count,
              (SELECT json_agg(json_build_object('name', c.name, 'state', c.state, 'startedAt', c.started_at)) FROM run_checkpoints c WHERE c.run_id = r.id) AS checkpoints,
              (SELECT json_agg(json_build_object('since', w.since, 'match', w.match)) FROM event_waits w WHERE w.run_id = r.id) AS waits,
              (SELECT json_agg(json_build_object('kind', e.kind, 'at', e.at, 'epoch', e.lease_epoch) ORDER BY e.id) FROM run_events e WHERE e.run_id = r.id) AS events,
              r.started_at AS "startedAt",
              (SELECT json_agg(json_build_object('id', v.id, 'receivedAt', v.received_at, 'resumed', v.resumed)) FROM events v WHERE v.data->>'orderId' = r.payload->>'orderId') AS sent
       FROM runs r WHERE r.id = ANY($1::uuid[]) AND r.state <> 'succeeded' LIMIT 5`,
      [ids],
    );
    return rows;
  };
  const view = (e: EventView) => ({ id: e.id, name: e.name, data: e.data, receivedAt: e.receivedAt });

  it('resumes each of 200 runs with its own order’s event, sent while the waits are being recorded, exactly once', async () => {
    // Leases long enough that a busy machine does not reap an attempt on its way to the wait: the
    // wait looks back to the start of its own attempt, so an event sent during an attempt that
    // was lost before recording its wait would be missed by the next one (not what this test is about).
    await workers.start({ CONCURRENCY: '32', KAIROS_RUN_LEASE_TTL: '30s' });
    const orders = Array.from({ length: 200 }, (_, i) => `burst-${i}`);
    const ids = await createRuns(
      'ship-order',
      orders.map((orderId) => ({ orderId, dawdle: 150 })),
    );
    const runOf = new Map(orders.map((o, i) => [o, ids[i]!]));

    // Each order's event goes out as soon as its run's attempt has begun (the wait looks back to
    // the attempt's start, not before it): most while the handler is on its way to the wait or the
    // wait is being recorded, the rest once the run is parked. None waits for the others.
    const sending: Promise<EventView>[] = [];
    const sent = new Set<string>();
    while (sent.size < orders.length) {
      const { rows } = await t.db.query<{ orderId: string }>(`SELECT payload->>'orderId' AS "orderId" FROM runs WHERE id = ANY($1::uuid[]) AND started_at IS NOT NULL`, [ids]);
      for (const { orderId } of rows) {
        if (sent.has(orderId)) continue;
        sent.add(orderId);
        sending.push(send('order.shipped', { orderId, carrier: 'ups' }, `shipped-${orderId}`));
      }
      await sleep(5);
    }
    const answers = await Promise.all(sending);
    const woke = answers.filter((a) => a.resumed.length > 0).length;
    console.log(`order.shipped: ${woke} of ${answers.length} events resumed a parked wait, the other waits found their event looking back`);

    await waitFor(async () => ((await inState(ids, 'succeeded')) === ids.length ? true : undefined), 'all 200 runs to succeed', 90_000, 250).catch(async (error: Error) => {
      throw new Error(`${error.message}; the others: ${JSON.stringify(await story(ids))}`);
    });
    const counts = await afterWait();
    for (const orderId of orders) {
      const runId = runOf.get(orderId)!;
      const run = (await client.get(`/v1/runs/${runId}`)).body;
      const stored = await event(`shipped-${orderId}`);
      expect(run).toMatchObject({ state: 'succeeded', result: { orderId, shipment: view(stored), went: 'on' } });
      expect(run.checkpoints).toMatchObject([{ name: 'event:order.shipped', kind: 'event', state: 'received', result: view(stored) }]);
      expect(stored.resumed, `the event of ${orderId}`).toEqual([runId]);
      expect(counts.get(runId), `the handler past the wait for ${orderId}`).toBe(1);
    }
    expect([...counts.keys()].filter((id) => ids.includes(id))).toHaveLength(200);
  }, 180_000);

  it('changes nothing when the worker is killed while runs wait: events sent afterwards resume them on another worker', async () => {
    const first = await workers.start();
    const orders = Array.from({ length: 20 }, (_, i) => `crash-${i}`);
    const ids = await createRuns(
      'ship-order',
      orders.map((orderId) => ({ orderId })),
    );
    await allInState(ids, 'waiting');
    first.process.kill('SIGKILL');
    await first.exited;
    const second = await workers.start();

    for (const [i, orderId] of orders.entries()) expect((await send('order.shipped', { orderId }, `shipped-${orderId}`)).resumed).toEqual([ids[i]]);
    await allInState(ids, 'succeeded');
    for (const [i, orderId] of orders.entries()) {
      const run = (await client.get(`/v1/runs/${ids[i]}`)).body;
      expect(run.result.shipment).toEqual(view(await event(`shipped-${orderId}`)));
      expect(run.crashCount).toBe(0);
      const story = await new RunRepository().events(t.db, ids[i]!);
      expect(story.filter((e) => e.kind === 'claimed').map((e) => e.actor)).toEqual([first.id, second.id]);
    }
    const counts = await afterWait();
    for (const id of ids) expect(counts.get(id)).toBe(1);
  }, 90_000);

  it('answers null once the timeout passes without an event, and the run goes on', async () => {
    await workers.start();
    const [runId] = await createRuns('ship-order', [{ orderId: 'never-shipped', timeout: '1s' }]);
    const waiting = await runInState(client, runId!, 'waiting', 20_000);
    expect(waiting.checkpoints).toMatchObject([{ name: 'event:order.shipped', kind: 'event', state: 'waiting' }]);
    const done = await runInState(client, runId!, ['succeeded', 'dead', 'cancelled'], 20_000);
    expect(done).toMatchObject({ state: 'succeeded', result: { orderId: 'never-shipped', shipment: null, went: 'on' } });
    expect(done.checkpoints).toMatchObject([{ name: 'event:order.shipped', kind: 'event', state: 'timed_out', result: null }]);
    const checkpoint = done.checkpoints[0];
    expect(Date.parse(checkpoint.wakeAt) - Date.parse(checkpoint.startedAt)).toBeGreaterThan(800);
    expect(Date.parse(checkpoint.finishedAt)).toBeGreaterThanOrEqual(Date.parse(checkpoint.wakeAt));
    // Its wait is gone: a matching event sent now resumes nothing.
    expect((await send('order.shipped', { orderId: 'never-shipped' })).resumed).toEqual([]);
    expect((await afterWait()).get(runId!)).toBe(1);
  }, 60_000);

  it('leaves a wait alone for an event whose values do not fit its match, and resumes it with a later one that does', async () => {
    await workers.start();
    const [runId] = await createRuns('ship-order', [{ orderId: 'picky-1' }]);
    await runInState(client, runId!, 'waiting', 20_000);
    const other = await send('order.shipped', { orderId: 'picky-2' });
    const asText = await send('order.shipped', { orderId: ['picky-1'] });
    const otherName = await send('order.delivered', { orderId: 'picky-1' });
    for (const e of [other, asText, otherName]) expect(e.resumed).toEqual([]);
    await sleep(1_000);
    expect((await client.get(`/v1/runs/${runId}`)).body).toMatchObject({ state: 'waiting', checkpoints: [{ name: 'event:order.shipped', state: 'waiting' }] });

    const fits = await send('order.shipped', { orderId: 'picky-1', carrier: 'dhl' });
    expect(fits.resumed).toEqual([runId]);
    const done = await runInState(client, runId!, ['succeeded', 'dead', 'cancelled'], 20_000);
    expect(done).toMatchObject({ state: 'succeeded', result: { shipment: view(fits) } });
    for (const e of [other, asText, otherName]) expect((await event(e.id)).resumed).toEqual([]);
  }, 60_000);

  it('gives each wait on the same name an event of its own, found looking back or resuming the parked wait', async () => {
    await workers.start();
    const [runId] = await createRuns('count-ticks', [{ counter: 'c-1', pauseMs: 1_500 }]);
    await runInState(client, runId!, 'running', 20_000);
    // Two ticks while the handler pauses before its first wait: the first two waits find them looking back.
    const first = await send('tick', { counter: 'c-1', n: 1 });
    const second = await send('tick', { counter: 'c-1', n: 2 });
    await runInState(client, runId!, 'waiting', 20_000);
    const third = await send('tick', { counter: 'c-1', n: 3 });
    expect(third.resumed).toEqual([runId]);
    const done = await runInState(client, runId!, ['succeeded', 'dead', 'cancelled'], 20_000);
    expect(done).toMatchObject({ state: 'succeeded', result: [1, 2, 3] });
    expect(done.checkpoints.map((c: { name: string; state: string }) => `${c.name}:${c.state}`)).toEqual([
      'pause:succeeded',
      'event:tick:received',
      'event:tick#2:received',
      'event:tick#3:received',
    ]);
    for (const [e, n] of [
      [first, 1],
      [second, 2],
      [third, 3],
    ] as const) {
      expect(done.checkpoints[n].result).toEqual(view(e));
      expect((await event(e.id)).resumed).toEqual([runId]);
    }
  }, 60_000);

  it('refuses a match that is not dotted paths from data, name or id, ending the run dead', async () => {
    await workers.start();
    const refusals: [unknown, RegExp][] = [
      [{ orderId: 'x' }, /match path "orderId" must be a dotted path into the event starting at data, name or id/],
      [{ receivedAt: 'x' }, /match path "receivedAt" must be a dotted path/],
      [['data.orderId'], /match must be an object of dotted paths to values/],
      ['data.orderId', /match must be an object of dotted paths to values/],
    ];
    const ids = await createRuns(
      'bad-match',
      refusals.map(([match]) => ({ match })),
    );
    for (const [i, [, message]] of refusals.entries()) {
      const done = await runInState(client, ids[i]!, ['succeeded', 'dead', 'cancelled'], 20_000);
      expect(done).toMatchObject({ state: 'dead', reasonCode: 'HANDLER_NON_RETRYABLE', attempt: 1 });
      expect(done.reasonText).toMatch(message);
    }
  }, 60_000);
});
