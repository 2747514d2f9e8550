import { describe, expect, it } from 'vitest';
import { EVERY_SHARD, evenestShardCount, keySlot, liveShards, shardOf, shardPrefix, shardsPerMaster, splitConcurrency } from './shards.js';

/** Time-ordered ids as the ledger makes them (UUIDv7 shape): a run id's shard must not follow its time. */
const ids = Array.from({ length: 20_000 }, (_, i) => {
  const time = (1_765_000_000_000 + i * 3).toString(16).padStart(12, '0');
  const rest = ((i * 2_654_435_761) >>> 0).toString(16).padStart(8, '0');
  return `${time.slice(0, 8)}-${time.slice(8)}-7${rest.slice(0, 3)}-8${rest.slice(3, 6)}-${rest}${time.slice(0, 4)}`;
});

describe('shardOf', () => {
  it('puts every run on the unsharded queue when there is one shard', () => {
    expect(new Set(ids.map((id) => shardOf(id, 1)))).toEqual(new Set([null]));
  });

  it.each([2, 3, 4, 6, 8, 16, 64])('spreads time-ordered ids evenly over %i shards (each within 10% of its share)', (count) => {
    const counts = new Array<number>(count).fill(0);
    for (const id of ids) {
      const shard = shardOf(id, count);
      expect(shard).toBeGreaterThanOrEqual(0);
      expect(shard).toBeLessThan(count);
      counts[shard as number] = (counts[shard as number] ?? 0) + 1;
    }
    const share = ids.length / count;
    // 64 shards hold about 312 ids each: a binomial spread of about 18, so allow 4 of those there.
    const slack = Math.max(0.1 * share, 4 * Math.sqrt(share));
    for (const n of counts) expect(Math.abs(n - share)).toBeLessThan(slack);
  });

  it.each([
    [1, 2],
    [2, 3],
    [3, 4],
    [4, 6],
    [6, 2],
    [6, 12],
    [63, 64],
  ])('moves from %i to %i shards only the runs it must, and only to the shards that changed', (from, to) => {
    let moved = 0;
    for (const id of ids) {
      const before = shardOf(id, from) ?? 0;
      const after = shardOf(id, to) ?? 0;
      if (before === after) continue;
      moved += 1;
      // Growing moves runs only onto the new shards; shrinking only off the ones removed.
      if (to > from) expect(after).toBeGreaterThanOrEqual(from);
      else expect(before).toBeGreaterThanOrEqual(to);
    }
    const expected = Math.abs(to - from) / Math.max(from, to);
    expect(moved / ids.length).toBeGreaterThan(expected - 0.03);
    expect(moved / ids.length).toBeLessThan(expected + 0.03);
  });

  it('picks the same shard for the same id, every time and in every process', () => {
    // Fixed values: a change of the hash would move every run of every deployment.
    expect(['a', 'b', 'c', 'run-1', 'run-2'].map((id) => shardOf(id, 6))).toEqual([2, 3, 0, 0, 4]);
  });
});

describe('shard layout', () => {
  it.each([
    [1, [null]],
    [2, [0, 1]],
    [6, [0, 1, 2, 3, 4, 5]],
  ])('%i shards are %j', (count, shards) => {
    expect(liveShards(count)).toEqual(shards);
  });

  it('knows every shard any count uses: the unsharded queue and shards 0 to 63', () => {
    expect(EVERY_SHARD).toHaveLength(65);
    expect(EVERY_SHARD[0]).toBeNull();
    expect(EVERY_SHARD.at(-1)).toBe(63);
  });

  it.each([
    ['kairos', null, 'kairos'],
    ['{kairos}', null, '{kairos}'],
    ['kairos', 0, '{kairos:kairos-runs.media:0}'],
    ['{kairos}', 5, '{kairos:kairos-runs.media:5}'],
    ['kairos', '[0-9]*', '{kairos:kairos-runs.media:[0-9]*}'],
  ] as const)('with unsharded prefix %s, shard %s is under %s', (unsharded, shard, prefix) => {
    expect(shardPrefix(unsharded, 'kairos', 'kairos-runs.media', shard)).toBe(prefix);
  });
});

describe('splitConcurrency', () => {
  it.each([
    [256, 1, [256]],
    [256, 6, [43, 43, 43, 43, 42, 42]],
    [8, 6, [2, 2, 1, 1, 1, 1]],
    [6, 6, [1, 1, 1, 1, 1, 1]],
    [2, 4, [1, 1, 1, 1]],
  ])('splits %i over %i shards as %j', (total, shards, split) => {
    expect(splitConcurrency(total, shards)).toEqual(split);
  });
});

describe('keySlot', () => {
  // Slots as Redis's CLUSTER KEYSLOT gives them.
  it.each([
    ['foo', 12_182],
    ['bar', 5_061],
    ['{user1000}.following', 3_443],
    ['{user1000}.followers', 3_443],
    ['foo{}{bar}', 8_363],
    ['{}foo', 9_500],
    ['{kairos:kairos-runs:0}:kairos-runs:wait', 12_347],
    ['123456789', 12_739],
  ])('puts %s on slot %i', (key, slot) => {
    expect(keySlot(key)).toBe(slot);
  });
});

describe('shards over masters', () => {
  // Three masters owning the standard thirds of the slots.
  const masterOf = (slot: number): string => (slot <= 5_460 ? 'a' : slot <= 10_922 ? 'b' : 'c');

  it('counts the shards each master holds, by the slots of their hash tags', () => {
    const held = shardsPerMaster('kairos', 'kairos-runs', 6, masterOf);
    expect([...held.values()].reduce((a, b) => a + b)).toBe(6);
    for (let n = 0; n < 6; n++) expect(held.get(masterOf(keySlot(`{kairos:kairos-runs:${n}}:kairos-runs:wait`)))).toBeGreaterThan(0);
  });

  it.each([['kairos-runs'], ['kairos-runs.media']])('finds the count that spreads %s the most evenly: no count from it on does better', (name) => {
    const masters = ['a', 'b', 'c'];
    const share = (count: number): number => Math.max(...masters.map((m) => shardsPerMaster('kairos', name, count, masterOf).get(m) ?? 0)) / count;
    const best = evenestShardCount('kairos', name, 6, masters, masterOf);
    expect(best.busiest).toBeCloseTo(share(best.count), 9);
    for (let count = 6; count <= 64; count++) expect(share(count)).toBeGreaterThanOrEqual(best.busiest - 1e-9);
    expect(best.busiest).toBeLessThan(0.45);
  });
});
