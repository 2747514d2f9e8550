import { describe, expect, it } from 'vitest';
import { isUuid, newId } from './ids.js';

describe('newId', () => {
  it.each([
    [0, '00000000-0000'],
    [1, '00000000-0001'],
    [Date.UTC(2026, 10, 29, 12, 0, 0), '01a2272d-2600'],
    [2 ** 48 - 1, 'ffffffff-ffff'],
  ])('puts %d ms in the first 48 bits', (ms, prefix) => {
    const id = newId(ms);
    expect(id.slice(0, 13)).toBe(prefix);
    expect(isUuid(id)).toBe(true);
  });

  it('is a version 7, variant 10 UUID', () => {
    for (let i = 0; i < 1_000; i++) {
      const id = newId();
      expect(id[14]).toBe('7');
      expect('89ab').toContain(id[19]);
    }
  });

  it('sorts by time across milliseconds and never repeats', () => {
    const ids = Array.from({ length: 10_000 }, (_, i) => newId(1_700_000_000_000 + Math.floor(i / 100)));
    expect(new Set(ids).size).toBe(ids.length);
    for (let i = 100; i < ids.length; i += 100) expect(ids[i - 1]! < ids[i]!).toBe(true);
  });
});

describe('isUuid', () => {
  it.each([
    ['01a226b4-d238-7c31-b6af-28c7c8951e9e', true],
    ['01A226B4-D238-7C31-B6AF-28C7C8951E9E', true],
    ['01a226b4d2387c31b6af28c7c8951e9e', false],
    ['01a226b4-d238-7c31-b6af-28c7c8951e9', false],
    ['01a226b4-d238-7c31-b6af-28c7c8951e9g', false],
    ['', false],
  ])('%s → %s', (value, expected) => expect(isUuid(value)).toBe(expected));
});
