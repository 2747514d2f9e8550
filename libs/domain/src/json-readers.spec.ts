import { describe, expect, it } from 'vitest';
import { ValidationError } from './errors.js';
import { parseInstant, readDuration, readString, readStringMap, storableText } from './json-readers.js';

describe('parseInstant', () => {
  it.each<[string, string]>([
    ['2026-12-01T09:00:00Z', '2026-12-01T09:00:00.000Z'],
    ['2026-12-01T09:00Z', '2026-12-01T09:00:00.000Z'],
    ['2026-12-01T09:00:00.5Z', '2026-12-01T09:00:00.500Z'],
    ['2026-12-01T09:00:00.123Z', '2026-12-01T09:00:00.123Z'],
    ['2026-12-01T10:30:00+01:30', '2026-12-01T09:00:00.000Z'],
    ['2026-12-01T04:00:00-05:00', '2026-12-01T09:00:00.000Z'],
    ['2026-12-01t09:00:00z', '2026-12-01T09:00:00.000Z'],
    ['2028-02-29T00:00:00Z', '2028-02-29T00:00:00.000Z'],
    ['2000-02-29T00:00:00Z', '2000-02-29T00:00:00.000Z'],
    ['2026-01-31T23:59:59Z', '2026-01-31T23:59:59.000Z'],
    ['2026-04-30T00:00:00Z', '2026-04-30T00:00:00.000Z'],
    ['2026-12-31T23:00:00-02:00', '2027-01-01T01:00:00.000Z'],
    ['9999-12-31T23:59:59.999Z', '9999-12-31T23:59:59.999Z'],
    ['9999-12-31T23:59:59+01:00', '9999-12-31T22:59:59.000Z'],
    ['0000-01-01T00:00:00Z', '0000-01-01T00:00:00.000Z'],
  ])('reads %s as %s', (input, expected) => {
    expect(new Date(parseInstant(input, 'at')).toISOString()).toBe(expected);
  });

  it.each<[string, unknown]>([
    ['no offset', '2026-12-01T09:00:00'],
    ['a date only', '2026-12-01'],
    ['a space instead of T', '2026-12-01 09:00:00Z'],
    ['words', 'tomorrow'],
    ['empty', ''],
    ['a number', 1_800_000_000_000],
    ['a Date-like object', { iso: '2026-12-01T09:00:00Z' }],
    ['month 13', '2026-13-01T09:00:00Z'],
    ['month 0', '2026-00-01T09:00:00Z'],
    ['day 0', '2026-12-00T09:00:00Z'],
    ['day 32', '2026-12-32T09:00:00Z'],
    ['31 April', '2026-04-31T09:00:00Z'],
    ['31 June', '2026-06-31T09:00:00Z'],
    ['30 February', '2026-02-30T09:00:00Z'],
    ['29 February of a common year', '2026-02-29T09:00:00Z'],
    ['29 February of a century that is not a leap year', '2100-02-29T09:00:00Z'],
    ['hour 25', '2026-12-01T25:00:00Z'],
    ['minute 60', '2026-12-01T09:60:00Z'],
    ['an offset of 25 hours', '2026-12-01T09:00:00+25:00'],
    ['an offset without a colon', '2026-12-01T09:00:00+0200'],
    ['ten fraction digits', '2026-12-01T09:00:00.1234567890Z'],
  ])('refuses %s', (_name, input) => {
    expect(() => parseInstant(input, 'startAt')).toThrow(ValidationError);
    try {
      parseInstant(input, 'startAt');
    } catch (error) {
      expect(error).toMatchObject({ code: 'INVALID_INSTANT', field: 'startAt' });
      expect((error as Error).message).toMatch(/startAt must be an ISO 8601 instant with an offset, such as "2026-12-01T09:00:00Z"/);
    }
  });

  it.each<[string, string]>([
    ['past year 9999 through its offset', '9999-12-31T23:00:00-05:00'],
    ['one millisecond past year 9999', '9999-12-31T23:59:59.999-00:01'],
    ['before year 0000 through its offset', '0000-01-01T00:30:00+01:00'],
  ])('refuses an instant %s', (_name, input) => {
    expect(() => parseInstant(input, 'startAt')).toThrow(expect.objectContaining({ code: 'INVALID_INSTANT', field: 'startAt' }));
    expect(() => parseInstant(input, 'startAt')).toThrow(`startAt must lie in the years 0000 to 9999 in UTC; got "${input}"`);
  });
});

describe('readDuration', () => {
  it.each<[unknown, { minMs?: number; maxMs?: number }, number | undefined]>([
    ['90s', {}, 90_000],
    [1_500, {}, 1_500],
    [undefined, {}, undefined],
    [null, {}, undefined],
    ['1s', { minMs: 1_000 }, 1_000],
    ['24h', { maxMs: 86_400_000 }, 86_400_000],
  ])('reads %j with bounds %j as %j', (value, bounds, expected) => {
    expect(readDuration({ d: value }, 'd', 'x', bounds)).toBe(expected);
  });

  it.each<[unknown, { minMs?: number; maxMs?: number }, RegExp]>([
    ['999ms', { minMs: 1_000 }, /x\.d must be at least 1000 ms/],
    ['24h1ms', { maxMs: 86_400_000 }, /x\.d must be at most 86400000 ms/],
    ['15', {}, /x\.d: duration '15' has no unit/],
    [[], {}, /x\.d: expected a string or a number/],
  ])('refuses %j with bounds %j', (value, bounds, message) => {
    expect(() => readDuration({ d: value }, 'd', 'x', bounds)).toThrow(message);
    expect(() => readDuration({ d: value }, 'd', 'x', bounds)).toThrow(expect.objectContaining({ code: 'INVALID_DURATION', field: 'x.d' }));
  });
});

describe('readStringMap', () => {
  const limits = { maxEntries: 2, maxValueLength: 3 };

  it('copies a valid map', () => {
    expect(readStringMap({ m: { a: 'x', b: 'yyy' } }, 'm', '', limits)).toEqual({ a: 'x', b: 'yyy' });
  });

  it.each<[string, unknown, string]>([
    ['too many entries', { a: '1', b: '2', c: '3' }, 'm'],
    ['a value too long', { a: 'long' }, 'm.a'],
    ['a non-string value', { a: null }, 'm.a'],
    ['an array', ['a'], 'm'],
    ['a NUL in a value', { a: 'x\u0000' }, 'm.a'],
    ['an unpaired surrogate in a value', { a: '\ud800' }, 'm.a'],
    ['a NUL in a key', { 'a\u0000': 'x' }, 'm.a\u0000'],
    ['an unpaired surrogate in a key', { '\udfffa': 'x' }, 'm.\udfffa'],
  ])('refuses %s', (_name, value, field) => {
    expect(() => readStringMap({ m: value }, 'm', '', limits)).toThrow(expect.objectContaining({ code: 'VALIDATION_FAILED', field }));
  });
});

describe('readString', () => {
  it.each<[string, string]>([
    ['plain text', 'nightly-report'],
    ['an astral character (a surrogate pair)', 'ship 🚀'],
    ['accents and other scripts', 'café 東京'],
  ])('accepts %s', (_name, value) => {
    expect(readString({ s: value }, 's', '')).toBe(value);
  });

  // Postgres text refuses NUL with an error, and stores an unpaired surrogate as U+FFFD.
  it.each<[string, unknown, RegExp]>([
    ['a NUL', 'a\u0000b', /NUL/],
    ['a lone high surrogate', 'a\ud800', /surrogate/],
    ['a lone low surrogate', '\udc00z', /surrogate/],
    ['a number', 7, /must be a string/],
    ['an empty string', '', /1 to 200 characters/],
  ])('refuses %s naming the field', (_name, value, message) => {
    expect(() => readString({ s: value }, 's', 'p')).toThrow(expect.objectContaining({ code: 'VALIDATION_FAILED', field: 'p.s', message: expect.stringMatching(message) }));
  });
});

describe('storableText', () => {
  it.each([
    ['plain', 'plain'],
    ['', ''],
    ['a\u0000b', 'a\ufffdb'],
    ['\u0000\u0000', '\ufffd\ufffd'],
    ['lone high \ud800 and low \udfff', 'lone high \ufffd and low \ufffd'],
    ['a pair 😀 stays', 'a pair 😀 stays'],
    ['high then pair \ud800😀', 'high then pair \ufffd😀'],
  ])('%j → %j', (value, expected) => expect(storableText(value)).toBe(expected));
});
