import { describe, expect, it } from 'vitest';
import { ValidationError, type ErrorCode } from './errors.js';
import { MAX_PREVIEW_COUNT, previewOf } from './preview.js';
import { readPreviewRequest } from './wire/index.js';

const NOW = Date.parse('2026-06-01T12:00:00Z');
/** A POST /v1/cron/preview body previewed, as the API answers it (no calendars). */
function previewSpec(body: unknown, nowMs: number) {
  const { spec, afterMs, count } = readPreviewRequest(body, nowMs);
  return previewOf(spec, afterMs, count);
}
const isoTimes = (times: number[]): string[] => times.map((ms) => new Date(ms).toISOString().replace('.000Z', 'Z'));

describe('previewSpec', () => {
  it.each<[string, Record<string, unknown>, string[]]>([
    [
      'ten hourly fires by default, strictly after now',
      { cron: '0 * * * *' },
      ['13', '14', '15', '16', '17', '18', '19', '20', '21', '22'].map((h) => `2026-06-01T${h}:00:00Z`),
    ],
    ['count', { cron: '0 * * * *', count: 2 }, ['2026-06-01T13:00:00Z', '2026-06-01T14:00:00Z']],
    ['from a given instant', { cron: '0 * * * *', after: '2026-07-01T08:00:00Z', count: 2 }, ['2026-07-01T09:00:00Z', '2026-07-01T10:00:00Z']],
    ['after exactly on a fire is excluded', { cron: '0 * * * *', after: '2026-06-01T13:00:00Z', count: 1 }, ['2026-06-01T14:00:00Z']],
    ['after in the past is allowed', { cron: '0 0 * * *', after: '2020-01-01T00:00:00Z', count: 2 }, ['2020-01-02T00:00:00Z', '2020-01-03T00:00:00Z']],
    [
      'in the schedule zone (02:30 Berlin = 00:30Z in summer)',
      { cron: '30 2 * * *', timezone: 'Europe/Berlin', count: 2 },
      ['2026-06-02T00:30:00Z', '2026-06-03T00:30:00Z'],
    ],
    ['every, anchored at after', { every: '15m', count: 3 }, ['2026-06-01T12:15:00Z', '2026-06-01T12:30:00Z', '2026-06-01T12:45:00Z']],
    [
      'every, anchored at a future startAt',
      { every: '15m', startAt: '2026-06-01T12:07:00Z', count: 3 },
      ['2026-06-01T12:07:00Z', '2026-06-01T12:22:00Z', '2026-06-01T12:37:00Z'],
    ],
    [
      'every, anchored at a past startAt',
      { every: '1h', startAt: '2026-06-01T09:40:00Z', count: 2 },
      ['2026-06-01T12:40:00Z', '2026-06-01T13:40:00Z'],
    ],
    [
      'cron with a future startAt: no fire before it',
      { cron: '0 * * * *', startAt: '2026-06-02T00:30:00Z', count: 2 },
      ['2026-06-02T01:00:00Z', '2026-06-02T02:00:00Z'],
    ],
    [
      'cron with startAt on a fire: that fire is the first',
      { cron: '0 * * * *', startAt: '2026-06-02T01:00:00Z', count: 1 },
      ['2026-06-02T01:00:00Z'],
    ],
    [
      'DST gap, auto (default) shifts a fixed time: 02:30 New York on 8 March fires at 03:30 EDT',
      { cron: '30 2 * * *', timezone: 'America/New_York', after: '2026-03-07T12:00:00Z', count: 3 },
      ['2026-03-08T07:30:00Z', '2026-03-09T06:30:00Z', '2026-03-10T06:30:00Z'],
    ],
    [
      'DST gap, skip',
      { cron: '30 2 * * *', timezone: 'America/New_York', dst: { gap: 'skip' }, after: '2026-03-07T12:00:00Z', count: 3 },
      ['2026-03-09T06:30:00Z', '2026-03-10T06:30:00Z', '2026-03-11T06:30:00Z'],
    ],
    [
      'DST overlap, both: 01:30 New York on 1 November fires twice',
      { cron: '30 1 * * *', timezone: 'America/New_York', dst: { overlap: 'both' }, after: '2026-10-31T12:00:00Z', count: 3 },
      ['2026-11-01T05:30:00Z', '2026-11-01T06:30:00Z', '2026-11-02T06:30:00Z'],
    ],
    [
      'DST overlap, auto (default): hourly in Berlin on 31 October 2027 fires through the repeated hour',
      { cron: '0 * * * *', timezone: 'Europe/Berlin', after: '2027-10-30T23:30:00Z', count: 3 },
      ['2027-10-31T00:00:00Z', '2027-10-31T01:00:00Z', '2027-10-31T02:00:00Z'],
    ],
    [
      'DST overlap, first: hourly in Berlin on 31 October 2027 fires once per wall time',
      { cron: '0 * * * *', timezone: 'Europe/Berlin', dst: { overlap: 'first' }, after: '2027-10-30T23:30:00Z', count: 3 },
      ['2027-10-31T00:00:00Z', '2027-10-31T02:00:00Z', '2027-10-31T03:00:00Z'],
    ],
  ])('%s', (_name, body, expected) => {
    expect(isoTimes(previewSpec(body, NOW).fireTimes)).toEqual(expected);
  });

  it.each<[string, Record<string, unknown>, string | null, Record<string, string>]>([
    ['a cron without dst gets the default', { cron: '0 * * * *' }, '0 * * * *', { gap: 'auto', overlap: 'auto' }],
    ['a cron with half a dst', { cron: '30 2 * * *', dst: { gap: 'skip' } }, '30 2 * * *', { gap: 'skip', overlap: 'auto' }],
    ['an interval', { every: '15m' }, null, { gap: 'auto', overlap: 'auto' }],
  ])('names the expression and the policy it previewed: %s', (_name, body, cron, dst) => {
    expect(previewSpec(body, NOW)).toMatchObject({ cron, dst });
  });

  it('gives up to MAX_PREVIEW_COUNT fires', () => {
    expect(MAX_PREVIEW_COUNT).toBe(1_000);
    const times = previewSpec({ every: '1m', count: 1_000 }, NOW).fireTimes;
    expect(times).toHaveLength(1_000);
    expect(new Date(times.at(-1)!).toISOString()).toBe('2026-06-02T04:40:00.000Z');
  });

  it.each<[string, unknown, ErrorCode, string | null]>([
    ['body not an object', [], 'VALIDATION_FAILED', null],
    ['neither cron nor every', { timezone: 'UTC' }, 'MISSING_FIELD', 'cron'],
    ['a one-shot', { at: '2026-12-01T09:00:00Z' }, 'UNKNOWN_FIELD', 'at'],
    ['a target', { cron: '0 * * * *', target: { type: 'handler', name: 'echo' } }, 'UNKNOWN_FIELD', 'target'],
    ['endAt', { cron: '0 * * * *', endAt: '2026-12-01T09:00:00Z' }, 'UNKNOWN_FIELD', 'endAt'],
    ['cron and every', { cron: '0 * * * *', every: '1m' }, 'CONFLICTING_FIELDS', 'every'],
    ['an invalid cron', { cron: '0 25 * * *' }, 'INVALID_CRON', 'cron'],
    ['an every below 1 s', { every: '10ms' }, 'INVALID_DURATION', 'every'],
    ['an unknown zone', { cron: '0 * * * *', timezone: 'Europe/Atlantis' }, 'INVALID_TIMEZONE', 'timezone'],
    ['a bad dst policy', { cron: '0 * * * *', dst: { gap: 'later' } }, 'VALIDATION_FAILED', 'dst.gap'],
    ['after not an instant', { cron: '0 * * * *', after: 'now' }, 'INVALID_INSTANT', 'after'],
    ['startAt not an instant', { cron: '0 * * * *', startAt: 'soon' }, 'INVALID_INSTANT', 'startAt'],
    ['count zero', { cron: '0 * * * *', count: 0 }, 'VALIDATION_FAILED', 'count'],
    ['count over the maximum', { cron: '0 * * * *', count: 1_001 }, 'VALIDATION_FAILED', 'count'],
    ['count fractional', { cron: '0 * * * *', count: 2.5 }, 'VALIDATION_FAILED', 'count'],
    ['a cron that never fires', { cron: '0 0 30 2 *' }, 'NO_FUTURE_FIRE', 'cron'],
  ])('refuses %s: %s on %s', (_name, body, code, field) => {
    let caught: unknown;
    try {
      previewSpec(body, NOW);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(ValidationError);
    expect(caught).toMatchObject({ code, field });
  });
});
