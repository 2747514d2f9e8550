import type { DispatchItem } from '@kairos/domain';
import { describe, expect, it } from 'vitest';
import { batchJobId, groupForJobs, type JobGroup } from './dispatch-batches.js';

/**
 * Which runs of one dispatch share a transport job (groupForJobs): runs all due together, runs ahead
 * only with those of their instant, never across priorities, a held-and-released run alone, chunked at
 * the batch size, in input order; and the batch job's id (batchJobId): stable, distinct, BullMQ-safe.
 */

const NOW = Date.UTC(2030, 0, 1, 12, 0, 0);

/** A run `offset` ms from NOW (negative or zero: due), of the default queue. */
function run(id: string, offset: number, extra: Partial<Pick<DispatchItem, 'jobId' | 'priority'>> = {}): DispatchItem {
  return { id, availableAt: new Date(NOW + offset), queue: 'default', ...extra };
}

/** `count` due runs r0, r1, … at various instants in the past. */
const due = (count: number): DispatchItem[] => Array.from({ length: count }, (_, i) => run(`r${i}`, -1000 * (i % 7)));

/** The groups as their runs' ids and their dueAt (an offset from NOW, or null), easier to read than items. */
const shape = (groups: JobGroup[]): [string[], number | null][] => groups.map((g) => [g.items.map((i) => i.id), g.dueAt === null ? null : g.dueAt - NOW]);

const ids = (prefix: string, from: number, to: number): string[] => Array.from({ length: to - from }, (_, i) => `${prefix}${from + i}`);

describe('groupForJobs', () => {
  const cases: { name: string; items: DispatchItem[]; max: number; expected: [string[], number | null][] }[] = [
    { name: 'no items: no jobs', items: [], max: 64, expected: [] },
    {
      name: 'max 1: every run alone, due ones with no instant, ahead ones with theirs',
      items: [run('a', -5), run('b', 0), run('c', 2000), run('d', 2000)],
      max: 1,
      expected: [[['a'], null], [['b'], null], [['c'], 2000], [['d'], 2000]],
    },
    { name: 'max 0 counts as 1', items: [run('a', -5), run('b', -5)], max: 0, expected: [[['a'], null], [['b'], null]] },
    { name: 'a single due run: alone', items: [run('a', -5)], max: 64, expected: [[['a'], null]] },
    { name: 'a single run ahead: alone, with its instant', items: [run('a', 1500)], max: 64, expected: [[['a'], 1500]] },
    {
      name: 'runs all due go together whatever their instants, in order (due at now exactly counts as due)',
      items: [run('a', -60_000), run('b', 0), run('c', -1), run('d', -3_600_000)],
      max: 64,
      expected: [[['a', 'b', 'c', 'd'], null]],
    },
    { name: '130 due runs, max 64: 64, 64, 2', items: due(130), max: 64, expected: [[ids('r', 0, 64), null], [ids('r', 64, 128), null], [ids('r', 128, 130), null]] },
    { name: '128 due runs, max 64: exactly two full jobs', items: due(128), max: 64, expected: [[ids('r', 0, 64), null], [ids('r', 64, 128), null]] },
    {
      name: 'runs ahead at the same instant go together, with that instant',
      items: [run('a', 1000), run('b', 1000), run('c', 1000)],
      max: 64,
      expected: [[['a', 'b', 'c'], 1000]],
    },
    {
      name: 'runs ahead at different instants (even 1 ms apart) go apart',
      items: [run('a', 1000), run('b', 1001), run('c', 1000), run('d', 1)],
      max: 64,
      expected: [[['a', 'c'], 1000], [['b'], 1001], [['d'], 1]],
    },
    {
      name: 'due runs and runs ahead never share a job',
      items: [run('a', 1000), run('b', -10), run('c', 1000), run('d', 0), run('e', 5000)],
      max: 64,
      expected: [[['a', 'c'], 1000], [['b', 'd'], null], [['e'], 5000]],
    },
    {
      name: 'runs ahead at one instant are chunked at max too',
      items: [run('a', 700), run('b', 700), run('c', 700), run('d', 700), run('e', 700)],
      max: 2,
      expected: [[['a', 'b'], 700], [['c', 'd'], 700], [['e'], 700]],
    },
    {
      name: 'interleaved keys fill their own jobs, a full one making way for a new one',
      items: [run('a', -1), run('b', 300), run('c', -2), run('d', 300), run('e', -3), run('f', 300)],
      max: 2,
      expected: [[['a', 'c'], null], [['b', 'd'], 300], [['e'], null], [['f'], 300]],
    },
    {
      name: 'different priorities never share a job; priority absent counts as 3',
      items: [run('a', -1), run('b', -1, { priority: 1 }), run('c', -1, { priority: 3 }), run('d', -1, { priority: 5 }), run('e', -1, { priority: 1 }), run('f', -1)],
      max: 64,
      expected: [[['a', 'c', 'f'], null], [['b', 'e'], null], [['d'], null]],
    },
    {
      name: 'priorities apart for runs ahead too',
      items: [run('a', 400, { priority: 2 }), run('b', 400), run('c', 400, { priority: 3 }), run('d', 400, { priority: 2 })],
      max: 64,
      expected: [[['a', 'd'], 400], [['b', 'c'], 400]],
    },
    {
      name: 'a held-and-released run (jobId) travels alone, the others grouping around it',
      items: [run('a', -1), run('b', -1, { jobId: 'b-h1' }), run('c', -1), run('d', 900, { jobId: 'd-h2' }), run('e', 900), run('f', 900)],
      max: 64,
      expected: [[['a', 'c'], null], [['b'], null], [['d'], 900], [['e', 'f'], 900]],
    },
    {
      name: 'two held-and-released runs of the same instant still travel apart',
      items: [run('a', -1, { jobId: 'a-h1' }), run('b', -1, { jobId: 'b-h1' })],
      max: 64,
      expected: [[['a'], null], [['b'], null]],
    },
    {
      name: 'jobId null is a plain run, grouped as usual',
      items: [run('a', -1, { jobId: null }), run('b', -1, { jobId: null })],
      max: 64,
      expected: [[['a', 'b'], null]],
    },
  ];

  it.each(cases)('$name', ({ items, max, expected }) => {
    expect(shape(groupForJobs(items, max, NOW))).toEqual(expected);
  });

  /** Deterministic pseudo-random items (a linear congruential generator), so a failure reproduces. */
  function mixed(seed: number, count: number): DispatchItem[] {
    let state = seed;
    const next = (n: number) => {
      state = (Math.imul(state, 1_103_515_245) + 12_345) >>> 0;
      return state % n;
    };
    return Array.from({ length: count }, (_, i) =>
      run(`m${i}`, [-5000, -1, 0, 1, 250, 250, 1000][next(7)]!, {
        ...(next(3) > 0 && { priority: [1, 3, 5][next(3)]! }),
        ...(next(10) === 0 && { jobId: `m${i}-h1` }),
      }),
    );
  }

  it.each([
    [1, 1, 40],
    [2, 4, 100],
    [3, 64, 300],
    [4, 5, 1],
    [5, 3, 2],
  ])('seed %i, max %i, %i runs: each run in exactly one job, in input order, and every job consistent', (seed, max, count) => {
    const items = mixed(seed, count);
    const groups = groupForJobs(items, max, NOW);
    const position = new Map(items.map((item, i) => [item, i]));
    expect(groups.flatMap((g) => g.items).sort((a, b) => position.get(a)! - position.get(b)!)).toEqual(items);
    expect(new Set(groups.flatMap((g) => g.items)).size).toBe(items.length);
    for (const group of groups) {
      const at = group.items.map((item) => position.get(item)!);
      expect(at).toEqual([...at].sort((a, b) => a - b));
      expect(group.items.length).toBeGreaterThanOrEqual(1);
      expect(group.items.length).toBeLessThanOrEqual(Math.max(1, max));
      expect(new Set(group.items.map((i) => i.priority ?? 3)).size).toBe(1);
      if (group.items.some((i) => i.jobId)) expect(group.items).toHaveLength(1);
      if (group.dueAt === null) for (const item of group.items) expect(item.availableAt.getTime()).toBeLessThanOrEqual(NOW);
      else {
        expect(group.dueAt).toBeGreaterThan(NOW);
        for (const item of group.items) expect(item.availableAt.getTime()).toBe(group.dueAt);
      }
    }
  });
});

describe('batchJobId', () => {
  const uuids = ['0190a3c2-7b1e-7c4d-9f00-1a2b3c4d5e6f', '0190a3c2-7b1e-7c4d-9f00-1a2b3c4d5e70', '0190a3c2-7b1e-7c4d-9f00-1a2b3c4d5e71'];

  it.each([
    ['the same ids', ['a', 'b', 'c']],
    ['uuids', uuids],
    ['one id', ['only']],
  ])('is the same for %s handed over twice', (_name, runIds) => {
    expect(batchJobId(runIds)).toBe(batchJobId([...runIds]));
  });

  it.each<[string, string[], string[]]>([
    ['the last id differs', ['a', 'b', 'c'], ['a', 'b', 'd']],
    ['a middle id differs', ['a', 'b', 'c'], ['a', 'x', 'c']],
    ['the order differs', ['a', 'b', 'c'], ['a', 'c', 'b']],
    ['one more id', ['a', 'b'], ['a', 'b', 'c']],
    ['the ids split differently', ['a', 'bc'], ['ab', 'c']],
    ['the same characters moved across ids', ['a', 'bc', 'd'], ['a', 'b', 'cd']],
    ['uuids of the same start, one differing', uuids, [uuids[0]!, uuids[1]!, '0190a3c2-7b1e-7c4d-9f00-1a2b3c4d5e72']],
    ['uuids reordered after the first', uuids, [uuids[0]!, uuids[2]!, uuids[1]!]],
  ])('differs when %s', (_name, left, right) => {
    expect(batchJobId(left)).not.toBe(batchJobId(right));
  });

  it.each([
    [['a', 'b', 'c'], 'batch-a-3-'],
    [uuids, `batch-${uuids[0]}-3-`],
    [['run-1'], 'batch-run-1-1-'],
    [Array.from({ length: 64 }, (_, i) => `r${i}`), 'batch-r0-64-'],
  ])('%j starts with %s, then 8 hex digits, and holds no ":"', (runIds, prefix) => {
    const id = batchJobId(runIds);
    expect(id.startsWith(prefix)).toBe(true);
    expect(id.slice(prefix.length)).toMatch(/^[0-9a-f]{8}$/);
    expect(id).not.toContain(':');
  });
});
