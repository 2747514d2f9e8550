import { describe, expect, it } from 'vitest';
import { markOffsetChanges, withExcludedDates } from './fire-preview.js';

describe('markOffsetChanges', () => {
  it.each([
    {
      name: 'Berlin spring forward between the 27th and the 28th of March 2027',
      zone: 'Europe/Berlin',
      fires: ['2027-03-27T01:30:00Z', '2027-03-28T01:30:00Z', '2027-03-29T00:30:00Z'],
      expected: [
        { local: '2027-03-27 02:30', offset: '+01:00', offsetChanged: false },
        { local: '2027-03-28 03:30', offset: '+02:00', offsetChanged: true },
        { local: '2027-03-29 02:30', offset: '+02:00', offsetChanged: false },
      ],
    },
    {
      name: 'New York fall back, twice 01:30 the same night',
      zone: 'America/New_York',
      fires: ['2026-11-01T05:30:00Z', '2026-11-01T06:30:00Z', '2026-11-02T06:30:00Z'],
      expected: [
        { local: '2026-11-01 01:30', offset: '-04:00', offsetChanged: false },
        { local: '2026-11-01 01:30', offset: '-05:00', offsetChanged: true },
        { local: '2026-11-02 01:30', offset: '-05:00', offsetChanged: false },
      ],
    },
    {
      name: 'UTC never changes',
      zone: 'UTC',
      fires: ['2027-03-27T01:30:00Z', '2027-10-31T01:30:00Z'],
      expected: [
        { local: '2027-03-27 01:30', offset: '+00:00', offsetChanged: false },
        { local: '2027-10-31 01:30', offset: '+00:00', offsetChanged: false },
      ],
    },
    {
      name: 'a half-hour zone (India) has no DST',
      zone: 'Asia/Kolkata',
      fires: ['2027-01-01T00:00:00Z', '2027-07-01T00:00:00Z'],
      expected: [
        { local: '2027-01-01 05:30', offset: '+05:30', offsetChanged: false },
        { local: '2027-07-01 05:30', offset: '+05:30', offsetChanged: false },
      ],
    },
    { name: 'no fires', zone: 'Europe/Berlin', fires: [], expected: [] },
  ])('$name', ({ zone, fires, expected }) => {
    expect(markOffsetChanges(fires, zone)).toEqual(expected.map((e, i) => ({ instant: fires[i], ...e })));
  });
});

describe('withExcludedDates', () => {
  const fires = markOffsetChanges(['2026-12-04T08:00:00Z', '2026-12-07T08:00:00Z', '2026-12-08T08:00:00Z'], 'Europe/Berlin');

  it('puts each date the calendar kept clear before the first fire on a later local date', () => {
    const entries = withExcludedDates(fires, ['2026-12-06', '2026-12-05']);
    expect(entries.map((e) => (e.kind === 'fire' ? e.local : `clear ${e.date}`))).toEqual([
      '2026-12-04 09:00',
      'clear 2026-12-05',
      'clear 2026-12-06',
      '2026-12-07 09:00',
      '2026-12-08 09:00',
    ]);
  });

  it('reads the local date, not the UTC one: a fire at 00:30 in Berlin is on the day after its UTC date', () => {
    const late = markOffsetChanges(['2026-12-04T23:30:00Z'], 'Europe/Berlin');
    expect(withExcludedDates(late, ['2026-12-04']).map((e) => e.kind)).toEqual(['excluded', 'fire']);
  });

  it('keeps dates after the last fire at the end, and the fires alone without dates', () => {
    expect(withExcludedDates(fires.slice(0, 1), ['2026-12-05']).map((e) => e.kind)).toEqual(['fire', 'excluded']);
    expect(withExcludedDates(fires, []).every((e) => e.kind === 'fire')).toBe(true);
  });
});
