import { describe, expect, it } from 'vitest';
import { instantsForWallTime, isValidTimeZone, shiftGapWallTime, toWallTime, zoneOffsetMinutes, type WallTime } from './zone.js';

const wall = (text: string): WallTime => {
  const [year, month, day, hour, minute, second = 0] = text.split(/[-T:]/).map(Number) as [number, number, number, number, number, number?];
  return { year, month, day, hour, minute, second };
};
const iso = (ms: number): string => new Date(ms).toISOString();

describe('isValidTimeZone', () => {
  it.each(['UTC', 'Europe/Berlin', 'America/New_York', 'Asia/Kathmandu', 'US/Eastern', 'Asia/Calcutta', 'Europe/Kiev', 'Etc/GMT+5', 'GMT'])(
    'accepts %s',
    (zone) => expect(isValidTimeZone(zone)).toBe(true),
  );

  it.each(['', 'Mars/Base', '+05:00', '-03:00', '\u221203:00', 'UTC+5', ' UTC', 'Z'])('rejects %j', (zone) => {
    expect(isValidTimeZone(zone)).toBe(false);
  });
});

describe('zoneOffsetMinutes', () => {
  it.each([
    ['America/New_York', '2026-01-15T12:00:00Z', -300],
    ['America/New_York', '2026-07-15T12:00:00Z', -240],
    ['Asia/Kathmandu', '2026-07-15T12:00:00Z', 345],
    ['Pacific/Chatham', '2026-07-15T12:00:00Z', 765],
    ['Pacific/Chatham', '2026-01-15T12:00:00Z', 825],
    ['Australia/Lord_Howe', '2026-07-15T12:00:00Z', 630],
    ['Australia/Lord_Howe', '2026-01-15T12:00:00Z', 660],
    ['Asia/Tokyo', '2026-07-15T12:00:00Z', 540],
    ['Pacific/Apia', '2011-12-30T09:59:59Z', -600],
    ['Pacific/Apia', '2011-12-30T10:00:00Z', 840],
  ])('%s at %s is %i', (zone, at, minutes) => {
    expect(zoneOffsetMinutes(zone, Date.parse(at))).toBe(minutes);
  });

  it('refuses an unknown zone with a message naming it', () => {
    expect(() => zoneOffsetMinutes('Mars/Base', 0)).toThrow(/unknown time zone 'Mars\/Base'/);
  });
});

describe('toWallTime', () => {
  it.each([
    ['UTC', '2026-03-08T07:00:00.999Z', '2026-03-08T07:00:00'],
    ['America/New_York', '2026-03-08T06:59:59Z', '2026-03-08T01:59:59'],
    ['America/New_York', '2026-03-08T07:00:00Z', '2026-03-08T03:00:00'],
    ['Asia/Kathmandu', '2026-01-01T00:00:00Z', '2026-01-01T05:45:00'],
    ['America/Santiago', '2026-09-06T04:00:00Z', '2026-09-06T01:00:00'],
    ['Pacific/Apia', '2011-12-30T10:00:00Z', '2011-12-31T00:00:00'],
  ])('%s at %s shows %s', (zone, at, shown) => {
    expect(toWallTime(zone, Date.parse(at))).toEqual(wall(shown));
  });
});

describe('instantsForWallTime', () => {
  it.each([
    ['America/New_York', '2026-03-08T02:30', []],
    ['America/New_York', '2026-03-08T03:00', ['2026-03-08T07:00:00.000Z']],
    ['America/New_York', '2026-11-01T01:30', ['2026-11-01T05:30:00.000Z', '2026-11-01T06:30:00.000Z']],
    ['America/New_York', '2026-11-01T02:00', ['2026-11-01T07:00:00.000Z']],
    ['Australia/Lord_Howe', '2026-04-05T01:45', ['2026-04-04T14:45:00.000Z', '2026-04-04T15:15:00.000Z']],
    ['Australia/Lord_Howe', '2026-10-04T02:29:59', []],
    ['America/Santiago', '2026-09-06T00:00', []],
    ['America/Havana', '2026-11-01T00:00', ['2026-11-01T04:00:00.000Z', '2026-11-01T05:00:00.000Z']],
    ['Antarctica/Troll', '2026-10-25T01:30', ['2026-10-24T23:30:00.000Z', '2026-10-25T01:30:00.000Z']],
    ['Pacific/Apia', '2011-12-30T12:00', []],
    ['Asia/Tokyo', '2026-03-08T02:30', ['2026-03-07T17:30:00.000Z']],
  ])('%s %s -> %j', (zone, shown, instants) => {
    expect(instantsForWallTime(zone, wall(shown)).map(iso)).toEqual(instants);
  });

  it('refuses a wall time that is not a calendar date', () => {
    expect(() => instantsForWallTime('UTC', wall('2026-02-30T00:00'))).toThrow(RangeError);
    expect(() => instantsForWallTime('UTC', wall('2026-01-01T24:00'))).toThrow(/not a valid date and time/);
  });
});

describe('shiftGapWallTime', () => {
  // The wall time read with the offset before the transition (zdump offsets in the comments).
  it.each([
    ['America/New_York', '2026-03-08T02:30', '2026-03-08T07:30:00.000Z'], // -05:00 -> 03:30 EDT
    ['Australia/Lord_Howe', '2026-10-04T02:15', '2026-10-03T15:45:00.000Z'], // +10:30 -> 02:45 +11
    ['Pacific/Chatham', '2026-09-27T03:00', '2026-09-26T14:15:00.000Z'], // +12:45 -> 04:00 +13:45
    ['America/Santiago', '2026-09-06T00:00', '2026-09-06T04:00:00.000Z'], // -04 -> 01:00 -03
    ['Antarctica/Troll', '2026-03-29T02:00', '2026-03-29T02:00:00.000Z'], // +00 -> 04:00 +02
    ['Pacific/Apia', '2011-12-30T12:00', '2011-12-30T22:00:00.000Z'], // -10 -> Dec 31 12:00 +14
  ])('%s %s -> %s', (zone, shown, instant) => {
    expect(iso(shiftGapWallTime(zone, wall(shown)))).toBe(instant);
  });

  it('refuses a wall time that exists', () => {
    expect(() => shiftGapWallTime('America/New_York', wall('2026-03-08T03:30'))).toThrow(/only a wall time skipped by a DST gap/);
  });
});
