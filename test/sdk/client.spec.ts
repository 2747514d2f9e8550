/**
 * The SDK's KairosClient against the running API, method by method, and verifySignature on a real
 * delivery of an HTTP target (then on a tampered body and an old timestamp).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KairosApiError, KairosClient, isRefusal, verifySignature, type Calendar, type Event, type Run, type Schedule } from '@kairos/sdk';
import type { StartedKairos } from '@kairos/process';
import { startInProcess, useTestEnvironment, waitFor } from '../support/kairos.js';

const collect = async <T>(items: AsyncIterable<T>): Promise<T[]> => {
  const all: T[] = [];
  for await (const item of items) all.push(item);
  return all;
};

describe('KairosClient and verifySignature', () => {
  let kairos: StartedKairos;
  let client: KairosClient;
  let hook: Server;
  const deliveries: { header: string; body: string }[] = [];

  const t = useTestEnvironment();

  beforeAll(async () => {
    hook = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        deliveries.push({ header: String(req.headers['kairos-signature']), body });
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
      });
    });
    await new Promise<void>((resolve) => hook.listen(0, '127.0.0.1', resolve));
    kairos = await startInProcess(t.env({ KAIROS_HTTP_ALLOWLIST: '127.0.0.1' }));
    client = new KairosClient({ baseUrl: kairos.url });
  });

  afterAll(async () => {
    await kairos?.app.close();
    await new Promise((resolve) => hook?.close(resolve));
  });

  const settled = (id: string) =>
    waitFor(async () => {
      const run = await client.runs.get(id);
      return ['succeeded', 'failed', 'dead', 'cancelled'].includes(run.state) ? run : undefined;
    }, `run ${id} to end`);

  it('manages schedules: create, get, list page by page, update, put by name, pause, resume, trigger, backfill, preview, delete', async () => {
    const created = await client.schedules.create({ name: 'nightly', cron: '0 3 * * *', timezone: 'Europe/Berlin', target: { type: 'handler', name: 'echo' }, payload: { n: 1 } });
    expect(created).toMatchObject({ name: 'nightly', status: 'active', deduped: false, target: { type: 'handler', name: 'echo', queue: 'default' } });
    expect(await client.schedules.get(created.id)).toMatchObject({ id: created.id, cron: '0 3 * * *' });

    for (let i = 0; i < 4; i++) await client.schedules.create({ name: `extra-${i}`, every: '1h', target: { type: 'handler', name: 'noop' }, labels: { team: 'media' } });
    const listed: Schedule[] = await collect(client.schedules.list({ limit: 2 }));
    expect(listed.map((s) => s.name).sort()).toEqual(['extra-0', 'extra-1', 'extra-2', 'extra-3', 'nightly']);
    expect((await collect(client.schedules.list({ label: 'team:media', limit: 3 }))).length).toBe(4);

    expect(await client.schedules.update(created.id, { cron: '0 4 * * *' })).toMatchObject({ cron: '0 4 * * *' });
    const put = await client.schedules.put('nightly', { cron: '0 5 * * *', timezone: 'Europe/Berlin', target: { type: 'handler', name: 'echo' } });
    expect(put).toMatchObject({ id: created.id, cron: '0 5 * * *' });
    expect(await client.schedules.pause(created.id)).toMatchObject({ status: 'paused' });
    expect(await client.schedules.resume(created.id)).toMatchObject({ status: 'active' });

    const triggered = await client.schedules.trigger(created.id, { payload: { now: true } });
    expect(triggered).toMatchObject({ scheduleId: created.id, origin: 'manual' });
    expect(await settled(triggered.id)).toMatchObject({ state: 'succeeded', result: { now: true } });

    const day = 24 * 3600_000;
    const backfill = await client.schedules.backfill(created.id, { from: new Date(Date.now() - 3 * day).toISOString(), to: new Date(Date.now() - day / 2).toISOString() });
    expect(backfill.created).toBeGreaterThanOrEqual(2);
    expect(backfill.runs.every((r: Run) => r.origin === 'backfill')).toBe(true);
    expect((await collect(client.schedules.ticks(created.id, { limit: 1 }))).length).toBe(backfill.slots);

    const preview = await client.schedules.preview(created.id, { count: 3, after: '2027-03-26T00:00:00Z' });
    expect(preview.fireTimes).toEqual(['2027-03-26T04:00:00Z', '2027-03-27T04:00:00Z', '2027-03-28T03:00:00Z']);

    await client.schedules.delete(created.id);
    const gone = await client.schedules.get(created.id).catch((e: unknown) => e);
    expect(gone).toBeInstanceOf(KairosApiError);
    expect(gone).toMatchObject({ status: 404, code: 'NOT_FOUND' });
  });

  it('manages calendars: create, put, get, list page by page and from a cursor, dates, delete; a schedule excludes them', async () => {
    const bavaria = await client.calendars.create({ name: 'bavaria', holidays: { country: 'DE', state: 'BY' }, dates: ['2030-12-24'] });
    expect(bavaria).toMatchObject({ name: 'bavaria', dates: ['2030-12-24'], holidays: { country: 'DE', state: 'BY', region: null }, description: null, schedules: 0 });
    expect(await client.calendars.put('freeze', { dates: ['2030-12-22', '2030-12-21'], description: 'release freeze' })).toMatchObject({ name: 'freeze', dates: ['2030-12-21', '2030-12-22'] });
    expect(await client.calendars.put('freeze', { dates: ['2030-12-21'] })).toMatchObject({ dates: ['2030-12-21'], description: null });
    expect(await client.calendars.get('bavaria')).toEqual(bavaria);
    const listed: Calendar[] = await collect(client.calendars.list({ limit: 1 }));
    expect(listed.map((c) => c.name)).toEqual(['bavaria', 'freeze']);
    const { nextCursor } = (await (await fetch(`${kairos.url}/v1/calendars?limit=1`)).json()) as { nextCursor: string };
    expect((await collect(client.calendars.list({ cursor: nextCursor }))).map((c) => c.name)).toEqual(['freeze']);

    const dates = await client.calendars.dates('bavaria', { from: '2030-12-20', to: '2030-12-31' });
    expect(dates).toMatchObject({ from: '2030-12-20', to: '2030-12-31' });
    expect(dates.items.map((d) => [d.date, d.holiday === null])).toEqual([
      ['2030-12-24', true],
      ['2030-12-25', false],
      ['2030-12-26', false],
    ]);
    // By default, the twelve months from today.
    expect((await client.calendars.dates('freeze')).from).toBe(new Date().toISOString().slice(0, 10));

    const schedule = await client.schedules.create({ name: 'munich', cron: '0 9 * * *', timezone: 'Europe/Berlin', target: { type: 'handler', name: 'echo' }, calendar: { exclude: ['bavaria'], weekdaysOnly: true } });
    expect(schedule.calendar).toEqual({ exclude: ['bavaria'], weekdaysOnly: true, onExcluded: 'skip' });
    expect(await client.schedules.preview(schedule.id, { count: 3, after: '2030-12-23T00:00:00Z' })).toMatchObject({
      fireTimes: ['2030-12-23T08:00:00Z', '2030-12-27T08:00:00Z', '2030-12-30T08:00:00Z'],
      excludedDates: ['2030-12-24', '2030-12-25', '2030-12-26', '2030-12-28', '2030-12-29'],
    });
    const inUse = await client.calendars.delete('bavaria').catch((e: unknown) => e);
    expect(inUse).toBeInstanceOf(KairosApiError);
    expect(inUse).toMatchObject({ status: 409, code: 'CALENDAR_IN_USE', field: 'name' });

    await client.schedules.delete(schedule.id);
    await client.calendars.delete('bavaria');
    await client.calendars.delete('freeze');
    expect(await client.calendars.get('bavaria').catch((e: unknown) => e)).toMatchObject({ status: 404, code: 'NOT_FOUND' });
    expect(await collect(client.calendars.list())).toEqual([]);
  });

  it('sends events: a schedule with on runs for the one that matches, a repeated id is deduped, sendMany answers per item, list by name page by page and from a cursor, get', async () => {
    const schedule = await client.schedules.create({ name: 'on-paid', on: { event: 'order.paid', match: { 'data.plan': 'pro' } }, target: { type: 'handler', name: 'echo' }, payload: { from: 'sdk' } });
    expect(schedule).toMatchObject({ on: { event: 'order.paid', match: { 'data.plan': 'pro' } }, cron: null, nextFireAt: null });

    const paid: Event = await client.events.send('order.paid', { orderId: 'o-1', plan: 'pro' }, { id: 'sdk-order-1' });
    expect(paid).toMatchObject({ id: 'sdk-order-1', name: 'order.paid', data: { orderId: 'o-1', plan: 'pro' }, deduped: false, skipped: [], resumed: [] });
    expect(paid.runs).toHaveLength(1);
    const run = await settled(paid.runs[0]!);
    expect(run).toMatchObject({ scheduleId: schedule.id, origin: 'event', eventId: 'sdk-order-1', state: 'succeeded' });
    expect(run.result).toMatchObject({ from: 'sdk', event: { id: 'sdk-order-1', name: 'order.paid', data: { orderId: 'o-1', plan: 'pro' } } });

    expect(await client.events.send('order.paid', { plan: 'pro' }, { id: 'sdk-order-1' })).toEqual({ ...paid, deduped: true });
    const free = await client.events.send('order.paid', { plan: 'free' });
    expect(free).toMatchObject({ name: 'order.paid', deduped: false, runs: [] });
    expect(await client.events.send('ping')).toMatchObject({ name: 'ping', data: null });

    const answers = await client.events.sendMany([{ name: 'order.refunded', data: { orderId: 'o-1' }, id: 'sdk-refund-1' }, { name: 'order paid' }, { name: 'order.paid', id: 'sdk-order-1' }]);
    expect(answers.map((a) => isRefusal(a))).toEqual([false, true, false]);
    expect(answers[0]).toMatchObject({ id: 'sdk-refund-1', deduped: false });
    expect(answers[1]).toMatchObject({ error: { code: 'VALIDATION_FAILED', field: 'name' } });
    expect(answers[2]).toEqual({ ...paid, deduped: true });

    const byName = await collect(client.events.list({ name: 'order.paid', limit: 1 }));
    expect(byName.map((e) => e.id)).toEqual([free.id, 'sdk-order-1']);
    expect((await collect(client.events.list())).map((e) => e.name)).toEqual(['order.refunded', 'ping', 'order.paid', 'order.paid']);
    const { nextCursor } = (await (await fetch(`${kairos.url}/v1/events?limit=2`)).json()) as { nextCursor: string };
    expect((await collect(client.events.list({ cursor: nextCursor }))).map((e) => e.id)).toEqual([free.id, 'sdk-order-1']);
    expect(await client.events.get('sdk-order-1')).toEqual(paid);
    expect(await client.events.get('no-such-event').catch((e: unknown) => e)).toMatchObject({ status: 404, code: 'NOT_FOUND' });
    const refused = await client.events.send('order paid').catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(KairosApiError);
    expect(refused).toMatchObject({ status: 400, code: 'VALIDATION_FAILED', field: 'name' });

    await client.schedules.delete(schedule.id);
  });

  it('manages runs: create, get, list, events, cancel, retry; and dead letters: list, republish', async () => {
    const run = await client.runs.create({ target: { type: 'handler', name: 'echo' }, payload: { hi: 1 }, idempotencyKey: 'client-once' });
    expect(run.deduped).toBe(false);
    expect((await client.runs.create({ target: { type: 'handler', name: 'echo' }, payload: { hi: 1 }, idempotencyKey: 'client-once' })).deduped).toBe(true);
    const done = await settled(run.id);
    expect(done).toMatchObject({ state: 'succeeded', result: { hi: 1 } });
    expect(done.attempts).toHaveLength(1);
    expect((await client.runs.events(run.id)).map((e) => e.kind)).toEqual(['queued', 'claimed', 'succeeded']);
    expect((await collect(client.runs.list({ state: 'succeeded', limit: 1 }))).map((r) => r.id)).toContain(run.id);

    const sleeper = await client.runs.create({ target: { type: 'handler', name: 'sleep' }, payload: { ms: 30_000 }, availableAt: '2999-01-01T00:00:00Z' });
    expect(await client.runs.cancel(sleeper.id)).toMatchObject({ state: 'cancelled', reasonCode: 'CANCELLED_BY_USER' });

    const failing = await client.runs.create({ target: { type: 'handler', name: 'fail' }, payload: { retryable: false } });
    expect(await settled(failing.id)).toMatchObject({ state: 'dead', reasonCode: 'HANDLER_NON_RETRYABLE' });
    expect((await collect(client.deadLetters.list())).map((r) => r.id)).toContain(failing.id);
    expect(await client.deadLetters.republish(failing.id)).toMatchObject({ origin: 'republish', sourceRunId: failing.id });
    expect(await client.runs.retry(failing.id)).toMatchObject({ origin: 'retry', sourceRunId: failing.id });
  });

  it('sends signals: kept for a run that does not wait for them yet, each name once, refused once the run ended', async () => {
    const parked = await client.runs.create({ target: { type: 'handler', name: 'echo' }, availableAt: '2999-01-01T00:00:00Z' });
    expect(parked.checkpoints).toEqual([]);
    expect(await client.runs.signal(parked.id, 'approval', { approved: true })).toEqual({ delivered: false });
    expect(await client.runs.signal(parked.id, 'review #2')).toEqual({ delivered: false });
    const twice = await client.runs.signal(parked.id, 'approval', { approved: false }).catch((e: unknown) => e);
    expect(twice).toBeInstanceOf(KairosApiError);
    expect(twice).toMatchObject({ status: 409, code: 'SIGNAL_ALREADY_DELIVERED', field: 'name' });
    expect((await client.runs.get(parked.id)).checkpoints).toEqual([]);

    await client.runs.cancel(parked.id);
    expect(await client.runs.signal(parked.id, 'late', {}).catch((e: unknown) => e)).toMatchObject({ status: 409, code: 'INVALID_STATE' });
  });

  it('lists workers, previews crons, and throws KairosApiError with the code, message and field', async () => {
    const workers = await collect(client.workers.list());
    expect(workers).toContainEqual(expect.objectContaining({ queue: 'default', version: 'built-in', handlers: ['echo', 'fail', 'noop', 'sleep'] }));
    expect((await client.cron.preview({ cron: '30 2 * * *', timezone: 'Europe/Berlin', after: '2027-03-27T00:00:00Z', count: 2 })).fireTimes).toEqual([
      '2027-03-27T01:30:00Z',
      '2027-03-28T01:30:00Z',
    ]);
    const refused = await client.runs.create({ target: { type: 'handler', name: 'resize', queue: 'media' } }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(KairosApiError);
    expect(refused).toMatchObject({ status: 400, code: 'UNKNOWN_HANDLER', field: 'target.name' });
    expect((refused as Error).message).toMatch(/queue "media"/);
    const unreachable = await new KairosClient({ baseUrl: 'http://127.0.0.1:1' }).runs.get('x').catch((e: unknown) => e);
    expect(unreachable).toMatchObject({ status: 0, code: 'UNREACHABLE' });
  });

  it('verifies a real delivery, and refuses a tampered body and an old timestamp', async () => {
    const { port } = hook.address() as AddressInfo;
    const run = await client.runs.create({ target: { type: 'http', url: `http://127.0.0.1:${port}/hook` }, payload: { order: 42 } });
    expect(await settled(run.id)).toMatchObject({ state: 'succeeded' });
    const delivery = deliveries.find((d) => d.body.includes(run.id))!;
    const { rows } = await t.db.query(`SELECT signing_secret FROM namespaces WHERE name = 'default'`);
    const secret = rows[0].signing_secret as string;

    expect(verifySignature({ secret, header: delivery.header, body: delivery.body })).toMatchObject({ valid: true });
    expect(verifySignature({ secret, header: delivery.header, body: delivery.body.replace('42', '43') })).toEqual({ valid: false, reason: 'NO_MATCHING_SIGNATURE' });
    expect(verifySignature({ secret: 'not-the-secret', header: delivery.header, body: delivery.body })).toEqual({ valid: false, reason: 'NO_MATCHING_SIGNATURE' });
    expect(verifySignature({ secret, header: delivery.header, body: delivery.body, nowMs: Date.now() + 301_000 })).toEqual({ valid: false, reason: 'TIMESTAMP_OUT_OF_TOLERANCE' });
  });
});
