/**
 * Bulk creation: POST /v1/schedules/batch and POST /v1/runs/batch answer each item in order with
 * what its single route would have answered (the view, or the error's code and field), store
 * nothing of a refused item, go on with the others, and honour idempotency keys per item. GraphQL's
 * createSchedules and createRuns and the SDK client's createMany say the same.
 */
import { describe, expect, it } from 'vitest';
import { KairosClient, isRefusal } from '@kairos/sdk';
import { runInState, useKairos } from '../support/kairos.js';

const echo = { type: 'handler', name: 'echo' };

describe('batch creation', () => {
  const { t, kairos, client } = useKairos();

  const count = async (sql: string, params: unknown[] = []): Promise<number> => (await t.db.query(sql, params)).rows[0].n as number;

  it('creates runs item by item: each answered in order as POST /v1/runs answers it, the refused ones storing nothing', async () => {
    const first = await client.post('/v1/runs', { target: echo, payload: { n: 'before' }, idempotencyKey: 'batch-run-seen' });
    expect(first.status).toBe(201);
    const items = [
      { target: echo, payload: { n: 0 } },
      { target: echo, timeout: 'forever' },
      { target: { type: 'handler', name: 'nobody-has-this' } },
      { target: echo, payload: { n: 'before' }, idempotencyKey: 'batch-run-seen' },
      { target: echo, payload: { n: 'other' }, idempotencyKey: 'batch-run-seen' },
      { target: echo, payload: { n: 5 }, idempotencyKey: 'batch-run-new' },
      { target: echo, payload: { n: 5 }, idempotencyKey: 'batch-run-new' },
      [1],
    ];
    const singles = [];
    for (const item of items.slice(1, 3)) singles.push((await client.post('/v1/runs', item)).body);
    singles.push((await client.post('/v1/runs', items[4])).body);
    singles.push((await client.post('/v1/runs', items[7])).body);
    const before = await count(`SELECT count(*)::int AS n FROM runs`);

    const { status, body } = await client.post('/v1/runs/batch', { items });
    expect(status).toBe(200);
    expect(body.items).toHaveLength(items.length);
    const [made, badTimeout, unknown, replay, conflict, fresh, freshAgain, notObject] = body.items;
    expect(made).toMatchObject({ state: 'queued', payload: { n: 0 }, deduped: false, origin: 'manual' });
    expect([badTimeout, unknown, conflict, notObject]).toEqual(singles.map((error) => ({ error })));
    expect(badTimeout.error).toMatchObject({ code: 'INVALID_DURATION', field: 'timeout' });
    expect(unknown.error).toMatchObject({ code: 'UNKNOWN_HANDLER', field: 'target.name' });
    expect(conflict.error).toMatchObject({ code: 'IDEMPOTENCY_CONFLICT', field: 'idempotencyKey' });
    expect(replay).toMatchObject({ id: first.body.id, payload: { n: 'before' }, deduped: true });
    expect(fresh).toMatchObject({ deduped: false, idempotencyKey: 'batch-run-new' });
    expect(freshAgain).toEqual({ ...fresh, deduped: true });
    // Only the made and the fresh run were stored.
    expect(await count(`SELECT count(*)::int AS n FROM runs`)).toBe(before + 2);

    for (const run of [made, fresh]) expect((await runInState(client, run.id, 'succeeded')).result).toEqual(run.payload);
  });

  it('creates schedules item by item: a taken name, in the ledger or earlier in the batch, is refused as POST /v1/schedules refuses it', async () => {
    await client.post('/v1/schedules', { name: 'batch-taken', every: '1h', target: echo });
    const items = [
      { name: 'batch-timer-1', in: '10m', target: echo, payload: { wake: 1 } },
      { name: 'batch-taken', every: '1h', target: echo },
      { name: 'batch-timer-2', in: '10m', target: echo, idempotencyKey: 'batch-timer-2' },
      { name: 'batch-timer-1', every: '2h', target: echo },
      { name: 'batch-timer-2', in: '10m', target: echo, idempotencyKey: 'batch-timer-2' },
      { name: 'batch-bad', cron: '61 * * * *', target: echo },
    ];
    const single = (await client.post('/v1/schedules', items[1])).body;
    const badCron = (await client.post('/v1/schedules', items[5])).body;
    const outboxBefore = await count(`SELECT count(*)::int AS n FROM outbox WHERE topic = 'schedule.created'`);

    const { status, body } = await client.post('/v1/schedules/batch', { items });
    expect(status).toBe(200);
    const [timer1, taken, timer2, takenInBatch, timer2Again, bad] = body.items;
    expect(timer1).toMatchObject({ name: 'batch-timer-1', status: 'active', deduped: false, payload: { wake: 1 } });
    expect(taken).toEqual({ error: single });
    expect(taken.error).toMatchObject({ code: 'CONFLICT', field: 'name' });
    expect(takenInBatch.error).toMatchObject({ code: 'CONFLICT', field: 'name' });
    expect(timer2).toMatchObject({ name: 'batch-timer-2', deduped: false });
    expect(timer2Again).toEqual({ ...timer2, deduped: true });
    expect(bad).toEqual({ error: badCron });
    expect(bad.error.field).toBe('cron');
    expect(await count(`SELECT count(*)::int AS n FROM schedules WHERE name LIKE 'batch-%' AND deleted_at IS NULL`)).toBe(3);
    expect(await count(`SELECT count(*)::int AS n FROM outbox WHERE topic = 'schedule.created'`)).toBe(outboxBefore + 2);
    expect((await client.get(`/v1/schedules/${timer1.id}`)).body).toMatchObject({ name: 'batch-timer-1', every: null });
  });

  it('answers each schedule of a batch as a GET reads it, records its first version and its created event, and refuses per item what the single route refuses', async () => {
    const timer = (i: number) => ({ in: `${10 + i}m`, target: echo, payload: { i, 'ké': [-0, 1e21, null] }, idempotencyKey: `batch-many-${i}` });
    await client.post('/v1/schedules', timer(0));
    const unknown = { type: 'handler', name: 'nobody-registered-this' };
    const items = [
      timer(0),
      { ...timer(0), payload: { other: true } },
      timer(1),
      { in: '10m', target: unknown },
      { in: '20m', target: unknown, name: 'batch-unknown-2' },
      { cron: '0 3 * * *', timezone: 'Europe/Berlin', target: echo, labels: { tier: 'gold', a: 'b' }, concurrency: { key: 'payload.t', limit: 2 }, payload: { t: 'x' }, name: 'batch-many-cron' },
      { in: '10m', target: echo, calendar: { exclude: ['no-such-calendar'] } },
    ];
    const singles = [];
    for (const item of [items[1], items[3], items[4], items[6]]) singles.push((await client.post('/v1/schedules', item)).body);
    const { status, body } = await client.post('/v1/schedules/batch', { items });
    expect(status).toBe(200);
    const [replay, conflict, fresh, unknown1, unknown2, cron, noCalendar] = body.items;
    expect(replay).toMatchObject({ deduped: true, idempotencyKey: 'batch-many-0' });
    expect([conflict, unknown1, unknown2, noCalendar]).toEqual(singles.map((error) => ({ error })));
    expect(conflict.error).toMatchObject({ code: 'IDEMPOTENCY_CONFLICT', field: 'idempotencyKey' });
    expect(unknown1.error).toMatchObject({ code: 'UNKNOWN_HANDLER', field: 'target.name' });
    expect(unknown2.error).toMatchObject({ code: 'UNKNOWN_HANDLER', field: 'target.name' });
    expect(noCalendar.error).toMatchObject({ code: 'UNKNOWN_CALENDAR', field: 'calendar.exclude[0]' });
    for (const made of [fresh, cron]) {
      expect(made.deduped).toBe(false);
      const read = await client.get(`/v1/schedules/${made.id}`);
      // Key for key, in the same order: the batch's answer is the row as the ledger holds it.
      expect(JSON.stringify({ ...made, deduped: false })).toBe(JSON.stringify(read.body));
      const versions = await client.get(`/v1/schedules/${made.id}/versions`);
      expect(versions.body.items).toEqual([expect.objectContaining({ version: 1, specHash: expect.any(String), changes: [] })]);
      const events = (await t.db.query(`SELECT topic, payload FROM outbox WHERE aggregate_id = $1 ORDER BY id`, [made.id])).rows;
      expect(events).toEqual([{ topic: 'schedule.created', payload: { scheduleId: made.id, name: made.name, status: 'active', nextFireAt: made.nextFireAt, actor: expect.any(String) } }]);
    }
    expect(fresh.payload).toEqual({ i: 1, 'ké': [0, 1e21, null] });
    expect(cron.labels).toEqual({ tier: 'gold', a: 'b' });
    expect(await count(`SELECT count(*)::int AS n FROM schedules WHERE name = 'batch-unknown-2'`)).toBe(0);
  });

  it('refuses a batch that is no batch, naming the field, and stores nothing', async () => {
    const before = await count(`SELECT count(*)::int AS n FROM runs`);
    const tooMany = Array.from({ length: 1_001 }, () => ({ target: echo }));
    for (const [route, body, field, says] of [
      ['/v1/runs/batch', { items: tooMany }, 'items', /at most 1000 items; split the batch/],
      ['/v1/schedules/batch', { items: [] }, 'items', /at least one item/],
      ['/v1/runs/batch', [{ target: echo }], null, /must be a JSON object/],
      ['/v1/schedules/batch', { items: {} }, 'items', /must be a array|array/],
      ['/v1/runs/batch', { items: [{ target: echo }], extra: true }, 'extra', /./],
    ] as const) {
      const answer = await client.post(route, body);
      expect(answer.status, `${route} ${JSON.stringify(body).slice(0, 60)}`).toBe(400);
      expect(answer.body.field).toBe(field);
      expect(answer.body.message).toMatch(says);
    }
    expect(await count(`SELECT count(*)::int AS n FROM runs`)).toBe(before);
  });

  it('creates a thousand one-shot timers in one request', async () => {
    const items = Array.from({ length: 1_000 }, (_, i) => ({ in: `${10 + (i % 50)}m`, target: echo, payload: { i }, idempotencyKey: `bulk-timer-${i}` }));
    const { status, body } = await client.post('/v1/schedules/batch', { items });
    expect(status).toBe(200);
    expect(body.items.filter((s: any) => s.status === 'active' && s.deduped === false)).toHaveLength(1_000);
    expect(body.items.map((s: any) => s.payload.i)).toEqual(items.map((_, i) => i));
    const again = await client.post('/v1/schedules/batch', { items });
    expect(again.body.items.every((s: any, i: number) => s.deduped === true && s.id === body.items[i].id)).toBe(true);
  });

  it('says the same over GraphQL', async () => {
    const gql = async (query: string, variables: Record<string, unknown>) => (await client.post('/graphql', { query, variables })).body;
    const runs = await gql(
      `mutation ($items: [JSON!]!) { createRuns(items: $items) { deduped run { id state payload } error { code message field } } }`,
      { items: [{ target: echo, payload: { g: 1 } }, { target: echo, retry: { maxAttempts: 0 } }] },
    );
    expect(runs.errors).toBeUndefined();
    const [ok, refused] = runs.data.createRuns;
    expect(ok).toMatchObject({ deduped: false, run: { payload: { g: 1 } }, error: null });
    expect(refused).toMatchObject({ deduped: null, run: null, error: { code: 'VALIDATION_FAILED', field: 'retry.maxAttempts' } });

    const schedules = await gql(
      `mutation ($items: [JSON!]!) { createSchedules(items: $items) { schedule { name deduped } error { code field } } }`,
      { items: [{ name: 'gql-batch', every: '1h', target: echo }, { name: 'gql-batch', every: '1h', target: echo }] },
    );
    expect(schedules.data.createSchedules).toEqual([
      { schedule: { name: 'gql-batch', deduped: false }, error: null },
      { schedule: null, error: { code: 'CONFLICT', field: 'name' } },
    ]);
  });

  it('says the same through the SDK client', async () => {
    const sdk = new KairosClient({ baseUrl: kairos.url });
    const answers = await sdk.schedules.createMany([
      { name: 'sdk-batch', every: '1h', target: { type: 'handler', name: 'echo' } },
      { name: 'sdk-batch-bad', every: '1x', target: { type: 'handler', name: 'echo' } },
    ]);
    expect(answers.map((a) => (isRefusal(a) ? a.error.field : a.name))).toEqual(['sdk-batch', 'every']);
    const runs = await sdk.runs.createMany([{ target: { type: 'handler', name: 'echo' }, payload: 1 }]);
    expect(runs.map((r) => !isRefusal(r) && r.deduped)).toEqual([false]);
  });
});
