import { describe, expect, it } from 'vitest';
import {
  awaitedEvent,
  awaitedEventOf,
  awaitInWords,
  eventWaitWords,
  matchInWords,
  outcomeInWords,
  sendEventCommand,
  skipInWords,
  triggerInWords,
  type AwaitedEvent,
} from './events.js';

describe('matchInWords and triggerInWords', () => {
  it.each<[Record<string, unknown> | null, string, string]>([
    [{ 'data.plan': 'pro' }, 'data.plan = "pro"', 'runs on each event order.paid where data.plan = "pro"'],
    [{ 'data.plan': 'pro', 'data.qty': 2 }, 'data.plan = "pro" and data.qty = 2', 'runs on each event order.paid where data.plan = "pro" and data.qty = 2'],
    [{ 'data.gift': true, 'data.coupon': null }, 'data.gift = true and data.coupon = null', 'runs on each event order.paid where data.gift = true and data.coupon = null'],
    [{ 'data.tags': ['a', 'b'], 'data.to': { city: 'Berlin' } }, 'data.tags = ["a","b"] and data.to = {"city":"Berlin"}', 'runs on each event order.paid where data.tags = ["a","b"] and data.to = {"city":"Berlin"}'],
    [{ id: 'evt-1' }, 'id = "evt-1"', 'runs on each event order.paid where id = "evt-1"'],
    [{}, '', 'runs on each event order.paid'],
    [null, '', 'runs on each event order.paid'],
  ])('%j', (match, words, trigger) => {
    expect(matchInWords(match)).toBe(words);
    expect(triggerInWords({ event: 'order.paid', match })).toBe(trigger);
  });
});

describe('awaitedEventOf and awaitInWords', () => {
  it.each<[Record<string, unknown> | null, AwaitedEvent | null, string | null]>([
    [
      { event: 'order.paid', match: { 'data.orderId': 'o-1' }, timeoutAt: '2026-12-02T09:00:00.000Z' },
      { event: 'order.paid', match: { 'data.orderId': 'o-1' }, timeoutAt: '2026-12-02T09:00:00.000Z' },
      'waits for event order.paid where data.orderId = "o-1", until 2026-12-02 09:00:00Z',
    ],
    [
      { event: 'order.paid', match: {}, timeoutAt: '2026-12-02T09:00:00.518+00:00' },
      { event: 'order.paid', match: {}, timeoutAt: '2026-12-02T09:00:00.518+00:00' },
      'waits for event order.paid, until 2026-12-02 09:00:00Z',
    ],
    [{ event: 'shipment.sent', match: null, timeoutAt: null }, { event: 'shipment.sent', match: {}, timeoutAt: null }, 'waits for event shipment.sent, with no timeout'],
    [{ event: 'shipment.sent' }, { event: 'shipment.sent', match: {}, timeoutAt: null }, 'waits for event shipment.sent, with no timeout'],
    [{ signal: 'approval' }, null, null],
    [null, null, null],
  ])('%j', (detail, awaited, words) => {
    expect(awaitedEventOf(detail)).toEqual(awaited);
    if (awaited !== null) expect(awaitInWords(awaited)).toBe(words);
  });
});

describe('awaitedEvent', () => {
  const waitingFor = (state: string) => ({ state: 'waiting', checkpoints: [{ kind: 'step', state: 'succeeded' }, { kind: 'event', state }] });
  const events = [
    { id: 3, kind: 'awaiting_event', detail: { event: 'order.paid', match: { 'data.orderId': 'o-2' }, timeoutAt: null } },
    { id: 1, kind: 'awaiting_event', detail: { event: 'order.created', match: {}, timeoutAt: null } },
    { id: 2, kind: 'event_received', detail: { eventId: 'evt-1' } },
  ];

  it('reads the newest awaiting_event of a run waiting on an event checkpoint', () => {
    expect(awaitedEvent(waitingFor('waiting'), events)).toEqual({ event: 'order.paid', match: { 'data.orderId': 'o-2' }, timeoutAt: null });
  });

  it.each<[string, { state: string; checkpoints: { kind: string; state: string }[] }, typeof events]>([
    ['a run not waiting', { ...waitingFor('waiting'), state: 'running' }, events],
    ['a wait already received', waitingFor('received'), events],
    ['a wait for a signal', { state: 'waiting', checkpoints: [{ kind: 'signal', state: 'waiting' }] }, events],
    ['events not read yet', waitingFor('waiting'), []],
  ])('is null for %s', (_, run, known) => {
    expect(awaitedEvent(run, known)).toBeNull();
  });
});

describe('eventWaitWords', () => {
  it.each<[string, Record<string, unknown>, string]>([
    ['awaiting_event', { event: 'order.paid', match: { 'data.plan': 'pro' }, timeoutAt: '2026-12-01T10:00:00Z' }, 'waits for event order.paid where data.plan = "pro", until 2026-12-01 10:00:00Z'],
    ['awaiting_event', {}, 'waits for an event'],
    ['event_received', { event: 'order.paid', eventId: 'evt-9' }, 'received event order.paid (evt-9)'],
    ['event_received', { eventId: 'evt-9' }, 'received event evt-9'],
    ['event_received', { event: 'order.paid' }, 'received event order.paid'],
    ['event_received', {}, 'received the event it waited for'],
    ['awaiting_signal', { signal: 'approval' }, ''],
    ['claimed', {}, ''],
  ])('%s %j → %s', (kind, detail, words) => {
    expect(eventWaitWords({ kind, detail })).toBe(words);
  });
});

describe('outcomeInWords and skipInWords', () => {
  it.each<[number, number, number, string]>([
    [0, 0, 0, 'started no run, skipped no schedule, resumed no wait'],
    [1, 1, 1, 'started 1 run, skipped 1 schedule, resumed 1 wait'],
    [3, 2, 0, 'started 3 runs, skipped 2 schedules, resumed no wait'],
  ])('%d runs, %d skipped, %d resumed', (runs, skipped, resumed, words) => {
    const many = (n: number) => Array.from({ length: n }, (_, i) => i);
    expect(outcomeInWords({ runs: many(runs), skipped: many(skipped), resumed: many(resumed) })).toBe(words);
  });

  it.each([
    ['SCHEDULE_PAUSED', 'the schedule was paused'],
    ['OVERLAP_SKIPPED', 'a run of it was still active (overlap skip)'],
    ['RATE_LIMITED', 'its rate limit made as many runs for the key as its window allows'],
    ['FLOW_KEY_UNRESOLVED', 'its debounce, throttle, rate limit or batch key names a field the event lacks'],
    ['CONCURRENCY_LIMIT', 'CONCURRENCY_LIMIT'],
  ])('%s → %s', (code, words) => {
    expect(skipInWords(code)).toBe(words);
  });
});

describe('sendEventCommand', () => {
  it('posts the event as JSON with a bearer key', () => {
    expect(sendEventCommand('http://localhost:3000')).toBe(
      `curl -s -XPOST http://localhost:3000/v1/events -H 'content-type: application/json' -H "Authorization: Bearer $KAIROS_API_KEY" -d '{"name":"order.paid","data":{"plan":"pro"}}'`,
    );
    expect(sendEventCommand('https://kairos.example', 'invoice.sent', null)).toContain(`-d '{"name":"invoice.sent","data":null}'`);
  });
});
