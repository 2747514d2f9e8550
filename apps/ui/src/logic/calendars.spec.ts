import { describe, expect, it } from 'vitest';
import type { CalendarRule } from '../data/wire/index.js';
import { holidaysInWords, schedulesInWords, twelveMonthsFrom, weekdayOf, whyExcluded, yearStrip } from './calendars.js';

describe('holidaysInWords', () => {
  it.each([
    [{ country: 'DE', state: 'BY', region: null }, 'DE-BY public holidays'],
    [{ country: 'US', state: null, region: null }, 'US public holidays'],
    [{ country: 'DE', state: 'BY', region: 'A' }, 'DE-BY-A public holidays'],
    [null, null],
  ])('%j', (holidays, words) => {
    expect(holidaysInWords(holidays)).toBe(words);
  });

  it('counts schedules', () => {
    expect([0, 1, 3].map(schedulesInWords)).toEqual(['no schedule', '1 schedule', '3 schedules']);
  });
});

describe('whyExcluded', () => {
  const rule: CalendarRule = { exclude: ['bavaria', 'office'], weekdaysOnly: true, onExcluded: 'skip' };
  const listed = new Map([
    ['bavaria', [{ date: '2027-01-06', holiday: 'Epiphany' }]],
    ['office', [{ date: '2027-01-06', holiday: null }, { date: '2026-12-24', holiday: null }]],
  ]);

  it('names each calendar that lists the date, with the holiday', () => {
    expect(whyExcluded('2027-01-06', rule, listed)).toBe('Epiphany (bavaria), an own date of office');
    expect(whyExcluded('2026-12-24', rule, listed)).toBe('an own date of office');
  });

  it('says weekend only when the rule fires on weekdays only', () => {
    expect(weekdayOf('2026-12-05')).toBe('Saturday');
    expect(whyExcluded('2026-12-05', rule, listed)).toBe('weekend');
    expect(whyExcluded('2026-12-05', { ...rule, weekdaysOnly: false }, listed)).toBe('a date of its calendars');
  });
});

describe('twelveMonthsFrom', () => {
  it.each([
    ['2026-12-04', '2027-11-30'],
    ['2027-01-01', '2027-12-31'],
    ['2027-01-31', '2027-12-31'],
    ['2028-03-15', '2029-02-28'],
  ])('%s to %s', (today, to) => {
    expect(twelveMonthsFrom(today)).toEqual({ from: today, to });
  });
});

describe('yearStrip', () => {
  const strip = yearStrip({
    from: '2026-12-04',
    items: [
      { date: '2026-12-02', holiday: null },
      { date: '2026-12-24', holiday: null },
      { date: '2027-01-01', holiday: "New Year's Day" },
      { date: '2027-01-06', holiday: 'Epiphany' },
    ],
  });

  it('draws twelve months from the first date', () => {
    expect(strip.map((m) => m.key)).toEqual(['2026-12', '2027-01', '2027-02', '2027-03', '2027-04', '2027-05', '2027-06', '2027-07', '2027-08', '2027-09', '2027-10', '2027-11']);
    expect(strip[0]!.label).toBe('December 2026');
    expect(strip.map((m) => m.days.length).slice(0, 3)).toEqual([31, 31, 28]);
  });

  it('lays each month out in weeks, Monday first', () => {
    // 1 December 2026 is a Tuesday, 1 February 2027 a Monday, 31 January 2027 a Sunday.
    const [december, january, february] = strip;
    expect(december!.days[0]).toMatchObject({ date: '2026-12-01', column: 1, row: 0 });
    expect(december!.days[6]).toMatchObject({ date: '2026-12-07', column: 0, row: 1 });
    expect(january!.days[30]).toMatchObject({ date: '2027-01-31', column: 6, row: 4 });
    expect(february!.days[27]).toMatchObject({ date: '2027-02-28', column: 6, row: 3 });
  });

  it('marks the dates listed with why, and leaves the days before the range faint and unmarked', () => {
    const [december, january] = strip;
    expect(december!.days[1]).toMatchObject({ before: true, excluded: null, today: false });
    expect(december!.days[3]).toMatchObject({ date: '2026-12-04', before: false, today: true, excluded: null, words: 'Friday 4 December 2026' });
    expect(december!.days[23]!.words).toBe("Thursday 24 December 2026: one of the calendar's own dates");
    expect(january!.days[0]!.words).toBe("Friday 1 January 2027: New Year's Day");
    expect(january!.days[5]!.excluded).toEqual({ date: '2027-01-06', holiday: 'Epiphany' });
    expect(strip.map((m) => m.excluded).slice(0, 3)).toEqual([1, 2, 0]);
  });
});
