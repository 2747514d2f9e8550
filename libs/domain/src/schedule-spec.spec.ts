import { describe, expect, it } from 'vitest';
import { ValidationError, type ErrorCode } from './errors.js';
import { canonicalJson, firstFireAt, nextSlotWithinBounds, recurrenceOf, specHash, type ScheduleSpec } from './schedule-spec.js';
import { requestHash } from './request-hash.js';
import { readScheduleCreate } from './wire/index.js';

/** Monday 2026-06-01 12:00 UTC (14:00 in Berlin, CEST). */
const NOW = Date.parse('2026-06-01T12:00:00Z');
const iso = (s: string): number => Date.parse(s);
const HOUR = 3_600_000;

const BASE = { cron: '0 * * * *', target: { type: 'handler', name: 'echo' } };
const parse = (extra: Record<string, unknown>, nowMs = NOW) => readScheduleCreate({ ...BASE, ...extra }, nowMs);

function refusal(fn: () => unknown): { code: ErrorCode; field: string | null; message: string } {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(ValidationError);
    const e = error as ValidationError;
    return { code: e.code, field: e.field, message: e.message };
  }
  throw new Error('expected a ValidationError, but the body was accepted');
}

describe('readScheduleCreate: defaults', () => {
  it('fills in every default of a minimal body', () => {
    expect(readScheduleCreate(BASE, NOW)).toEqual({
      spec: {
        name: null,
        timing: { kind: 'cron', cron: '0 * * * *' },
        timezone: 'UTC',
        dst: { gap: 'auto', overlap: 'auto' },
        catchup: { mode: 'latest', windowMs: null, limit: null },
        overlap: 'skip',
        target: { type: 'handler', name: 'echo', queue: 'default' },
        payload: null,
        retry: { maxAttempts: 3, backoff: { type: 'exponential', baseMs: 60_000, maxMs: 3_600_000, jitter: 0.1 } },
        timeoutMs: 300_000,
        concurrency: null,
        priority: 3,
        fairness: null,
        startAtMs: null,
        endAtMs: null,
        maxRuns: null,
        jitterMs: 0,
        labels: {},
        expect: null,
        calendar: null,
        flow: null,
      },
      paused: false,
      idempotencyKey: null,
    });
  });

  it('treats null like an absent field, as the wire shape writes "startAt": null', () => {
    const nulls = {
      name: null,
      every: null,
      at: null,
      in: null,
      timezone: null,
      dst: null,
      catchup: null,
      overlap: null,
      payload: null,
      retry: null,
      timeout: null,
      startAt: null,
      endAt: null,
      maxRuns: null,
      jitter: null,
      labels: null,
      paused: null,
      idempotencyKey: null,
    };
    expect(parse(nulls)).toEqual(readScheduleCreate(BASE, NOW));
  });

  it('an explicit body spelling out every default is the same definition (same specHash)', () => {
    const explicit = parse({
      timezone: 'UTC',
      dst: { gap: 'auto', overlap: 'auto' },
      catchup: { mode: 'latest' },
      overlap: 'skip',
      retry: { maxAttempts: 3, backoff: { type: 'exponential', base: '60s', max: '1h', jitter: 0.1 } },
      timeout: '5m',
      jitter: '0s',
      labels: {},
    });
    expect(specHash(explicit.spec)).toBe(specHash(readScheduleCreate(BASE, NOW).spec));
  });
});

describe('readScheduleCreate: accepted forms', () => {
  it.each<[string, Record<string, unknown>, Partial<ScheduleSpec>]>([
    ['5-field cron', { cron: '30 2 * * *' }, { timing: { kind: 'cron', cron: '30 2 * * *' } }],
    ['6-field cron with seconds', { cron: '*/10 * * * * *' }, { timing: { kind: 'cron', cron: '*/10 * * * * *' } }],
    ['cron macro', { cron: '@daily' }, { timing: { kind: 'cron', cron: '@daily' } }],
    ['cron with L', { cron: '0 9 L * *' }, { timing: { kind: 'cron', cron: '0 9 L * *' } }],
    ['cron with names and #', { cron: '0 9 * JAN,JUL MON#1' }, { timing: { kind: 'cron', cron: '0 9 * JAN,JUL MON#1' } }],
    ['every as seconds', { cron: undefined, every: '90s' }, { timing: { kind: 'every', everyMs: 90_000 } }],
    ['every as minutes', { cron: undefined, every: '15m' }, { timing: { kind: 'every', everyMs: 900_000 } }],
    ['every as hours and minutes', { cron: undefined, every: '1h30m' }, { timing: { kind: 'every', everyMs: 5_400_000 } }],
    ['every as integer milliseconds', { cron: undefined, every: 2_500 }, { timing: { kind: 'every', everyMs: 2_500 } }],
    ['every at the 1 s minimum', { cron: undefined, every: '1s' }, { timing: { kind: 'every', everyMs: 1_000 } }],
    ['at in UTC', { cron: undefined, at: '2026-12-01T09:00:00Z' }, { timing: { kind: 'at', atMs: iso('2026-12-01T09:00:00Z') } }],
    ['at with an offset', { cron: undefined, at: '2026-12-01T11:00:00+02:00' }, { timing: { kind: 'at', atMs: iso('2026-12-01T09:00:00Z') } }],
    ['at without seconds', { cron: undefined, at: '2026-12-01T09:00Z' }, { timing: { kind: 'at', atMs: iso('2026-12-01T09:00:00Z') } }],
    ['at with milliseconds', { cron: undefined, at: '2026-12-01T09:00:00.250Z' }, { timing: { kind: 'at', atMs: iso('2026-12-01T09:00:00.250Z') } }],
    ['in, resolved against now', { cron: undefined, in: '10m' }, { timing: { kind: 'at', atMs: iso('2026-06-01T12:10:00Z') } }],
    ['in as integer milliseconds', { cron: undefined, in: 250 }, { timing: { kind: 'at', atMs: NOW + 250 } }],
    ['timezone', { timezone: 'Europe/Berlin' }, { timezone: 'Europe/Berlin' }],
    ['dst gap only', { dst: { gap: 'skip' } }, { dst: { gap: 'skip', overlap: 'auto' } }],
    ['dst overlap only', { dst: { overlap: 'both' } }, { dst: { gap: 'auto', overlap: 'both' } }],
    ['dst auto spelled out', { dst: { gap: 'auto', overlap: 'auto' } }, { dst: { gap: 'auto', overlap: 'auto' } }],
    ['dst shift and first, the policy before auto', { dst: { gap: 'shift', overlap: 'first' } }, { dst: { gap: 'shift', overlap: 'first' } }],
    ['dst both given', { dst: { gap: 'skip', overlap: 'last' } }, { dst: { gap: 'skip', overlap: 'last' } }],
    ['catchup in full', { catchup: { mode: 'all', window: '1h', limit: 10 } }, { catchup: { mode: 'all', windowMs: HOUR, limit: 10 } }],
    ['catchup empty: defaults', { catchup: {} }, { catchup: { mode: 'latest', windowMs: null, limit: null } }],
    ['catchup window in ms', { catchup: { window: 90_000 } }, { catchup: { mode: 'latest', windowMs: 90_000, limit: null } }],
    ['catchup none', { catchup: { mode: 'none' } }, { catchup: { mode: 'none', windowMs: null, limit: null } }],
    ['catchup limit at its maximum', { catchup: { mode: 'all', limit: 1_000 } }, { catchup: { mode: 'all', windowMs: null, limit: 1_000 } }],
    ['overlap allow', { overlap: 'allow' }, { overlap: 'allow' }],
    ['overlap buffer_one', { overlap: 'buffer_one' }, { overlap: 'buffer_one' }],
    ['overlap buffer_all', { overlap: 'buffer_all' }, { overlap: 'buffer_all' }],
    ['overlap replace', { overlap: 'replace' }, { overlap: 'replace' }],
    [
      'http target with its defaults',
      { target: { type: 'http', url: 'https://example.com/hook' } },
      { target: { type: 'http', url: 'https://example.com/hook', method: 'POST', headers: {}, timeoutMs: 30_000 } },
    ],
    ['payload object, verbatim', { payload: { any: 'json', n: [1, 2, { deep: null }] } }, { payload: { any: 'json', n: [1, 2, { deep: null }] } }],
    ['payload scalar', { payload: 'just a string' }, { payload: 'just a string' }],
    ['payload false is kept', { payload: false }, { payload: false }],
    ['payload 0 is kept', { payload: 0 }, { payload: 0 }],
    [
      'retry in full',
      { retry: { maxAttempts: 5, backoff: { type: 'fixed', base: '10s', max: '1m', jitter: 0 } } },
      { retry: { maxAttempts: 5, backoff: { type: 'fixed', baseMs: 10_000, maxMs: 60_000, jitter: 0 } } },
    ],
    ['timeout as a string', { timeout: '90s' }, { timeoutMs: 90_000 }],
    ['timeout as ms', { timeout: 1 }, { timeoutMs: 1 }],
    ['timeout at its 24 h maximum', { timeout: '24h' }, { timeoutMs: 86_400_000 }],
    ['startAt and endAt', { startAt: '2026-07-01T00:00:00Z', endAt: '2026-08-01T00:00:00+02:00' }, { startAtMs: iso('2026-07-01T00:00:00Z'), endAtMs: iso('2026-07-31T22:00:00Z') }],
    ['startAt in the past is allowed', { startAt: '2020-01-01T00:00:00Z' }, { startAtMs: iso('2020-01-01T00:00:00Z') }],
    ['maxRuns', { maxRuns: 1 }, { maxRuns: 1 }],
    ['jitter', { jitter: '30s' }, { jitterMs: 30_000 }],
    ['jitter at its 24 h maximum', { jitter: '24h' }, { jitterMs: 86_400_000 }],
    ['labels', { labels: { team: 'billing', tier: '' } }, { labels: { team: 'billing', tier: '' } }],
    ['name', { name: 'nightly-report' }, { name: 'nightly-report' }],
    ['name with every allowed character', { name: '0a.B_c:d-E' }, { name: '0a.B_c:d-E' }],
    ['name of 200 characters', { name: 'n'.repeat(200) }, { name: 'n'.repeat(200) }],
  ])('%s', (_name, extra, expected) => {
    const spec = parse(extra).spec;
    const picked = Object.fromEntries(Object.keys(expected).map((k) => [k, spec[k as keyof ScheduleSpec]]));
    expect(picked).toEqual(expected);
  });

  it('reads paused and idempotencyKey beside the definition', () => {
    expect(parse({ paused: true, idempotencyKey: 'req-42' })).toMatchObject({ paused: true, idempotencyKey: 'req-42' });
    expect(parse({ paused: false }).paused).toBe(false);
  });

  it('accepts a payload of exactly 256 KiB of JSON', () => {
    // A JSON string adds its two quotes.
    expect(parse({ payload: 'x'.repeat(256 * 1024 - 2) }).spec.payload).toHaveLength(256 * 1024 - 2);
  });

  it('resolves `in` against the nowMs it is given', () => {
    const a = parse({ cron: undefined, in: '1h' }, NOW);
    const b = parse({ cron: undefined, in: '1h' }, NOW + 5_000);
    expect(a.spec.timing).toEqual({ kind: 'at', atMs: iso('2026-06-01T13:00:00Z') });
    expect(b.spec.timing).toEqual({ kind: 'at', atMs: iso('2026-06-01T13:00:05Z') });
  });
});

describe('readScheduleCreate: refusals', () => {
  const long = (n: number): string => 'a'.repeat(n);
  const manyLabels = Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`k${i}`, 'v']));

  it.each<[string, unknown, ErrorCode, string | null]>([
    // The body itself.
    ['body is an array', [], 'VALIDATION_FAILED', null],
    ['body is null', null, 'VALIDATION_FAILED', null],
    ['body is a string', 'cron', 'VALIDATION_FAILED', null],
    ['unknown top-level field', { ...BASE, schedule: 'x' }, 'UNKNOWN_FIELD', 'schedule'],
    ['a read-only field of the response', { ...BASE, nextFireAt: '2026-01-01T00:00:00Z' }, 'UNKNOWN_FIELD', 'nextFireAt'],
    // Timing.
    ['no timing at all', { target: BASE.target }, 'MISSING_FIELD', 'cron'],
    ['cron and every', { ...BASE, every: '1m' }, 'CONFLICTING_FIELDS', 'every'],
    ['cron and at', { ...BASE, at: '2026-12-01T09:00:00Z' }, 'CONFLICTING_FIELDS', 'at'],
    ['at and in', { target: BASE.target, at: '2026-12-01T09:00:00Z', in: '1m' }, 'CONFLICTING_FIELDS', 'in'],
    ['cron not a string', { ...BASE, cron: 5 }, 'VALIDATION_FAILED', 'cron'],
    ['cron empty', { ...BASE, cron: '' }, 'VALIDATION_FAILED', 'cron'],
    ['cron over 256 characters', { ...BASE, cron: `0 * * * * ${' '.repeat(250)}` }, 'VALIDATION_FAILED', 'cron'],
    ['cron minute out of range', { ...BASE, cron: '61 * * * *' }, 'INVALID_CRON', 'cron'],
    ['cron with four fields', { ...BASE, cron: '* * * *' }, 'INVALID_CRON', 'cron'],
    ['cron day-of-week 8', { ...BASE, cron: '0 0 * * 8' }, 'INVALID_CRON', 'cron'],
    ['cron that never matches', { ...BASE, cron: '0 0 30 2 *' }, 'NO_FUTURE_FIRE', 'cron'],
    ['every without a unit', { target: BASE.target, every: '90' }, 'INVALID_DURATION', 'every'],
    ['every below 1 s', { target: BASE.target, every: '500ms' }, 'INVALID_DURATION', 'every'],
    ['every of 999 ms', { target: BASE.target, every: 999 }, 'INVALID_DURATION', 'every'],
    ['every zero', { target: BASE.target, every: '0s' }, 'INVALID_DURATION', 'every'],
    ['every negative', { target: BASE.target, every: -60_000 }, 'INVALID_DURATION', 'every'],
    ['every fractional', { target: BASE.target, every: '1.5m' }, 'INVALID_DURATION', 'every'],
    ['every a boolean', { target: BASE.target, every: true }, 'INVALID_DURATION', 'every'],
    ['every over 100 years', { target: BASE.target, every: '36526d' }, 'INVALID_DURATION', 'every'],
    ['at not an instant', { target: BASE.target, at: 'tomorrow' }, 'INVALID_INSTANT', 'at'],
    ['at without an offset', { target: BASE.target, at: '2026-12-01T09:00:00' }, 'INVALID_INSTANT', 'at'],
    ['at a date only', { target: BASE.target, at: '2026-12-01' }, 'INVALID_INSTANT', 'at'],
    ['at as epoch ms', { target: BASE.target, at: 1_800_000_000_000 }, 'INVALID_INSTANT', 'at'],
    ['at on a day the month lacks', { target: BASE.target, at: '2026-09-31T09:00:00Z' }, 'INVALID_INSTANT', 'at'],
    ['at on 29 February of a common year', { target: BASE.target, at: '2027-02-29T09:00:00Z' }, 'INVALID_INSTANT', 'at'],
    ['at in the past', { target: BASE.target, at: '2026-06-01T11:59:59Z' }, 'NO_FUTURE_FIRE', 'at'],
    ['at exactly now', { target: BASE.target, at: '2026-06-01T12:00:00Z' }, 'NO_FUTURE_FIRE', 'at'],
    ['in zero', { target: BASE.target, in: '0s' }, 'INVALID_DURATION', 'in'],
    ['in not a duration', { target: BASE.target, in: 'soon' }, 'INVALID_DURATION', 'in'],
    // Zone and DST.
    ['unknown time zone', { ...BASE, timezone: 'Mars/Olympus' }, 'INVALID_TIMEZONE', 'timezone'],
    ['time zone abbreviation', { ...BASE, timezone: 'CEST' }, 'INVALID_TIMEZONE', 'timezone'],
    ['time zone not a string', { ...BASE, timezone: 1 }, 'VALIDATION_FAILED', 'timezone'],
    ['time zone over 64 characters', { ...BASE, timezone: long(65) }, 'VALIDATION_FAILED', 'timezone'],
    ['dst not an object', { ...BASE, dst: 'shift' }, 'VALIDATION_FAILED', 'dst'],
    ['dst gap unknown', { ...BASE, dst: { gap: 'jump' } }, 'VALIDATION_FAILED', 'dst.gap'],
    ['dst overlap unknown', { ...BASE, dst: { overlap: 'middle' } }, 'VALIDATION_FAILED', 'dst.overlap'],
    ['dst unknown field', { ...BASE, dst: { spring: 'skip' } }, 'UNKNOWN_FIELD', 'dst.spring'],
    // Catch-up and overlap.
    ['catchup not an object', { ...BASE, catchup: 'all' }, 'VALIDATION_FAILED', 'catchup'],
    ['catchup mode unknown', { ...BASE, catchup: { mode: 'some' } }, 'VALIDATION_FAILED', 'catchup.mode'],
    ['catchup window unreadable', { ...BASE, catchup: { window: '1 hour' } }, 'INVALID_DURATION', 'catchup.window'],
    ['catchup window zero', { ...BASE, catchup: { window: 0 } }, 'INVALID_DURATION', 'catchup.window'],
    ['catchup limit zero', { ...BASE, catchup: { limit: 0 } }, 'VALIDATION_FAILED', 'catchup.limit'],
    ['catchup limit over 1000', { ...BASE, catchup: { limit: 1_001 } }, 'VALIDATION_FAILED', 'catchup.limit'],
    ['catchup limit fractional', { ...BASE, catchup: { limit: 2.5 } }, 'VALIDATION_FAILED', 'catchup.limit'],
    ['catchup limit as a string', { ...BASE, catchup: { limit: '3' } }, 'VALIDATION_FAILED', 'catchup.limit'],
    ['catchup unknown field', { ...BASE, catchup: { max: 3 } }, 'UNKNOWN_FIELD', 'catchup.max'],
    ['overlap unknown', { ...BASE, overlap: 'queue' }, 'VALIDATION_FAILED', 'overlap'],
    ['overlap in the wrong case', { ...BASE, overlap: 'SKIP' }, 'VALIDATION_FAILED', 'overlap'],
    // Target, payload, retry, timeout (the readers have their own tables in run-policy.spec.ts).
    ['no target', { cron: BASE.cron }, 'MISSING_FIELD', 'target'],
    ['handler name not a name', { ...BASE, target: { type: 'handler', name: 'send mail' } }, 'VALIDATION_FAILED', 'target.name'],
    ['payload over 256 KiB', { ...BASE, payload: 'x'.repeat(256 * 1024 - 1) }, 'PAYLOAD_TOO_LARGE', 'payload'],
    ['retry maxAttempts zero', { ...BASE, retry: { maxAttempts: 0 } }, 'VALIDATION_FAILED', 'retry.maxAttempts'],
    ['timeout zero', { ...BASE, timeout: '0s' }, 'INVALID_DURATION', 'timeout'],
    ['timeout over 24 h', { ...BASE, timeout: '24h1ms' }, 'INVALID_DURATION', 'timeout'],
    ['timeout unreadable', { ...BASE, timeout: '5 minutes' }, 'INVALID_DURATION', 'timeout'],
    // Bounds.
    ['startAt not an instant', { ...BASE, startAt: 'next week' }, 'INVALID_INSTANT', 'startAt'],
    ['endAt without an offset', { ...BASE, endAt: '2026-12-01T00:00:00' }, 'INVALID_INSTANT', 'endAt'],
    ['endAt equal to startAt', { ...BASE, startAt: '2026-07-01T00:00:00Z', endAt: '2026-07-01T00:00:00Z' }, 'VALIDATION_FAILED', 'endAt'],
    ['endAt before startAt', { ...BASE, startAt: '2026-07-01T00:00:00Z', endAt: '2026-06-30T00:00:00Z' }, 'VALIDATION_FAILED', 'endAt'],
    ['endAt before the first cron slot', { ...BASE, endAt: '2026-06-01T12:59:59Z' }, 'NO_FUTURE_FIRE', 'cron'],
    ['endAt in the past', { ...BASE, endAt: '2026-05-01T00:00:00Z' }, 'NO_FUTURE_FIRE', 'cron'],
    ['endAt before the first every slot', { target: BASE.target, every: '1m', endAt: '2026-06-01T12:00:30Z' }, 'NO_FUTURE_FIRE', 'every'],
    ['maxRuns zero', { ...BASE, maxRuns: 0 }, 'VALIDATION_FAILED', 'maxRuns'],
    ['maxRuns fractional', { ...BASE, maxRuns: 1.5 }, 'VALIDATION_FAILED', 'maxRuns'],
    ['maxRuns as a string', { ...BASE, maxRuns: '3' }, 'VALIDATION_FAILED', 'maxRuns'],
    ['jitter over 24 h', { ...BASE, jitter: '25h' }, 'INVALID_DURATION', 'jitter'],
    ['jitter negative', { ...BASE, jitter: '-1s' }, 'INVALID_DURATION', 'jitter'],
    // Schedules started by events.
    ['on with cron', { ...BASE, on: { event: 'order.paid' } }, 'CONFLICTING_FIELDS', 'on'],
    ['on without event', { target: BASE.target, on: {} }, 'MISSING_FIELD', 'on.event'],
    ['on event with a space', { target: BASE.target, on: { event: 'order paid' } }, 'VALIDATION_FAILED', 'on.event'],
    ['on event over 128 characters', { target: BASE.target, on: { event: 'e'.repeat(129) } }, 'VALIDATION_FAILED', 'on.event'],
    ['on unknown field', { target: BASE.target, on: { event: 'a', when: 1 } }, 'UNKNOWN_FIELD', 'on.when'],
    ['on match not an object', { target: BASE.target, on: { event: 'a', match: ['data.x'] } }, 'VALIDATION_FAILED', 'on.match'],
    ['on match path outside the event', { target: BASE.target, on: { event: 'a', match: { 'payload.x': 1 } } }, 'VALIDATION_FAILED', 'on.match.payload.x'],
    ['on with a calendar', { target: BASE.target, on: { event: 'a' }, calendar: { weekdaysOnly: true } }, 'CONFLICTING_FIELDS', 'calendar'],
    ['on with maxRuns', { target: BASE.target, on: { event: 'a' }, maxRuns: 3 }, 'CONFLICTING_FIELDS', 'maxRuns'],
    ['on with a catch-up window', { target: BASE.target, on: { event: 'a' }, catchup: { window: '1h' } }, 'CONFLICTING_FIELDS', 'catchup'],
    ['on with jitter', { target: BASE.target, on: { event: 'a' }, jitter: '5s' }, 'CONFLICTING_FIELDS', 'jitter'],
    ['on with a payload that is no object', { target: BASE.target, on: { event: 'a' }, payload: [1, 2] }, 'VALIDATION_FAILED', 'payload'],
    // Labels, name and the create-only fields.
    ['labels not an object', { ...BASE, labels: ['a'] }, 'VALIDATION_FAILED', 'labels'],
    ['label value not a string', { ...BASE, labels: { team: 1 } }, 'VALIDATION_FAILED', 'labels.team'],
    ['label value over 256 characters', { ...BASE, labels: { team: long(257) } }, 'VALIDATION_FAILED', 'labels.team'],
    ['more than 64 labels', { ...BASE, labels: manyLabels }, 'VALIDATION_FAILED', 'labels'],
    // JSON.parse makes "__proto__" an own key, as a request body does; a literal would set the prototype.
    ['label key __proto__', { ...BASE, labels: JSON.parse('{"__proto__": "x"}') }, 'VALIDATION_FAILED', 'labels.__proto__'],
    ['label key constructor', { ...BASE, labels: { constructor: 'x' } }, 'VALIDATION_FAILED', 'labels.constructor'],
    ['label key prototype', { ...BASE, labels: { prototype: 'x' } }, 'VALIDATION_FAILED', 'labels.prototype'],
    ['startAt past year 9999 in UTC', { ...BASE, startAt: '9999-12-31T23:00:00-05:00' }, 'INVALID_INSTANT', 'startAt'],
    ['endAt past year 9999 in UTC', { ...BASE, endAt: '9999-12-31T23:59:59-00:01' }, 'INVALID_INSTANT', 'endAt'],
    ['at before year 0000 in UTC', { target: BASE.target, at: '0000-01-01T00:00:00+01:00' }, 'INVALID_INSTANT', 'at'],
    ['name with a space', { ...BASE, name: 'nightly report' }, 'VALIDATION_FAILED', 'name'],
    ['name starting with a dash', { ...BASE, name: '-report' }, 'VALIDATION_FAILED', 'name'],
    ['name with a slash', { ...BASE, name: 'a/b' }, 'VALIDATION_FAILED', 'name'],
    ['name empty', { ...BASE, name: '' }, 'VALIDATION_FAILED', 'name'],
    ['name over 200 characters', { ...BASE, name: long(201) }, 'VALIDATION_FAILED', 'name'],
    ['paused not a boolean', { ...BASE, paused: 'yes' }, 'VALIDATION_FAILED', 'paused'],
    ['idempotencyKey empty', { ...BASE, idempotencyKey: '' }, 'VALIDATION_FAILED', 'idempotencyKey'],
    ['idempotencyKey over 200 characters', { ...BASE, idempotencyKey: long(201) }, 'VALIDATION_FAILED', 'idempotencyKey'],
    ['idempotencyKey a number', { ...BASE, idempotencyKey: 42 }, 'VALIDATION_FAILED', 'idempotencyKey'],
  ])('%s: %s on %s', (_name, body, code, field) => {
    const r = refusal(() => readScheduleCreate(body, NOW));
    expect({ code: r.code, field: r.field }).toEqual({ code, field });
    expect(r.message.length).toBeGreaterThan(10);
  });

  it.each<[string, Record<string, unknown>, string, RegExp]>([
    ['an `in` timer ruled out by endAt names `in`, not the stored `at`', { cron: undefined, in: '1h', endAt: '2026-06-01T12:30:00Z' }, 'in', /never fires after now within its bounds/],
    ['a future `at` ruled out by endAt is not "in the past"', { cron: undefined, at: '2026-06-01T13:00:00Z', endAt: '2026-06-01T12:30:00Z' }, 'at', /never fires after now within its bounds/],
    ['a past `at` says so', { cron: undefined, at: '2026-06-01T11:00:00Z' }, 'at', /^at is in the past; give a future instant$/],
  ])('NO_FUTURE_FIRE: %s', (_name, extra, field, message) => {
    const r = refusal(() => parse(extra));
    expect(r.code).toBe('NO_FUTURE_FIRE');
    expect(r.field).toBe(field);
    expect(r.message).toMatch(message);
  });

  it.each<[string, unknown, RegExp]>([
    ['unknown field', { ...BASE, colour: 'red' }, /unknown field "colour"; accepted fields here are: name, cron, every, at, in, on, timezone/],
    ['conflicting timings', { ...BASE, every: '1m' }, /give exactly one of "cron", "every", "at", "in" or "on"; this request has "cron" and "every"/],
    ['invalid cron', { ...BASE, cron: '0 0 * * 8' }, /day-of-week/],
    ['unknown zone', { ...BASE, timezone: 'Mars/Olympus' }, /unknown time zone "Mars\/Olympus"; use an IANA name/],
    ['enum', { ...BASE, overlap: 'queue' }, /overlap must be one of "allow", "skip", "buffer_one", "buffer_all", "replace"; got "queue"/],
    ['duration', { ...BASE, timeout: '5 minutes' }, /timeout: .*write a duration such as "90s"/],
    ['payload', { ...BASE, payload: 'x'.repeat(300_000) }, /payload is 300002 bytes of JSON; the limit is 262144 bytes/],
  ])('says what to do: %s', (_name, body, message) => {
    expect(refusal(() => readScheduleCreate(body, NOW)).message).toMatch(message);
  });
});

describe('firstFireAt', () => {
  it.each<[string, Record<string, unknown>, string | null]>([
    ['hourly cron: the next full hour', {}, '2026-06-01T13:00:00Z'],
    ['cron on the zone wall clock (00:30 Berlin = 22:30Z the day before, CEST)', { cron: '30 0 * * *', timezone: 'Europe/Berlin' }, '2026-06-01T22:30:00Z'],
    ['cron with a future startAt: the first slot at or after it', { startAt: '2026-06-01T14:30:00Z' }, '2026-06-01T15:00:00Z'],
    ['cron with startAt exactly on a slot', { startAt: '2026-06-01T15:00:00Z' }, '2026-06-01T15:00:00Z'],
    ['cron with endAt exactly on the first slot', { endAt: '2026-06-01T13:00:00Z' }, '2026-06-01T13:00:00Z'],
    ['every: one interval after creation', { cron: undefined, every: '15m' }, '2026-06-01T12:15:00Z'],
    ['every with a future startAt: startAt itself', { cron: undefined, every: '15m', startAt: '2026-06-02T00:00:00Z' }, '2026-06-02T00:00:00Z'],
    ['every with a past startAt: anchored there', { cron: undefined, every: '15m', startAt: '2026-06-01T11:50:00Z' }, '2026-06-01T12:05:00Z'],
    ['at', { cron: undefined, at: '2026-12-01T09:00:00Z' }, '2026-12-01T09:00:00Z'],
    ['in', { cron: undefined, in: '90s' }, '2026-06-01T12:01:30Z'],
  ])('%s', (_name, extra, expected) => {
    const { spec } = parse(extra);
    expect(firstFireAt(spec, NOW)).toBe(expected === null ? null : iso(expected));
  });

  it('is null once the bounds leave nothing', () => {
    const { spec } = parse({ endAt: '2026-06-01T13:00:00Z' });
    expect(firstFireAt(spec, iso('2026-06-01T13:00:00Z'))).toBeNull();
  });
});

describe('nextSlotWithinBounds', () => {
  const { spec } = parse({ startAt: '2026-06-01T14:30:00Z', endAt: '2026-06-01T17:00:00Z' });
  const rec = recurrenceOf(spec, NOW);

  it.each<[string, string, string | null]>([
    ['before startAt: the first slot at or after it', '2026-06-01T12:00:00Z', '2026-06-01T15:00:00Z'],
    ['strictly after the instant given', '2026-06-01T15:00:00Z', '2026-06-01T16:00:00Z'],
    ['endAt itself is a slot', '2026-06-01T16:00:00Z', '2026-06-01T17:00:00Z'],
    ['nothing after endAt', '2026-06-01T17:00:00Z', null],
    ['nothing long after endAt', '2027-01-01T00:00:00Z', null],
  ])('%s', (_name, after, expected) => {
    expect(nextSlotWithinBounds(spec, rec, iso(after))).toBe(expected === null ? null : iso(expected));
  });

  it('anchors an every schedule without startAt at the anchor it is given', () => {
    const every = parse({ cron: undefined, every: '10m' }).spec;
    expect(nextSlotWithinBounds(every, recurrenceOf(every, iso('2026-06-01T11:03:00Z')), NOW)).toBe(iso('2026-06-01T12:03:00Z'));
  });
});

describe('specHash', () => {
  const base = parse({
    name: 'nightly',
    timezone: 'Europe/Berlin',
    payload: { a: 1, b: { c: [1, 2] } },
    labels: { team: 'billing', tier: 'gold' },
    target: { type: 'http', url: 'https://example.com/hook', headers: { 'X-A': '1', 'X-B': '2' } },
  }).spec;
  const hash = specHash(base);

  it('is a sha256 hex digest', () => {
    expect(hash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('does not depend on key order, at any depth', () => {
    const reordered = readScheduleCreate(
      {
        labels: { tier: 'gold', team: 'billing' },
        target: { headers: { 'X-B': '2', 'X-A': '1' }, url: 'https://example.com/hook', type: 'http' },
        payload: { b: { c: [1, 2] }, a: 1 },
        timezone: 'Europe/Berlin',
        name: 'nightly',
        cron: '0 * * * *',
      },
      NOW,
    ).spec;
    expect(specHash(reordered)).toBe(hash);
    const reversed = Object.fromEntries(Object.entries(base).reverse()) as unknown as ScheduleSpec;
    expect(specHash(reversed)).toBe(hash);
  });

  it('is the same for the same definition read at another time', () => {
    expect(specHash(parse({ name: 'x' }, NOW).spec)).toBe(specHash(parse({ name: 'x' }, NOW + HOUR).spec));
  });

  it.each<[string, Partial<ScheduleSpec>]>([
    ['name', { name: 'nightly-2' }],
    ['name removed', { name: null }],
    ['cron expression', { timing: { kind: 'cron', cron: '0 */2 * * *' } }],
    ['timing kind', { timing: { kind: 'every', everyMs: HOUR } }],
    ['one-shot', { timing: { kind: 'at', atMs: NOW + HOUR } }],
    ['timezone', { timezone: 'UTC' }],
    ['dst gap', { dst: { gap: 'skip', overlap: 'first' } }],
    ['dst overlap', { dst: { gap: 'shift', overlap: 'both' } }],
    ['dst shift and first instead of the default auto', { dst: { gap: 'shift', overlap: 'first' } }],
    ['catchup mode', { catchup: { mode: 'all', windowMs: null, limit: null } }],
    ['catchup window', { catchup: { mode: 'latest', windowMs: HOUR, limit: null } }],
    ['catchup limit', { catchup: { mode: 'latest', windowMs: null, limit: 5 } }],
    ['overlap', { overlap: 'replace' }],
    ['target url', { target: { type: 'http', url: 'https://example.com/other', method: 'POST', headers: { 'X-A': '1', 'X-B': '2' }, timeoutMs: 30_000 } }],
    ['target method', { target: { type: 'http', url: 'https://example.com/hook', method: 'PUT', headers: { 'X-A': '1', 'X-B': '2' }, timeoutMs: 30_000 } }],
    ['target header value', { target: { type: 'http', url: 'https://example.com/hook', method: 'POST', headers: { 'X-A': '1', 'X-B': '3' }, timeoutMs: 30_000 } }],
    ['target timeout', { target: { type: 'http', url: 'https://example.com/hook', method: 'POST', headers: { 'X-A': '1', 'X-B': '2' }, timeoutMs: 31_000 } }],
    ['target type', { target: { type: 'handler', name: 'echo', queue: 'default' } }],
    ['payload value deep inside', { payload: { a: 1, b: { c: [1, 3] } } }],
    ['payload array order', { payload: { a: 1, b: { c: [2, 1] } } }],
    ['payload number vs string', { payload: { a: '1', b: { c: [1, 2] } } }],
    ['payload removed', { payload: null }],
    ['retry attempts', { retry: { ...base.retry, maxAttempts: 4 } }],
    ['retry backoff type', { retry: { ...base.retry, backoff: { ...base.retry.backoff, type: 'fixed' } } }],
    ['retry backoff base', { retry: { ...base.retry, backoff: { ...base.retry.backoff, baseMs: 1_000 } } }],
    ['retry backoff max', { retry: { ...base.retry, backoff: { ...base.retry.backoff, maxMs: 2 * HOUR } } }],
    ['retry backoff jitter', { retry: { ...base.retry, backoff: { ...base.retry.backoff, jitter: 0.2 } } }],
    ['timeout', { timeoutMs: 60_000 }],
    ['startAt', { startAtMs: NOW }],
    ['endAt', { endAtMs: NOW + 24 * HOUR }],
    ['maxRuns', { maxRuns: 10 }],
    ['jitter', { jitterMs: 1_000 }],
    ['label value', { labels: { team: 'billing', tier: 'silver' } }],
    ['label added', { labels: { team: 'billing', tier: 'gold', env: 'prod' } }],
    ['labels emptied', { labels: {} }],
  ])('changes when %s changes', (_name, change) => {
    expect(specHash({ ...base, ...change })).not.toBe(hash);
  });

  it('distinguishes which field holds a value', () => {
    const variants = [{ startAtMs: NOW }, { endAtMs: NOW }, { maxRuns: NOW }, { jitterMs: NOW }, { timeoutMs: NOW }];
    const hashes = new Set(variants.map((v) => specHash({ ...base, ...v })));
    expect(hashes.size).toBe(variants.length);
  });
});

describe('stored hashes', () => {
  // Written by the implementation before canonicalJson was rewritten for speed: spec_hash and
  // request_hash are stored, and an apply or a repeated request compares against them.
  it('specHash gives the hashes stored before', () => {
    const nightly = parse({
      name: 'nightly',
      timezone: 'Europe/Berlin',
      payload: { a: 1, b: { c: [1, 2] } },
      labels: { team: 'billing', tier: 'gold' },
      target: { type: 'http', url: 'https://example.com/hook', headers: { 'X-A': '1', 'X-B': '2' } },
    }).spec;
    expect(specHash(nightly)).toBe('4e07ef387bd59d27223c9ea3cbd3454c0372f411376dc9f9a50eb7e3b42f6619');
    const timer = readScheduleCreate({ in: '10m', target: { type: 'handler', name: 'echo' }, payload: { i: 7 }, idempotencyKey: 'timer-7' }, NOW).spec;
    expect(specHash(timer)).toBe('042b3df7eb15e9cd03d1e5a6749c42e9cc418ead57018f9c27e926b8a35c93bb');
    const full = readScheduleCreate(
      {
        cron: '0 9 * * 1-5',
        target: { type: 'handler', name: 'echo', queue: 'media' },
        concurrency: { key: 'payload.tenant', limit: 2 },
        priority: 2,
        fairness: { key: 'payload.tenant', weight: 3 },
        expect: { succeededWithin: '15m' },
        calendar: { weekdaysOnly: true, exclude: ['holidays'] },
        retry: { maxAttempts: 5 },
        payload: { tenant: 'a' },
      },
      NOW,
    ).spec;
    expect(specHash(full)).toBe('4eb26f0734360c28961ebce73bed596873fe38395da70d2def9b70a175db618b');
  });

  it('requestHash gives the hashes stored before', () => {
    const body = { in: '10m', target: { type: 'handler', name: 'echo' }, payload: { i: 7, é: [1, null, { z: 1, a: '\u0000' }] }, idempotencyKey: 'timer-7' };
    expect(requestHash(body)).toBe('96ad09890dc383d8fa1f14dcfd585fa444bc2bf7f59953f0fe4348ff09803d90');
  });

  /** canonicalJson as it was first written, the reference the faster one must agree with. */
  function reference(value: unknown): string {
    if (Array.isArray(value)) return `[${value.map(reference).join(',')}]`;
    if (value !== null && typeof value === 'object') {
      const entries = Object.entries(value as Record<string, unknown>)
        .filter(([, v]) => v !== undefined)
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
      return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${reference(v)}`).join(',')}}`;
    }
    return JSON.stringify(value);
  }

  it.each<[string, unknown]>([
    ['scalars', [0, -0, 1.5, -2e21, 'a"b\\c\n', '', true, false, null, Number.NaN, Infinity]],
    ['undefined, functions and holes in arrays', Object.assign([1, undefined, () => 1, null], { 5: { b: undefined, a: [] } })],
    ['keys sorted by UTF-16 code units', { b: 1, a: 2, B: 3, é: 4, '😀': 5, '\uffff': 6, '10': 7, '9': 8, '': 9, 'a b': 10 }],
    ['nested objects and arrays', { z: [{ y: { x: [[], {}, [null]] } }], a: { c: undefined, b: 'q"uote' } }],
    ['a top-level string', 'text'],
    ['an empty object', {}],
  ])('writes %s as before', (_name, value) => {
    expect(canonicalJson(value)).toBe(reference(value));
  });
});
