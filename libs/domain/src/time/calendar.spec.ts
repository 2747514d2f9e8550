import { describe, expect, it } from 'vitest';
import { dayExclusionOf, excludedDatesBetween, publicHolidays, type CalendarDefinition, type CalendarRule } from '../calendars.js';
import { parseCron } from './cron.js';
import { DEFAULT_DST_POLICY } from './dst-policy.js';
import { dayOfIsoDate, isoDateOfDay, weekdayOfDay, type OnExcluded } from './calendar.js';
import { isExclusionMarker, nextFireAfter, previousFireBefore, type PlainRecurrence, type Recurrence } from './recurrence.js';

const BAVARIA: CalendarDefinition = { name: 'bavaria', dates: [], holidays: { country: 'DE', state: 'BY', region: null } };

function cron(expression: string, timezone: string): PlainRecurrence {
  return { kind: 'cron', cron: parseCron(expression), timezone, dst: DEFAULT_DST_POLICY };
}

function calendarOf(base: PlainRecurrence, timezone: string, onExcluded: OnExcluded, rule: Partial<CalendarRule>, calendars: CalendarDefinition[] = []): Recurrence {
  const full: CalendarRule = { exclude: calendars.map((c) => c.name), weekdaysOnly: false, onExcluded, ...rule };
  return { kind: 'calendar', base, timezone, dst: DEFAULT_DST_POLICY, onExcluded, excluded: dayExclusionOf(full, calendars), originMs: -Infinity };
}

const dates = (...list: string[]): CalendarDefinition => ({ name: 'dates', dates: list, holidays: null });

/** Walks `count` slots after `from`: the fires, and the dates' markers (skip) apart. */
function walk(rec: Recurrence, from: string, count: number): { fires: string[]; markers: string[] } {
  const fires: string[] = [];
  const markers: string[] = [];
  let at = Date.parse(from);
  for (let n = 0; n < count; n++) {
    const next = nextFireAfter(rec, at);
    if (next === null) break;
    (isExclusionMarker(rec, next) ? markers : fires).push(new Date(next).toISOString());
    at = next;
  }
  return { fires, markers };
}

describe('calendars on a recurrence', () => {
  it.each<[string, Recurrence, string, number, string[], string[]]>([
    [
      'daily 09:00 Berlin, weekdays only, skip: the weekend is one marker a date',
      calendarOf(cron('0 9 * * *', 'Europe/Berlin'), 'Europe/Berlin', 'skip', { weekdaysOnly: true }),
      '2026-12-04T00:00:00Z',
      5,
      ['2026-12-04T08:00:00.000Z', '2026-12-07T08:00:00.000Z', '2026-12-08T08:00:00.000Z'],
      ['2026-12-05T08:00:00.000Z', '2026-12-06T08:00:00.000Z'],
    ],
    [
      'payroll: 09:00 Berlin on the last day of the month, moved back over weekends and Bavarian holidays (across the October DST change)',
      calendarOf(cron('0 9 L * *', 'Europe/Berlin'), 'Europe/Berlin', 'previous', { weekdaysOnly: true }, [BAVARIA]),
      '2027-01-01T00:00:00Z',
      5,
      ['2027-01-29T08:00:00.000Z', '2027-02-26T08:00:00.000Z', '2027-03-31T07:00:00.000Z', '2027-04-30T07:00:00.000Z', '2027-05-31T07:00:00.000Z'],
      [],
    ],
    [
      'the last day of October 2027 (a Sunday, the fall-back day) moves to Friday the 29th, still on summer time',
      calendarOf(cron('0 9 L * *', 'Europe/Berlin'), 'Europe/Berlin', 'previous', { weekdaysOnly: true }),
      '2027-10-01T00:00:00Z',
      2,
      ['2027-10-29T07:00:00.000Z', '2027-11-30T08:00:00.000Z'],
      [],
    ],
    [
      'yearly on 1 January, a Bavarian holiday, moved to the next allowed date (2 January: a Saturday in 2027, a Sunday in 2028)',
      calendarOf(cron('0 9 1 1 *', 'Europe/Berlin'), 'Europe/Berlin', 'next', {}, [BAVARIA]),
      '2026-06-01T00:00:00Z',
      2,
      ['2027-01-02T08:00:00.000Z', '2028-01-02T08:00:00.000Z'],
      [],
    ],
    [
      'yearly on 1 January with weekdays only: past the weekend to Monday 4 January 2027',
      calendarOf(cron('0 9 1 1 *', 'Europe/Berlin'), 'Europe/Berlin', 'next', { weekdaysOnly: true }, [BAVARIA]),
      '2026-06-01T00:00:00Z',
      1,
      ['2027-01-04T08:00:00.000Z'],
      [],
    ],
    [
      'a Saturday 02:30 slot moved on to the spring-forward Sunday in Berlin is shifted past the gap',
      calendarOf(cron('30 2 * * 6', 'Europe/Berlin'), 'Europe/Berlin', 'next', {}, [dates('2027-03-27')]),
      '2027-03-20T12:00:00Z',
      2,
      ['2027-03-28T01:30:00.000Z', '2027-04-03T00:30:00.000Z'],
      [],
    ],
    [
      'a Saturday 01:30 slot moved on to the fall-back Sunday in New York fires at the first 01:30 (EDT)',
      calendarOf(cron('30 1 * * 6', 'America/New_York'), 'America/New_York', 'next', {}, [dates('2027-11-06')]),
      '2027-11-01T00:00:00Z',
      2,
      ['2027-11-07T05:30:00.000Z', '2027-11-13T06:30:00.000Z'],
      [],
    ],
    [
      'daily 09:00 New York skipping the spring-forward Sunday: EST before, EDT after',
      calendarOf(cron('0 9 * * *', 'America/New_York'), 'America/New_York', 'skip', {}, [dates('2027-03-14')]),
      '2027-03-13T00:00:00Z',
      3,
      ['2027-03-13T14:00:00.000Z', '2027-03-15T13:00:00.000Z'],
      ['2027-03-14T13:00:00.000Z'],
    ],
    [
      'daily 09:00 Berlin skipping the fall-back Sunday of 2027',
      calendarOf(cron('0 9 * * *', 'Europe/Berlin'), 'Europe/Berlin', 'skip', {}, [dates('2027-10-31')]),
      '2027-10-30T00:00:00Z',
      3,
      ['2027-10-30T07:00:00.000Z', '2027-11-01T08:00:00.000Z'],
      ['2027-10-31T08:00:00.000Z'],
    ],
    [
      'Auckland, east of UTC: the slot of local 25 December is at 17:00 UTC on the 24th, and the local date decides',
      calendarOf(cron('0 6 * * *', 'Pacific/Auckland'), 'Pacific/Auckland', 'skip', {}, [dates('2026-12-25')]),
      '2026-12-23T00:00:00Z',
      3,
      ['2026-12-23T17:00:00.000Z', '2026-12-25T17:00:00.000Z'],
      ['2026-12-24T17:00:00.000Z'],
    ],
    [
      'every 12 hours, weekdays only in UTC: a weekend date is one marker however many slots it has',
      calendarOf({ kind: 'every', everyMs: 12 * 3_600_000, anchorMs: Date.parse('2026-12-04T00:00:00Z') }, 'UTC', 'skip', { weekdaysOnly: true }),
      '2026-12-04T06:00:00Z',
      4,
      ['2026-12-04T12:00:00.000Z', '2026-12-07T00:00:00.000Z'],
      ['2026-12-05T00:00:00.000Z', '2026-12-06T00:00:00.000Z'],
    ],
    [
      'daily with weekdays only and previous: the weekend moves onto a Friday that has its own slot, which fires once',
      calendarOf(cron('0 9 * * *', 'UTC'), 'UTC', 'previous', { weekdaysOnly: true }),
      '2026-12-03T10:00:00Z',
      3,
      ['2026-12-04T09:00:00.000Z', '2026-12-07T09:00:00.000Z', '2026-12-08T09:00:00.000Z'],
      [],
    ],
    [
      'weekends only with weekdays only and next: Saturday and Sunday both move onto Monday 09:00, which fires once',
      calendarOf(cron('0 9 * * 6,0', 'UTC'), 'UTC', 'next', { weekdaysOnly: true }),
      '2026-12-04T00:00:00Z',
      2,
      ['2026-12-07T09:00:00.000Z', '2026-12-14T09:00:00.000Z'],
      [],
    ],
    [
      'every slot moves: Saturdays at noon, weekdays only, previous, fire on Fridays at noon',
      calendarOf(cron('0 12 * * 6', 'UTC'), 'UTC', 'previous', { weekdaysOnly: true }),
      '2026-12-01T00:00:00Z',
      3,
      ['2026-12-04T12:00:00.000Z', '2026-12-11T12:00:00.000Z', '2026-12-18T12:00:00.000Z'],
      [],
    ],
    [
      'an hourly schedule whose excluded Friday moves back onto Thursday, which has slots of its own: Friday fires nothing',
      calendarOf(cron('0 22,23 * * *', 'UTC'), 'UTC', 'previous', {}, [dates('2026-12-04')]),
      '2026-12-03T21:00:00Z',
      3,
      ['2026-12-03T22:00:00.000Z', '2026-12-03T23:00:00.000Z', '2026-12-05T22:00:00.000Z'],
      [],
    ],
  ])('%s', (_name, rec, from, count, fires, markers) => {
    expect(walk(rec, from, count)).toEqual({ fires, markers });
  });

  it.each<[string, Recurrence]>([
    ['skip', calendarOf(cron('0 9 * * *', 'Europe/Berlin'), 'Europe/Berlin', 'skip', { weekdaysOnly: true }, [BAVARIA])],
    ['previous', calendarOf(cron('0 9 L * *', 'Europe/Berlin'), 'Europe/Berlin', 'previous', { weekdaysOnly: true }, [BAVARIA])],
    ['next', calendarOf(cron('30 1 * * 6', 'America/New_York'), 'America/New_York', 'next', {}, [dates('2027-11-06', '2027-03-13')])],
    ['every with previous', calendarOf({ kind: 'every', everyMs: 7 * 3_600_000, anchorMs: 0 }, 'Asia/Kolkata', 'previous', { weekdaysOnly: true })],
    ['every slot moved back', calendarOf(cron('*/30 * * * 6', 'Europe/Berlin'), 'Europe/Berlin', 'previous', { weekdaysOnly: true }, [BAVARIA])],
  ])('walks back through the same slots it walks forward (%s)', (_name, rec) => {
    const forward: number[] = [];
    let at = Date.parse('2026-10-01T00:00:00Z');
    for (let n = 0; n < 40; n++) forward.push((at = nextFireAfter(rec, at)!));
    const backward: number[] = [];
    at = forward.at(-1)! + 1;
    for (let n = 0; n < 40; n++) backward.unshift((at = previousFireBefore(rec, at)!));
    expect(backward).toEqual(forward);
  });

  it('marks an excluded date at its first slot after the schedule was planned from: made in the middle of the date, it records the date too', () => {
    const base = cron('* * * * * *', 'UTC');
    const madeAt = Date.parse('2026-12-04T15:30:00.500Z');
    const rec: Recurrence = { ...(calendarOf(base, 'UTC', 'skip', {}, [dates('2026-12-04')]) as Extract<Recurrence, { kind: 'calendar' }>), originMs: madeAt };
    expect(walk(rec, '2026-12-04T15:30:00.500Z', 2)).toEqual({ fires: ['2026-12-05T00:00:00.000Z'], markers: ['2026-12-04T15:30:01.000Z'] });
    // Walked from later in the date, the marker is behind: the next slot is the next date's.
    expect(walk(rec, '2026-12-04T18:00:00Z', 1)).toEqual({ fires: ['2026-12-05T00:00:00.000Z'], markers: [] });
  });

  it('never yields a slot twice, and a moved slot never lands on a date that has one of its own', () => {
    const rec = calendarOf(cron('0 9,17 * * 5,6,0', 'Europe/Berlin'), 'Europe/Berlin', 'previous', { weekdaysOnly: true });
    const { fires } = walk(rec, '2026-11-01T00:00:00Z', 30);
    expect(new Set(fires).size).toBe(fires.length);
    // Fridays keep their own 09:00 and 17:00; the weekend's slots coincide with them and fire once.
    expect(fires.every((f) => new Date(f).getUTCDay() === 5)).toBe(true);
    expect(fires.slice(0, 2)).toEqual(['2026-11-06T08:00:00.000Z', '2026-11-06T16:00:00.000Z']);
  });
});

describe('holidays', () => {
  it.each<[string, CalendarDefinition['holidays'], string, string, string[]]>([
    ["Bavaria's New Year and Epiphany, across the year boundary", { country: 'DE', state: 'BY', region: null }, '2026-12-20', '2027-01-10', ['2026-12-25', '2026-12-26', '2027-01-01', '2027-01-06']],
    ['Epiphany is not a holiday in Berlin', { country: 'DE', state: 'BE', region: null }, '2027-01-01', '2027-01-10', ['2027-01-01']],
    ["the Assumption (15 August) only in Bavaria's Catholic region", { country: 'DE', state: 'BY', region: 'KATH' }, '2027-08-01', '2027-08-31', ['2027-08-15']],
    ['no Assumption in Bavaria as a whole', { country: 'DE', state: 'BY', region: null }, '2027-08-01', '2027-08-31', []],
    ['the United States observe Independence Day on Friday 3 July 2026', { country: 'US', state: null, region: null }, '2026-07-01', '2026-07-05', ['2026-07-03', '2026-07-04']],
  ])('%s', (_name, holidays, from, to, expected) => {
    expect(excludedDatesBetween({ name: 'c', dates: [], holidays }, from, to).map((d) => d.date)).toEqual(expected);
  });

  it('names the holidays and lists a calendar\'s own dates beside them', () => {
    const listed = excludedDatesBetween({ name: 'c', dates: ['2026-12-24', '2026-12-25'], holidays: BAVARIA.holidays }, '2026-12-24', '2026-12-26');
    expect(listed).toEqual([
      { date: '2026-12-24', holiday: null },
      { date: '2026-12-25', holiday: null },
      { date: '2026-12-26', holiday: 'Boxing Day' },
    ]);
  });

  it('computes each year as it is asked for, not from a fixed list', () => {
    expect(publicHolidays({ country: 'DE', state: 'BY', region: null }, 2099).some((h) => h.date === '2099-01-06')).toBe(true);
    const excluded = dayExclusionOf({ exclude: ['bavaria'], weekdaysOnly: false, onExcluded: 'skip' }, [BAVARIA]);
    expect(excluded(dayOfIsoDate('2063-01-01'))).toBe(true);
    expect(excluded(dayOfIsoDate('2063-01-02'))).toBe(false);
  });

  it('a calendar the rule names but that is gone excludes nothing', () => {
    const excluded = dayExclusionOf({ exclude: ['gone'], weekdaysOnly: false, onExcluded: 'skip' }, [BAVARIA]);
    expect(excluded(dayOfIsoDate('2027-01-01'))).toBe(false);
  });
});

describe('day numbers', () => {
  it.each([
    ['1970-01-01', 0, 4],
    ['2026-12-05', 20_792, 6],
    ['2027-03-14', 20_891, 0],
    ['1969-12-31', -1, 3],
  ])('%s is day %i, weekday %i', (date, day, weekday) => {
    expect(dayOfIsoDate(date)).toBe(day);
    expect(isoDateOfDay(day)).toBe(date);
    expect(weekdayOfDay(day)).toBe(weekday);
  });
});
