import { describe, expect, it } from 'vitest';
import { LocalRateCounter } from './rate-limit.middleware.js';

describe('LocalRateCounter (the Postgres transport\'s per-process rate counts)', () => {
  it.each<[string, [string, number][], [number, number][]]>([
    ['counts one caller within a second', [['a', 1_000], ['a', 1_250], ['a', 1_999]], [[1, 1_000_000], [2, 750_000], [3, 1_000]]],
    ['starts again in the next second', [['a', 1_900], ['a', 1_999], ['a', 2_000], ['a', 2_001]], [[1, 100_000], [2, 1_000], [1, 1_000_000], [2, 999_000]]],
    ['keeps callers apart', [['a', 5_000], ['b', 5_001], ['a', 5_002]], [[1, 1_000_000], [1, 999_000], [2, 998_000]]],
    ['forgets a second that came back after a gap', [['a', 1_000], ['a', 3_000]], [[1, 1_000_000], [1, 1_000_000]]],
  ])('%s', (_name, requests, expected) => {
    const counter = new LocalRateCounter();
    expect(requests.map(([subject, now]) => counter.count(subject, now))).toEqual(expected);
  });

  it('keeps counting the current second while sweeping stale callers', () => {
    const counter = new LocalRateCounter();
    for (let i = 0; i < 10_000; i++) counter.count(`old-${i}`, 1_000);
    expect(counter.count('fresh', 2_000)).toEqual([1, 1_000_000]);
    expect(counter.count('fresh', 2_500)).toEqual([2, 500_000]);
    expect(counter.count('old-1', 2_600)).toEqual([1, 400_000]);
  });
});
