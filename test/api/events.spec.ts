/**
 * Events over REST (POST /v1/events, its batch, GET /v1/events and /v1/events/:id) and the
 * schedules they start (`on: { event, match }`): refusals name the field and store nothing, also
 * inside a batch whose other items go on; `match` compares each entry as JSON with the event's
 * value at its path (a missing path never matches, arrays keep their order, objects do not, 1 is
 * 1.0); one event fans out to every matching schedule, each run of origin `event` carrying the
 * schedule's payload plus the event, which the built-in worker echoes back; a paused schedule and
 * an overlap skip are listed under `skipped`; a repeated id answers the first event and starts
 * nothing; a concurrency key template reads the event. Kairos runs all three roles in this process.
 */
import { describe, expect, it } from 'vitest';
import { runInState, useKairos } from '../support/kairos.js';

const echo = { type: 'handler', name: 'echo' };

interface EventView {
  id: string;
  name: string;
  data: unknown;
  receivedAt: string;
  deduped: boolean;
  runs: string[];
  skipped: { scheduleId: string; reasonCode: string }[];
  resumed: string[];
}

describe('events', () => {
  const { t, client } = useKairos();

  const count = async (sql: string, params: unknown[] = []): Promise<number> => (await t.db.query(`SELECT count(*)::int AS n FROM ${sql}`, params)).rows[0].n;
  let unique = 0;
  /** A name no other test of the file uses. */
  const fresh = (prefix: string): string => `${prefix}.${++unique}`;

  /** Creates a schedule started by events; `allow` unless the test says otherwise, so back-to-back events each run. */
  const listen = async (on: Record<string, unknown>, extra: Record<string, unknown> = {}): Promise<any> => {
    const created = await client.post('/v1/schedules', { name: fresh('listener'), on, target: echo, overlap: 'allow', ...extra });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    return created.body;
  };
  const send = async (body: unknown): Promise<{ status: number; body: EventView }> => client.post('/v1/events', body);

  describe('refusals', () => {
    it.each<[string, unknown, string, string]>([
      ['a name with spaces', { name: 'order paid', data: {} }, 'VALIDATION_FAILED', 'name'],
      ['a name over 128 characters', { name: 'e'.repeat(129) }, 'VALIDATION_FAILED', 'name'],
      ['a missing name', { data: { orderId: 'o-1' } }, 'MISSING_FIELD', 'name'],
      // A payload over the limit is 413 throughout the API, naming the field as a 400 would.
      ['data over 256 KiB', { name: 'order.paid', data: 'x'.repeat(256 * 1024) }, 'PAYLOAD_TOO_LARGE', 'data'],
      ['an unknown field', { name: 'order.paid', payload: {} }, 'UNKNOWN_FIELD', 'payload'],
      ['an id over 200 characters', { name: 'order.paid', id: 'i'.repeat(201) }, 'VALIDATION_FAILED', 'id'],
      ['an empty id', { name: 'order.paid', id: '' }, 'VALIDATION_FAILED', 'id'],
    ])('refuses an event with %s, naming the field and storing nothing, also inside a batch', async (_what, body, code, field) => {
      const before = await count('events');
      const answer = await send(body);
      expect(answer.status).toBe(code === 'PAYLOAD_TOO_LARGE' ? 413 : 400);
      expect(answer.body).toMatchObject({ code, field });
      expect(await count('events')).toBe(before);

      const batch = await client.post('/v1/events/batch', { items: [body, { name: 'refusals.neighbour', data: { ok: true } }] });
      expect(batch.status).toBe(200);
      expect(batch.body.items).toHaveLength(2);
      expect(batch.body.items[0]).toEqual({ error: expect.objectContaining({ code, field }) });
      expect(batch.body.items[1]).toMatchObject({ name: 'refusals.neighbour', data: { ok: true }, deduped: false });
      expect(await count('events')).toBe(before + 1);
    });

    it.each<[string, Record<string, unknown>, string, string]>([
      ['both on and cron', { cron: '0 9 * * *', on: { event: 'order.paid' } }, 'CONFLICTING_FIELDS', 'on'],
      ['on without event', { on: { match: { 'data.plan': 'pro' } } }, 'MISSING_FIELD', 'on.event'],
      ['an event name with spaces', { on: { event: 'order paid' } }, 'VALIDATION_FAILED', 'on.event'],
      ['a match path outside the event', { on: { event: 'order.paid', match: { 'payload.plan': 'pro' } } }, 'VALIDATION_FAILED', 'on.match.payload.plan'],
      ['a match that is no object', { on: { event: 'order.paid', match: ['data.plan'] } }, 'VALIDATION_FAILED', 'on.match'],
      ['an unknown field in on', { on: { event: 'order.paid', when: 'now' } }, 'UNKNOWN_FIELD', 'on.when'],
      ['on with maxRuns', { on: { event: 'order.paid' }, maxRuns: 3 }, 'CONFLICTING_FIELDS', 'maxRuns'],
      ['a payload that is no object', { on: { event: 'order.paid' }, payload: [1, 2] }, 'VALIDATION_FAILED', 'payload'],
    ])('refuses a schedule with %s, naming the field and storing nothing, also inside a batch', async (_what, fields, code, field) => {
      const before = await count('schedules');
      const answer = await client.post('/v1/schedules', { target: echo, ...fields });
      expect(answer.status).toBe(400);
      expect(answer.body).toMatchObject({ code, field });
      expect(await count('schedules')).toBe(before);

      const batch = await client.post('/v1/schedules/batch', { items: [{ target: echo, ...fields }, { target: echo, on: { event: 'refusals.neighbour' } }] });
      expect(batch.status).toBe(200);
      expect(batch.body.items[0].error).toMatchObject({ code, field });
      expect(batch.body.items[1]).toMatchObject({ id: expect.any(String), on: { event: 'refusals.neighbour', match: {} } });
      expect(await count('schedules')).toBe(before + 1);
      expect((await client.delete(`/v1/schedules/${batch.body.items[1].id}`)).status).toBeLessThan(300);
    });
  });

  /**
   * Each case: a schedule listening to a name of its own with `match` (as JSON text, so 1.0 stays
   * 1.0 on the wire), and one event of that name with `data` (likewise); whether it started a run.
   */
  it.each<[string, string, string, boolean]>([
    ['equal on a nested path', '{"data.customer.plan": "pro"}', '{"customer": {"plan": "pro", "seats": 3}}', true],
    ['unequal on a nested path', '{"data.customer.plan": "pro"}', '{"customer": {"plan": "basic"}}', false],
    ['a missing path', '{"data.customer.tier": "gold"}', '{"customer": {"plan": "pro"}}', false],
    ['a missing path, match null', '{"data.coupon": null}', '{"customer": {"plan": "pro"}}', false],
    ['a present null, match null', '{"data.coupon": null}', '{"coupon": null}', true],
    ['a path through a string', '{"data.customer.plan": "pro"}', '{"customer": "pro"}', false],
    ['a path into data that is no object', '{"data.plan": "pro"}', '"pro"', false],
    ['all entries hold', '{"data.a": 1, "data.b": "two"}', '{"a": 1, "b": "two"}', true],
    ['one entry of two fails', '{"data.a": 1, "data.b": "two"}', '{"a": 1, "b": "three"}', false],
    ['an array in the same order', '{"data.tags": ["a", "b"]}', '{"tags": ["a", "b"]}', true],
    ['an array in another order', '{"data.tags": ["a", "b"]}', '{"tags": ["b", "a"]}', false],
    ['an array with one element more', '{"data.tags": ["a", "b"]}', '{"tags": ["a", "b", "c"]}', false],
    ['an object in another key order', '{"data.address": {"city": "Berlin", "zip": "10115"}}', '{"address": {"zip": "10115", "city": "Berlin"}}', true],
    ['an object with a key more', '{"data.address": {"city": "Berlin"}}', '{"address": {"city": "Berlin", "zip": "10115"}}', false],
    ['1 against 1.0', '{"data.amount": 1}', '{"amount": 1.0}', true],
    ['1.0 against 1', '{"data.amount": 1.0}', '{"amount": 1}', true],
    ['1 against "1"', '{"data.amount": 1}', '{"amount": "1"}', false],
    ['true against "true"', '{"data.paid": true}', '{"paid": "true"}', false],
    ['an empty match', '{}', '{"anything": [1]}', true],
    ['the whole data', '{"data": {"n": 1}}', '{"n": 1}', true],
  ])('match: %s', async (_what, matchJson, dataJson, matches) => {
    const name = fresh('match');
    const created = await client.post('/v1/schedules', `{"name": "${fresh('matcher')}", "on": {"event": "${name}", "match": ${matchJson}}, "target": {"type": "handler", "name": "echo"}}`);
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.on).toEqual({ event: name, match: JSON.parse(matchJson) });
    const event = await send(`{"name": "${name}", "data": ${dataJson}}`);
    expect(event.status).toBe(202);
    expect(event.body.skipped).toEqual([]);
    expect(event.body.runs).toHaveLength(matches ? 1 : 0);
    expect(await count('runs WHERE schedule_id = $1', [created.body.id])).toBe(matches ? 1 : 0);
  });

  it('matches on the event id and name too', async () => {
    const name = fresh('ids');
    const byId = await listen({ event: name, match: { id: `${name}-wanted` } });
    const byName = await listen({ event: name, match: { name } });
    const wanted = await send({ name, id: `${name}-wanted` });
    expect(wanted.body.runs).toHaveLength(2);
    const other = await send({ name, id: `${name}-other` });
    expect(other.body.runs).toHaveLength(1);
    expect(await count('runs WHERE schedule_id = $1', [byId.id])).toBe(1);
    expect(await count('runs WHERE schedule_id = $1', [byName.id])).toBe(2);
  });

  it('fans an event out to every matching schedule: runs of origin event with the event in their payload, and the schedules fired', async () => {
    const name = fresh('order.paid');
    const pro = await listen({ event: name, match: { 'data.plan': 'pro' } }, { payload: { mail: 'welcome-pro' } });
    const all = await listen({ event: name }, { payload: { mail: 'receipt', event: 'overwritten' } });
    const basic = await listen({ event: name, match: { 'data.plan': 'basic' } }, { payload: { mail: 'welcome-basic' } });
    const other = await listen({ event: fresh('order.refunded') }, { payload: { mail: 'refund' } });
    const noPayload = await listen({ event: name, match: { 'data.customer.id': 'c-1' } });
    expect(pro).toMatchObject({ on: { event: name, match: { 'data.plan': 'pro' } }, nextFireAt: null, fireCount: 0, lastFireAt: null });

    const sentAt = Date.now();
    const data = { plan: 'pro', amount: 4900, customer: { id: 'c-1' }, items: [{ sku: 'a' }] };
    const event = await send({ name, data });
    expect(event.status).toBe(202);
    expect(event.body).toMatchObject({ id: expect.any(String), name, data, deduped: false, skipped: [], resumed: [] });
    expect(event.body.runs).toHaveLength(3);
    const receivedAt = Date.parse(event.body.receivedAt);
    expect(Math.abs(receivedAt - sentAt)).toBeLessThan(60_000);

    const runs = new Map<string, any>();
    for (const id of event.body.runs) {
      const run = (await client.get(`/v1/runs/${id}`)).body;
      runs.set(run.scheduleId, run);
    }
    expect([...runs.keys()].sort()).toEqual([pro.id, all.id, noPayload.id].sort());
    const expected = (schedulePayload: Record<string, unknown>) => ({ ...schedulePayload, event: { id: event.body.id, name, data, receivedAt: expect.any(String) } });
    for (const [scheduleId, payload] of [
      [pro.id, { mail: 'welcome-pro' }],
      [all.id, { mail: 'receipt' }],
      [noPayload.id, {}],
    ] as const) {
      const run = runs.get(scheduleId);
      expect(run).toMatchObject({ origin: 'event', eventId: event.body.id, scheduleId });
      // The schedule's payload with the event under "event" (the event wins over a key of that name).
      expect(run.payload).toEqual(expected(payload));
      expect(Date.parse(run.payload.event.receivedAt)).toBe(receivedAt);
      expect(Date.parse(run.scheduledFor)).toBe(receivedAt);
      // The built-in worker runs it; echo answers the payload it was given.
      expect((await runInState(client, run.id, 'succeeded')).result).toEqual(run.payload);
    }
    expect(await count('runs WHERE schedule_id = ANY($1::uuid[])', [[basic.id, other.id]])).toBe(0);
    expect(await count('runs WHERE event_id = $1', [event.body.id])).toBe(3);

    // The schedules it started count the fire; the others do not move.
    for (const schedule of [pro, all, noPayload]) {
      const now = (await client.get(`/v1/schedules/${schedule.id}`)).body;
      expect(now).toMatchObject({ fireCount: 1, nextFireAt: null });
      expect(Date.parse(now.lastFireAt)).toBe(receivedAt);
    }
    for (const schedule of [basic, other]) expect((await client.get(`/v1/schedules/${schedule.id}`)).body).toMatchObject({ fireCount: 0, lastFireAt: null });

    // A second event moves the fire count on again.
    const second = await send({ name, data: { plan: 'basic', customer: { id: 'c-2' } } });
    expect(second.body.runs).toHaveLength(2);
    expect((await client.get(`/v1/schedules/${all.id}`)).body.fireCount).toBe(2);
    expect((await client.get(`/v1/schedules/${basic.id}`)).body.fireCount).toBe(1);
    expect((await client.get(`/v1/schedules/${pro.id}`)).body.fireCount).toBe(1);

    // The event as GET answers it is the one POST answered.
    expect((await client.get(`/v1/events/${event.body.id}`)).body).toEqual(event.body);
  });

  it('lists a paused schedule under skipped as SCHEDULE_PAUSED, and makes it no run', async () => {
    const name = fresh('paused');
    const paused = await listen({ event: name }, { paused: true });
    const active = await listen({ event: name });
    const event = await send({ name, data: { n: 1 } });
    expect(event.status).toBe(202);
    expect(event.body.skipped).toEqual([{ scheduleId: paused.id, reasonCode: 'SCHEDULE_PAUSED' }]);
    expect(event.body.runs).toHaveLength(1);
    expect(await count('runs WHERE schedule_id = $1', [paused.id])).toBe(0);
    expect((await client.get(`/v1/schedules/${paused.id}`)).body).toMatchObject({ fireCount: 0, lastFireAt: null });
    expect((await client.get(`/v1/events/${event.body.id}`)).body.skipped).toEqual(event.body.skipped);

    // Resumed, it runs for the next event.
    expect((await client.post(`/v1/schedules/${paused.id}/resume`)).status).toBeLessThan(300);
    const next = await send({ name, data: { n: 2 } });
    expect(next.body.skipped).toEqual([]);
    expect(next.body.runs).toHaveLength(2);
    expect(await count('runs WHERE schedule_id = $1', [active.id])).toBe(2);
  });

  it('lists a schedule whose overlap policy skips under skipped as OVERLAP_SKIPPED while its earlier run is active', async () => {
    const name = fresh('overlap');
    const slow = await listen({ event: name }, { overlap: 'skip', target: { type: 'handler', name: 'sleep' }, payload: { ms: 60_000 } });
    const first = await send({ name, data: { n: 1 } });
    expect(first.body.runs).toHaveLength(1);
    const [held] = first.body.runs;
    await runInState(client, held!, 'running');
    // In the same batch and in a later request, while the first run sleeps.
    const batch = await client.post('/v1/events/batch', { items: [{ name, data: { n: 2 } }, { name, data: { n: 3 } }] });
    const later = await send({ name, data: { n: 4 } });
    for (const skipped of [...batch.body.items, later.body]) {
      expect(skipped).toMatchObject({ deduped: false, runs: [], skipped: [{ scheduleId: slow.id, reasonCode: 'OVERLAP_SKIPPED' }] });
    }
    expect(await count('runs WHERE schedule_id = $1', [slow.id])).toBe(1);
    expect((await client.get(`/v1/schedules/${slow.id}`)).body.fireCount).toBe(1);

    // Once it ended, the next event runs.
    expect((await client.post(`/v1/runs/${held}/cancel`)).status).toBeLessThan(300);
    await runInState(client, held!, 'cancelled');
    const after = await send({ name, data: { n: 5 } });
    expect(after.body).toMatchObject({ runs: [expect.any(String)], skipped: [] });
    expect((await client.post(`/v1/runs/${after.body.runs[0]}/cancel`)).status).toBeLessThan(300);
  });

  it('answers a repeated id with the first event, deduped, and starts nothing again', async () => {
    const name = fresh('dedup');
    const schedule = await listen({ event: name });
    const id = `${name}-order-7`;
    const first = await send({ name, id, data: { v: 1 } });
    expect(first.status).toBe(202);
    expect(first.body).toMatchObject({ id, deduped: false, data: { v: 1 } });
    expect(first.body.runs).toHaveLength(1);

    // Other data and even another name under the same id: the first event answers.
    for (const again of [{ name, id, data: { v: 1 } }, { name, id, data: { v: 2 } }, { name: fresh('dedup'), id }]) {
      const answer = await send(again);
      expect(answer.status).toBe(200);
      expect(answer.body).toEqual({ ...first.body, deduped: true });
    }
    // In a batch too: a seen id, and a new one given twice (the second answers the first).
    const batch = await client.post('/v1/events/batch', { items: [{ name, id }, { name, id: `${id}-b` }, { name, id: `${id}-b`, data: 'later' }] });
    const [seen, made, twice] = batch.body.items;
    expect(seen).toEqual({ ...first.body, deduped: true });
    expect(made).toMatchObject({ id: `${id}-b`, deduped: false, data: null, runs: [expect.any(String)] });
    expect(twice).toEqual({ ...made, deduped: true });
    expect(await count('events WHERE id LIKE $1', [`${id}%`])).toBe(2);
    expect(await count('runs WHERE schedule_id = $1', [schedule.id])).toBe(2);
    expect((await client.get(`/v1/schedules/${schedule.id}`)).body.fireCount).toBe(2);
  });

  it('lists events newest first, by name, a page at a time; reads one by id; 404 for an unknown id', async () => {
    const a = fresh('list.a');
    const b = fresh('list.b');
    const sent: EventView[] = [];
    for (let i = 0; i < 7; i++) sent.push((await send({ name: i % 3 === 2 ? b : a, data: { i } })).body);
    const ofA = sent.filter((e) => e.name === a).reverse();

    const pages: EventView[][] = [];
    let cursor: string | null = null;
    do {
      const page: { status: number; body: { items: EventView[]; nextCursor: string | null } } = await client.get(`/v1/events?name=${a}&limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      expect(page.status).toBe(200);
      pages.push(page.body.items);
      cursor = page.body.nextCursor;
    } while (cursor !== null && pages.length < 10);
    expect(pages.map((p) => p.length)).toEqual([2, 2, 1]);
    expect(pages.flat()).toEqual(ofA);
    expect(pages.flat().every((e) => e.deduped === false)).toBe(true);

    const unfiltered = (await client.get('/v1/events?limit=7')).body.items as EventView[];
    expect(unfiltered.map((e) => e.id)).toEqual(sent.map((e) => e.id).reverse());
    expect((await client.get(`/v1/events?name=${b}`)).body.items.map((e: EventView) => e.data)).toEqual([{ i: 5 }, { i: 2 }]);
    expect((await client.get('/v1/events?name=nobody.sends.this')).body).toEqual({ items: [], nextCursor: null });
    expect((await client.get('/v1/events?limit=0')).status).toBe(400);
    expect((await client.get('/v1/events?cursor=not-a-cursor')).status).toBe(400);

    expect((await client.get(`/v1/events/${sent[3]!.id}`)).body).toEqual(sent[3]);
    const unknown = await client.get('/v1/events/no-such-event');
    expect(unknown.status).toBe(404);
    expect(unknown.body).toMatchObject({ code: 'NOT_FOUND' });
  });

  it('resolves a concurrency key template over each event, and skips an event that cannot resolve it', async () => {
    const name = fresh('keyed');
    const schedule = await listen({ event: name }, { concurrency: { key: 'customer-{{event.data.customerId}}', limit: 1 }, payload: { kind: 'invoice' } });
    expect(schedule.concurrency).toEqual({ key: 'customer-{{event.data.customerId}}', limit: 1 });
    const batch = await client.post('/v1/events/batch', {
      items: [
        { name, data: { customerId: 'c-1' } },
        { name, data: { customerId: 'c-2' } },
        { name, data: { customerId: 42 } },
        { name, data: { other: true } },
      ],
    });
    const [c1, c2, numeric, missing] = batch.body.items;
    const keyOf = async (view: EventView) => (await client.get(`/v1/runs/${view.runs[0]}`)).body.concurrency;
    expect(await keyOf(c1)).toEqual({ key: 'customer-c-1', limit: 1 });
    expect(await keyOf(c2)).toEqual({ key: 'customer-c-2', limit: 1 });
    expect(await keyOf(numeric)).toEqual({ key: 'customer-42', limit: 1 });
    expect(missing).toMatchObject({ runs: [], skipped: [{ scheduleId: schedule.id, reasonCode: 'CONCURRENCY_KEY_UNRESOLVED' }] });
    for (const view of [c1, c2, numeric]) await runInState(client, view.runs[0], 'succeeded');
    expect((await client.get(`/v1/schedules/${schedule.id}`)).body.fireCount).toBe(3);
  });

  it('stores an event nobody listens to, with no runs', async () => {
    const event = await send({ name: fresh('nobody'), data: [1, 'two', { three: 3 }] });
    expect(event.status).toBe(202);
    expect(event.body).toMatchObject({ data: [1, 'two', { three: 3 }], runs: [], skipped: [], resumed: [], deduped: false });
    const noData = await send({ name: fresh('nobody') });
    expect(noData.body.data).toBeNull();
  });
});
