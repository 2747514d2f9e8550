import { describe, expect, it } from 'vitest';
import { TICK_PARTITIONS, partitionMoves, planPartitions } from './partitions.js';

/** Owners written compactly: 'a' * 4 + 'b' * 2 → ['a','a','a','a','b','b']; '.' is no live owner. */
function owners(spec: string): (string | null)[] {
  return [...spec].map((c) => (c === '.' ? null : c));
}
function planned(plan: (string | null)[]): string {
  return plan.map((o) => o ?? '.').join('');
}
function counts(plan: (string | null)[]): Record<string, number> {
  const n: Record<string, number> = {};
  for (const o of plan) if (o !== null) n[o] = (n[o] ?? 0) + 1;
  return n;
}

describe('planPartitions', () => {
  it.each<[string, string[], string, string]>([
    // [case, members, current owners, plan]
    ['one scheduler takes everything', ['a'], '................', 'aaaaaaaaaaaaaaaa'],
    ['one scheduler keeps everything', ['a'], 'aaaaaaaaaaaaaaaa', 'aaaaaaaaaaaaaaaa'],
    ['two start together: halves, interleaved by deficit', ['a', 'b'], '................', 'abababababababab'],
    ['a second joins: the first keeps its lowest half', ['a', 'b'], 'aaaaaaaaaaaaaaaa', 'aaaaaaaabbbbbbbb'],
    ['balanced pair: nothing moves', ['a', 'b'], 'abababababababab', 'abababababababab'],
    ['an owner died: its partitions go to the survivor', ['b'], '.b.b.b.b.b.b.b.b', 'bbbbbbbbbbbbbbbb'],
    ['a dead owner left in the owners is not a member', ['a'], 'cccccccccccccccc', 'aaaaaaaaaaaaaaaa'],
    ['third joins a pair: the one who owns more keeps one more', ['a', 'b', 'c'], 'aaaaaaaaabbbbbbb', 'aaaaaacccbbbbbcc'],
    ['three from nothing: 6/5/5', ['a', 'b', 'c'], '................', 'aabcabcabcabcabc'],
    ['members listed twice or unsorted', ['b', 'a', 'b'], '................', 'abababababababab'],
  ])('%s', (_, members, current, expected) => {
    expect(planned(planPartitions({ partitions: 16, members, owners: owners(current) }))).toBe(expected);
  });

  it('with no members no one should own anything', () => {
    expect(planPartitions({ partitions: 4, members: [], owners: owners('ab..') })).toEqual([null, null, null, null]);
  });

  it.each([1, 2, 3, 4, 5, 7, 16, 17])('every partition has an owner and shares differ by at most one (%i members)', (n) => {
    const members = Array.from({ length: n }, (_, i) => `s${i}`);
    // Start from a lopsided ownership: the first member owns everything.
    const plan = planPartitions({ partitions: TICK_PARTITIONS, members, owners: Array(TICK_PARTITIONS).fill('s0') });
    expect(plan.every((o) => o !== null)).toBe(true);
    const shares = members.map((m) => counts(plan)[m] ?? 0);
    expect(Math.max(...shares) - Math.min(...shares)).toBeLessThanOrEqual(1);
    // A plan is a fixed point: run again over its own result, nothing moves.
    expect(planPartitions({ partitions: TICK_PARTITIONS, members, owners: plan })).toEqual(plan);
  });
});

describe('partitionMoves', () => {
  it.each<[string, string, string, string, number[], number[]]>([
    // [case, self, plan, owners, release, take]
    ['takes what is free and meant for it', 'a', 'aabb', '....', [], [0, 1]],
    ['releases what is meant for another', 'a', 'aabb', 'aaaa', [2, 3], []],
    ['waits while another live owner still has its share', 'b', 'aabb', 'aaaa', [], []],
    ['takes once the other released', 'b', 'aabb', 'aa..', [], [2, 3]],
    ['keeps what it should own', 'a', 'aabb', 'aabb', [], []],
    ['leaves free partitions meant for others alone', 'a', 'aabb', '..b.', [], [0, 1]],
  ])('%s', (_, self, plan, current, release, take) => {
    expect(partitionMoves(self, owners(plan), owners(current))).toEqual({ release, take });
  });
});
