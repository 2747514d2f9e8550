import { describe, expect, it } from 'vitest';
import { formatInstant, formatOptionalInstant } from './instants.js';

describe('formatInstant', () => {
  it.each([
    [Date.UTC(2026, 11, 1, 1, 30), '2026-12-01T01:30:00Z'],
    [Date.UTC(2026, 11, 1, 1, 30, 0, 7), '2026-12-01T01:30:00.007Z'],
    [Date.UTC(2026, 11, 1, 1, 30, 0, 500), '2026-12-01T01:30:00.500Z'],
    [0, '1970-01-01T00:00:00Z'],
  ])('%i -> %s', (ms, expected) => {
    expect(formatInstant(ms)).toBe(expected);
    expect(formatInstant(new Date(ms))).toBe(expected);
    expect(Date.parse(expected)).toBe(ms);
  });

  it('keeps null and undefined as null', () => {
    expect(formatOptionalInstant(null)).toBeNull();
    expect(formatOptionalInstant(undefined)).toBeNull();
  });
});
