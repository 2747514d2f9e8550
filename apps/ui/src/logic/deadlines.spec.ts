import { describe, expect, it } from 'vitest';
import type { Schedule } from '../data/wire/index.js';
import { expectInWords, lateInWords } from './deadlines.js';

describe('expectInWords', () => {
  it.each<[Schedule['expect'], string]>([
    [null, 'nothing: no deadline is watched'],
    [{ succeededWithin: '10m' }, "each slot's run succeeds within 10 minutes of the slot"],
    [{ succeededWithin: '1h30m' }, "each slot's run succeeds within 1 hour 30 minutes of the slot"],
  ])('%j', (expectation, words) => {
    expect(expectInWords(expectation)).toBe(words);
  });
});

describe('lateInWords', () => {
  it.each<[string, Schedule['expect'], string]>([
    ['2026-05-01T10:00:00.000Z', { succeededWithin: '5m' }, "The run of the 2026-05-01 10:00:00Z slot did not succeed within 5 minutes, and no slot's run has since."],
    // The API clears a lateness with its deadline; should one come without, it still reads.
    ['2026-05-01T10:00:00Z', null, "The run of the 2026-05-01 10:00:00Z slot did not succeed in time, and no slot's run has since."],
  ])('%s, %j', (lateSince, expectation, words) => {
    expect(lateInWords(lateSince, expectation)).toBe(words);
  });
});
