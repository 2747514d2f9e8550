import { describe, expect, it } from 'vitest';
import { DurationError, MAX_DURATION_MS, formatDuration, parseDuration } from './duration.js';

describe('parseDuration', () => {
  it.each<[string | number, number]>([
    ['90s', 90_000],
    ['15m', 900_000],
    ['2h', 7_200_000],
    ['1h30m', 5_400_000],
    ['500ms', 500],
    ['1d', 86_400_000],
    ['1h30m15s', 5_415_000],
    ['1d2h3m4s5ms', 93_784_005],
    ['0s', 0],
    ['  15m ', 900_000],
    ['36525d', MAX_DURATION_MS],
    [0, 0],
    [1_500, 1_500],
    [MAX_DURATION_MS, MAX_DURATION_MS],
  ])('reads %j as %i ms', (input, ms) => {
    expect(parseDuration(input)).toBe(ms);
  });

  it.each<[string | number, string]>([
    ['', 'is empty'],
    ['   ', 'is empty'],
    ['-5s', 'is negative'],
    ['1500', 'has no unit'],
    ['1.5h', 'has a fraction'],
    ['0,5s', 'has a fraction'],
    ['5x', "unknown unit 'x'"],
    ['5H', "unknown unit 'H'"],
    ['5sec', "unknown unit 'sec'"],
    ['30m1h', "misorders unit 'h'"],
    ['1h1h', "repeats or misorders unit 'h'"],
    ['1h 30m', "cannot be read from ' 30m'"],
    ['h', "cannot be read from 'h'"],
    ['NaN', "cannot be read from 'NaN'"],
    ['36526d', 'longer than 100 years'],
    ['99999999999999999999ms', 'longer than 100 years'],
    [-1, 'not a non-negative integer'],
    [1.5, 'not a non-negative integer'],
    [Number.NaN, 'not a non-negative integer'],
    [Number.POSITIVE_INFINITY, 'not a non-negative integer'],
    [MAX_DURATION_MS + 1, 'longer than 100 years'],
  ])('rejects %j: %s', (input, why) => {
    expect(() => parseDuration(input)).toThrow(DurationError);
    expect(() => parseDuration(input)).toThrow(why);
  });

  it('says which forms are accepted', () => {
    expect(() => parseDuration('5x')).toThrow(/e\.g\. '90s', '15m', '1h30m', '500ms'/);
  });
});

describe('formatDuration', () => {
  it.each([
    [5_400_000, '1h30m'],
    [90_000, '1m30s'],
    [500, '500ms'],
    [0, '0s'],
    [1_500, '1s500ms'],
    [86_400_000, '1d'],
    [93_784_005, '1d2h3m4s5ms'],
  ])('shows %i ms as %s', (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
  });

  it.each([0, 1, 999, 60_000, 3_599_999, 86_400_001, MAX_DURATION_MS])('round-trips %i ms through parseDuration', (ms) => {
    expect(parseDuration(formatDuration(ms))).toBe(ms);
  });

  it.each([-1, 1.5, Number.NaN])('refuses %d', (ms) => {
    expect(() => formatDuration(ms)).toThrow(RangeError);
  });
});
