/**
 * `kairos fsck` over a live ledger holding every kind of run Kairos makes: single runs from a
 * schedule, a backfill and an ad-hoc call, multi-step runs from a schedule and ad hoc (with their
 * step runs), a sensor's evaluations and the runs they asked for, durable runs parked asleep and
 * waiting for a signal or an event, a run an event started, a run held back by its concurrency key,
 * and a run queued for its retry. A
 * healthy ledger of every kind has no finding, while the runs are active and once they ended.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KairosWorker } from '@kairos/sdk';
import { runCli } from '../../apps/cli/src/cli.js';
import { api, useKairos, waitFor, type ApiClient } from '../support/kairos.js';

const QUEUE = 'every-kind';
const handler = (name: string) => ({ type: 'handler', name, queue: QUEUE });
const noop = { type: 'handler', name: 'noop' };
const graph = [
  { name: 'a', target: noop },
  { name: 'b', dependsOn: ['a'], target: noop },
  { name: 'c', target: noop },
  { name: 'd', dependsOn: ['c'], target: noop },
];

describe('kairos fsck over every kind of run', () => {
  const { t, kairos } = useKairos();
  let client: ApiClient;
  let worker: KairosWorker;
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));

  const cli = async (...argv: string[]): Promise<{ code: number; out: string }> => {
    const lines: string[] = [];
    const code = await runCli(argv, { line: (l) => lines.push(l) }, { DATABASE_URL: t.databaseUrl });
    return { code, out: lines.join('\n') };
  };
  const count = async (sql: string, params: unknown[] = []): Promise<number> => (await t.db.query(`SELECT count(*)::int AS n FROM runs WHERE ${sql}`, params)).rows[0].n;

  beforeAll(async () => {
    client = api(kairos.url);
    worker = new KairosWorker({
      databaseUrl: t.databaseUrl,
      redisUrl: t.transport.kind === 'redis' ? t.transport.url : null,
      queuePrefix: t.redisPrefix,
      queue: QUEUE,
      concurrency: 8,
      handlers: {
        nap: async (ctx) => {
          await ctx.step('before', () => 1);
          await ctx.sleep('1h');
        },
        approval: async (ctx) => ctx.waitForSignal('approved', { timeout: '1h' }),
        shipment: async (ctx) => ctx.waitForEvent('order.shipped', { match: { 'data.orderId': 'o-1' }, timeout: '1h' }),
        hold: async () => released,
        'list-files': ({ cursor }) => ({ runs: [{ runKey: `file-${cursor ?? 0}`, payload: {} }], cursor: String(Number(cursor ?? 0) + 1) }),
      },
      logger: { log: () => undefined, warn: () => undefined, error: () => undefined },
    });
    await worker.start();
  });

  afterAll(async () => {
    release();
    await worker?.stop();
  });

  it('finds nothing while every kind is active, nor once they ended', async () => {
    const every = (await client.post('/v1/schedules', { name: 'single', cron: '* * * * * *', target: noop })).body;
    const steps = (await client.post('/v1/schedules', { name: 'graph', cron: '* * * * * *', steps: graph })).body;
    const backfill = await client.post(`/v1/schedules/${every.id}/backfill`, { from: new Date(Date.now() - 60_000).toISOString(), to: new Date(Date.now() - 55_000).toISOString() });
    expect(backfill.status).toBeLessThan(300);
    expect((await client.post('/v1/runs', { target: noop })).status).toBe(201);
    expect((await client.post('/v1/runs', { steps: graph })).status).toBe(201);
    expect((await client.post('/v1/sensors', { name: 'files', every: '1s', target: handler('list-files'), run: { target: noop } })).status).toBe(201);
    expect((await client.post('/v1/runs', { target: handler('nap') })).status).toBe(201);
    expect((await client.post('/v1/runs', { target: handler('approval') })).status).toBe(201);
    expect((await client.post('/v1/runs', { target: handler('shipment') })).status).toBe(201);
    expect((await client.post('/v1/schedules', { name: 'on-paid', on: { event: 'order.paid' }, target: noop })).status).toBe(201);
    expect((await client.post('/v1/events', { name: 'order.paid', data: { orderId: 'o-1' } })).status).toBe(202);
    const key = { key: 'only-one', limit: 1 };
    expect((await client.post('/v1/runs', { target: handler('hold'), concurrency: key })).status).toBe(201);
    expect((await client.post('/v1/runs', { target: handler('hold'), concurrency: key })).status).toBe(201);
    const retry = { maxAttempts: 3, backoff: { type: 'fixed', base: '1h' } };
    const failing = await client.post('/v1/runs', { target: { type: 'handler', name: 'fail' }, payload: { times: 5 }, retry });
    expect(failing.status).toBe(201);

    await waitFor(
      async () => {
        const kinds = await Promise.all([
          count(`schedule_id = $1 AND origin = 'schedule' AND state = 'succeeded'`, [every.id]),
          count(`origin = 'backfill' AND state = 'succeeded'`),
          count(`parent_run_id IN (SELECT id FROM runs WHERE schedule_id = $1) AND state = 'succeeded'`, [steps.id]),
          count(`origin = 'sensor' AND state = 'succeeded'`),
          count(`state = 'sleeping'`),
          count(`state = 'waiting'`),
          count(`state = 'waiting' AND id IN (SELECT run_id FROM event_waits)`),
          count(`origin = 'event' AND state = 'succeeded'`),
          count(`defer_reason = 'CONCURRENCY_LIMIT' AND state = 'queued'`),
          count(`id = $1 AND state = 'queued' AND attempt = 2 AND available_at > now() + interval '30 minutes'`, [failing.body.id]),
          count(`origin = 'manual' AND target->>'type' = 'steps' AND state = 'succeeded'`),
        ]);
        return kinds.every((n) => n >= 1) && kinds[2]! >= 8 ? kinds : undefined;
      },
      'a run of every kind',
      30_000,
      250,
    );
    expect(await cli('fsck')).toEqual({ code: 0, out: 'ledger ok: no invariant is broken' });

    // Everything ends: schedules and the sensor stop, the held runs finish, the parked ones are cancelled.
    for (const id of [every.id, steps.id]) expect((await client.post(`/v1/schedules/${id}/pause`)).status).toBe(200);
    const sensors = (await client.get('/v1/sensors')).body.items as { id: string }[];
    for (const { id } of sensors) expect((await client.post(`/v1/sensors/${id}/pause`)).status).toBe(200);
    release();
    const parked = (await t.db.query<{ id: string }>(`SELECT id FROM runs WHERE state IN ('sleeping', 'waiting')`)).rows.map((r) => r.id);
    for (const id of [...parked, failing.body.id]) expect((await client.post(`/v1/runs/${id}/cancel`)).status).toBeLessThan(300);
    let active: unknown[] = [];
    await waitFor(
      async () => {
        active = (await t.db.query(`SELECT id, origin, state, defer_reason, step_name, attempt, available_at FROM runs WHERE state IN ('queued', 'running', 'sleeping', 'waiting')`)).rows;
        return active.length === 0 ? true : undefined;
      },
      'every run to end',
      30_000,
      250,
    ).catch((error: Error) => {
      throw new Error(`${error.message}: ${JSON.stringify(active)}`);
    });
    expect(await cli('fsck')).toEqual({ code: 0, out: 'ledger ok: no invariant is broken' });
  });
});
