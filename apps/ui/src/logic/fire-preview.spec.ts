import { describe, expect, it } from 'vitest';
import { markOffsetChanges } from './fire-preview.js';

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
