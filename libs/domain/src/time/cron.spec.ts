import { describe, expect, it } from 'vitest';
import { CronSyntaxError, cronMatches, parseCron, type CronField } from './cron.js';
import { DEFAULT_DST_POLICY } from './dst-policy.js';
import { nextFireAfter, nextFireTimes } from './recurrence.js';

const utcFires = (expr: string, startIso: string, count: number): string[] =>
  nextFireTimes({ kind: 'cron', cron: parseCron(expr), timezone: 'UTC', dst: DEFAULT_DST_POLICY }, Date.parse(startIso), count).map((ms) =>
    new Date(ms).toISOString().replace(':00.000Z', 'Z'),
  );

describe('parseCron', () => {
  it.each([
    ['*/5 * * * *', false],
    ['*/10 * * * * *', true],
    ['@hourly', false],
    ['  0 0 * * *  ', false],
  ])('%j has seconds: %s', (expr, hasSeconds) => {
    const cron = parseCron(expr);
    expect(cron.hasSeconds).toBe(hasSeconds);
    expect(cron.source).toBe(expr.trim());
  });
});

describe('fire times (UTC; 2026-01-01 is a Thursday)', () => {
  it.each([
    ['L: last day of the month', '0 0 L * *', '2026-01-01T00:00Z', ['2026-01-31T00:00Z', '2026-02-28T00:00Z', '2026-03-31T00:00Z', '2026-04-30T00:00Z']],
    ['L-3: three days before the last', '0 0 L-3 * *', '2026-01-01T00:00Z', ['2026-01-28T00:00Z', '2026-02-25T00:00Z', '2026-03-28T00:00Z', '2026-04-27T00:00Z']],
    ['5L: last Friday', '0 0 * * 5L', '2026-01-01T00:00Z', ['2026-01-30T00:00Z', '2026-02-27T00:00Z', '2026-03-27T00:00Z', '2026-04-24T00:00Z']],
    ['1#2: second Monday', '0 0 * * 1#2', '2026-01-01T00:00Z', ['2026-01-12T00:00Z', '2026-02-09T00:00Z', '2026-03-09T00:00Z', '2026-04-13T00:00Z']],
    ['FRI#3: third Friday', '0 0 * * FRI#3', '2026-01-01T00:00Z', ['2026-01-16T00:00Z', '2026-02-20T00:00Z', '2026-03-20T00:00Z', '2026-04-17T00:00Z']],
    ['0#5: fifth Sunday, only in some months', '0 0 * * 0#5', '2026-01-01T00:00Z', ['2026-03-29T00:00Z', '2026-05-31T00:00Z', '2026-08-30T00:00Z', '2026-11-29T00:00Z']],
    ['# and L in one list', '0 0 * * 1#2,5L', '2026-01-01T00:00Z', ['2026-01-12T00:00Z', '2026-01-30T00:00Z', '2026-02-09T00:00Z', '2026-02-27T00:00Z']],
    [
      'Vixie OR: every 13th and every Friday',
      '0 0 13 * FRI',
      '2026-01-01T00:00Z',
      ['2026-01-02T00:00Z', '2026-01-09T00:00Z', '2026-01-13T00:00Z', '2026-01-16T00:00Z', '2026-01-23T00:00Z', '2026-01-30T00:00Z', '2026-02-06T00:00Z', '2026-02-13T00:00Z'],
    ],
    ['Vixie AND: a day-of-month starting with * is not restricted', '0 0 */2 * MON', '2026-01-01T00:00Z', ['2026-01-05T00:00Z', '2026-01-19T00:00Z', '2026-02-09T00:00Z', '2026-02-23T00:00Z']],
    ['? is * in day-of-month', '0 0 ? * MON', '2026-01-01T00:00Z', ['2026-01-05T00:00Z', '2026-01-12T00:00Z']],
    ['7 is Sunday', '0 0 * * 7', '2026-01-01T00:00Z', ['2026-01-04T00:00Z', '2026-01-11T00:00Z', '2026-01-18T00:00Z']],
    ['0 is Sunday', '0 0 * * 0', '2026-01-01T00:00Z', ['2026-01-04T00:00Z', '2026-01-11T00:00Z', '2026-01-18T00:00Z']],
    ['5-7 is Friday to Sunday', '0 0 * * 5-7', '2026-01-01T00:00Z', ['2026-01-02T00:00Z', '2026-01-03T00:00Z', '2026-01-04T00:00Z', '2026-01-09T00:00Z']],
    ['names, any case', '0 12 * feb,Mar sat,SUN', '2026-02-25T00:00Z', ['2026-02-28T12:00Z', '2026-03-01T12:00Z', '2026-03-07T12:00Z']],
    ['name ranges', '0 12 * JAN-mar mon-WED', '2026-03-30T00:00Z', ['2026-03-30T12:00Z', '2026-03-31T12:00Z', '2027-01-04T12:00Z']],
    ['leap day', '0 0 29 2 *', '2026-01-01T00:00Z', ['2028-02-29T00:00Z', '2032-02-29T00:00Z']],
    ['new year', '0 0 1 1 *', '2026-06-01T00:00Z', ['2027-01-01T00:00Z', '2028-01-01T00:00Z']],
    ['new year, strictly after', '0 0 1 1 *', '2027-01-01T00:00Z', ['2028-01-01T00:00Z']],
    ['last minute of the year', '59 23 31 12 *', '2026-12-31T23:59Z', ['2027-12-31T23:59Z', '2028-12-31T23:59Z']],
    ['a/n runs to the maximum', '0 0 25/3 * *', '2026-01-01T00:00Z', ['2026-01-25T00:00Z', '2026-01-28T00:00Z', '2026-01-31T00:00Z', '2026-02-25T00:00Z']],
    ['a-b/n', '10-30/10 0 * * *', '2026-01-01T00:00Z', ['2026-01-01T00:10Z', '2026-01-01T00:20Z', '2026-01-01T00:30Z', '2026-01-02T00:10Z']],
    ['every 10 seconds', '*/10 * * * * *', '2026-01-01T00:00:05Z', ['2026-01-01T00:00:10.000Z', '2026-01-01T00:00:20.000Z', '2026-01-01T00:00:30.000Z']],
    ['second 30 of midnight', '30 0 0 * * *', '2026-01-01T00:00Z', ['2026-01-01T00:00:30.000Z', '2026-01-02T00:00:30.000Z']],
    ['@hourly', '@hourly', '2026-01-01T00:30Z', ['2026-01-01T01:00Z', '2026-01-01T02:00Z']],
    ['@daily', '@daily', '2026-01-01T00:00Z', ['2026-01-02T00:00Z']],
    ['@midnight', '@midnight', '2026-01-01T00:00Z', ['2026-01-02T00:00Z']],
    ['@weekly (Sunday)', '@weekly', '2026-01-01T00:00Z', ['2026-01-04T00:00Z', '2026-01-11T00:00Z']],
    ['@monthly', '@monthly', '2026-01-01T00:00Z', ['2026-02-01T00:00Z']],
    ['@yearly', '@yearly', '2026-01-01T00:00Z', ['2027-01-01T00:00Z']],
    ['@annually', '@ANNUALLY', '2026-01-01T00:00Z', ['2027-01-01T00:00Z']],
  ])('%s: %s', (_, expr, start, expected) => {
    expect(utcFires(expr, start, expected.length)).toEqual(expected);
  });

  it('answers null for a day no month has', () => {
    const rec = { kind: 'cron', cron: parseCron('0 0 30 2 *'), timezone: 'UTC', dst: DEFAULT_DST_POLICY } as const;
    expect(nextFireAfter(rec, Date.parse('2026-01-01T00:00:00Z'))).toBeNull();
  });
});

describe('cronMatches', () => {
  const at = (year: number, month: number, day: number, hour = 0, minute = 0, second = 0) => ({ year, month, day, hour, minute, second });
  it.each([
    ['0 0 13 * FRI', at(2026, 2, 13), true], // a Friday the 13th
    ['0 0 13 * FRI', at(2026, 3, 13), true], // the 13th, a Friday
    ['0 0 13 * FRI', at(2026, 1, 16), true], // a Friday
    ['0 0 13 * FRI', at(2026, 1, 15), false],
    ['0 0 * * 5L', at(2026, 1, 30), true],
    ['0 0 * * 5L', at(2026, 1, 23), false],
    ['0 0 L * *', at(2028, 2, 29), true],
    ['0 0 L * *', at(2028, 2, 28), false],
    ['30 0 0 * * *', at(2026, 1, 1, 0, 0, 30), true],
    ['0 0 * * *', at(2026, 1, 1, 0, 0, 30), false],
    ['* * * * *', at(2026, 1, 1, 12, 34), true],
  ])('%s matches %j: %s', (expr, wall, expected) => {
    expect(cronMatches(parseCron(expr), wall)).toBe(expected);
  });
});

describe('rejections', () => {
  it.each<[string, CronField, string]>([
    ['', 'expression', "cron expression '' has 0 fields; expected 5"],
    ['* * * *', 'expression', "cron expression '* * * *' has 4 fields; expected 5 (minute hour day-of-month month day-of-week) or 6"],
    ['* * * * * * *', 'expression', 'has 7 fields'],
    ['@every 5m', 'expression', "'@every 5m' is not a cron expression; use an interval"],
    ['@reboot', 'expression', "unknown macro '@reboot'; supported: @yearly @annually @monthly @weekly @daily @midnight @hourly"],
    ['60 * * * * *', 'second', 'second field: 60 is out of range 0-59'],
    ['60 * * * *', 'minute', 'minute field: 60 is out of range 0-59'],
    ['* 24 * * *', 'hour', 'hour field: 24 is out of range 0-23'],
    ['* * 0 * *', 'dayOfMonth', 'day-of-month field: 0 is out of range 1-31'],
    ['* * 32 * *', 'dayOfMonth', 'day-of-month field: 32 is out of range 1-31'],
    ['* * * 13 *', 'month', 'month field: 13 is out of range 1-12'],
    ['* * * * 8', 'dayOfWeek', 'day-of-week field: 8 is out of range 0-7'],
    ['*/0 * * * *', 'minute', "minute field: '*/0' has a zero step"],
    ['*/-1 * * * *', 'minute', "minute field: '*/-1' has a negative step"],
    ['*/x * * * *', 'minute', "minute field: '*/x' has step 'x', which is not a whole number"],
    ['1/2/3 * * * *', 'minute', "minute field: '1/2/3' has more than one '/'"],
    ['5-1 * * * *', 'minute', "minute field: '5-1' is a reversed range (5 > 1); write the smaller value first"],
    ['* * * * FRI-MON', 'dayOfWeek', "day-of-week field: 'FRI-MON' is a reversed range (5 > 1)"],
    ['1-2-3 * * * *', 'minute', "minute field: '1-2-3' is not a value, a range 'a-b' or a step"],
    ['-5 * * * *', 'minute', "minute field: '-5' is negative"],
    ['1,,2 * * * *', 'minute', "minute field: '' is missing a value"],
    ['a * * * *', 'minute', "minute field: 'a' is not a number"],
    ['1.5 * * * *', 'minute', "minute field: '1.5' is not a number"],
    ['* * * FOO *', 'month', "month field: 'FOO' is not a number or a name JAN-DEC"],
    ['* * * * FOO', 'dayOfWeek', "day-of-week field: 'FOO' is not a number or a name SUN-SAT"],
    ['? * * * *', 'minute', "minute field: '?' is allowed only as the whole day-of-month or day-of-week field"],
    ['* * * * L', 'dayOfWeek', "day-of-week field: 'L' needs a weekday before it, e.g. '5L'"],
    ['* * * * 9L', 'dayOfWeek', 'day-of-week field: 9 is out of range 0-7'],
    ['* * * * 1#6', 'dayOfWeek', "day-of-week field: '1#6': the occurrence after '#' must be 1-5"],
    ['* * * * 8#1', 'dayOfWeek', 'day-of-week field: 8 is out of range 0-7'],
    ['* * 15W * *', 'dayOfMonth', "day-of-month field: '15W': the nearest-weekday form 'W' is not supported"],
    ['* * L-31 * *', 'dayOfMonth', "day-of-month field: 'L-31' counts back 31 days; 'L-n' allows n from 1 to 30"],
  ])('%j: %s field', (expr, field, message) => {
    let error: unknown;
    try {
      parseCron(expr);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(CronSyntaxError);
    expect((error as CronSyntaxError).field).toBe(field);
    expect((error as CronSyntaxError).message).toContain(message);
  });
});
