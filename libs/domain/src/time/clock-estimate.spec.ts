import { describe, expect, it } from 'vitest';
import { anchorOf, remoteNow, type ClockSample } from './clock-estimate.js';

const sample = (sentAt: number, receivedAt: number, remoteMs: number, wallMs: number): ClockSample => ({ sentAt, receivedAt, remoteMs, wallMs });

describe('anchorOf', () => {
  it.each([
    ['no samples', [], null],
    ['a sample whose answer came before its question (a broken monotonic reading) is ignored', [sample(10, 5, 1_000, 1_000)], null],
    [
      'one sample: the remote reading sits at the middle of the round trip',
      [sample(100, 104, 50_000, 40_004)],
      { remoteMs: 50_000, monotonicMs: 102, uncertaintyMs: 2, offsetMs: 9_998 },
    ],
    [
      'the shortest round trip wins, wherever it stands',
      [sample(0, 30, 9_000, 9_030), sample(40, 42, 9_041, 9_042), sample(50, 60, 9_055, 9_060)],
      { remoteMs: 9_041, monotonicMs: 41, uncertaintyMs: 1, offsetMs: 0 },
    ],
    [
      'a host 30 s behind the database',
      [sample(0, 2, 1_700_000_030_001, 1_700_000_000_002)],
      { remoteMs: 1_700_000_030_001, monotonicMs: 1, uncertaintyMs: 1, offsetMs: 30_000 },
    ],
    [
      'a host an hour ahead of the database',
      [sample(0, 2, 1_700_000_000_001, 1_700_003_600_002)],
      { remoteMs: 1_700_000_000_001, monotonicMs: 1, uncertaintyMs: 1, offsetMs: -3_600_000 },
    ],
  ] as const)('%s', (_what, samples, expected) => {
    expect(anchorOf(samples)).toEqual(expected);
  });
});

describe('remoteNow', () => {
  it('runs forward from the anchor on the monotonic clock alone', () => {
    const anchor = { remoteMs: 1_000_000, monotonicMs: 500, uncertaintyMs: 1, offsetMs: 0 };
    expect([remoteNow(anchor, 500), remoteNow(anchor, 1_750), remoteNow(anchor, 400)]).toEqual([1_000_000, 1_001_250, 999_900]);
  });
});
