/**
 * Shards of a runs queue (KAIROS_QUEUE_SHARDS). With one shard a runs queue is one BullMQ queue under
 * the deployment's prefix, as it always was; with more, shard n of BullMQ queue `kairos-runs.media`
 * is a BullMQ queue of the same name under a prefix that is a hash tag of its own,
 * `{kairos:kairos-runs.media:n}`, so a Redis Cluster places each shard's keys (BullMQ's scripts touch
 * several of a queue's at once) on a slot, and so a master, of its own.
 *
 * A run's shard is picked from its job id by jump consistent hashing: every process picks the same
 * one, and a change of the number of shards from n to m moves only the runs it must (a quarter of
 * them from 3 to 4, say), not nearly all as a modulo would.
 */
import { MAX_QUEUE_SHARDS } from '@kairos/config/connections';

/** A shard: its index, or null for the unsharded layout that one shard uses. */
export type Shard = number | null;

/** The shards a runs queue has when split `count` ways. */
export function liveShards(count: number): Shard[] {
  return count === 1 ? [null] : Array.from({ length: count }, (_, n) => n);
}

/** Every shard any number of shards (1 to MAX_QUEUE_SHARDS) uses: the ones to look for jobs left behind in. */
export const EVERY_SHARD: readonly Shard[] = [null, ...liveShards(MAX_QUEUE_SHARDS)];

/**
 * BullMQ's key prefix of `shard` of BullMQ queue `name`; `unsharded` is the prefix of the unsharded
 * layout (see bullPrefix). Given `[0-9]*`, the pattern of every shard's prefix (for ACL rules).
 */
export function shardPrefix(unsharded: string, queuePrefix: string, name: string, shard: Shard | '[0-9]*'): string {
  return shard === null ? unsharded : `{${queuePrefix}:${name}:${shard}}`;
}

/** The shard of `count` that job `id` goes to. */
export function shardOf(id: string, count: number): Shard {
  if (count === 1) return null;
  return jumpHash(fnv1a(id), count);
}

/**
 * Jump consistent hash (Lamping and Veach, 2014), driven by a 32-bit generator seeded with the key:
 * the bucket moves forward to b' = floor((b + 1) / r) for uniform r in (0, 1], so growing from n
 * to n + 1 buckets moves each key with probability 1 / (n + 1), and only into the new bucket.
 */
function jumpHash(key: number, buckets: number): number {
  let state = key;
  let b = -1;
  let j = 0;
  while (j < buckets) {
    b = j;
    state = mulberry32(state);
    const r = ((state >>> 0) + 1) / 4_294_967_296;
    j = Math.floor((b + 1) / r);
  }
  return b;
}

/** One step of mulberry32: the next state, well mixed. */
function mulberry32(state: number): number {
  let t = (state + 0x6d2b79f5) | 0;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return (t ^ (t >>> 14)) >>> 0;
}

/** FNV-1a, 32 bits, over the string's UTF-16 code units. */
function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

/** Concurrency `total` split over `shards` consumers as evenly as it goes, each at least 1. */
export function splitConcurrency(total: number, shards: number): number[] {
  return Array.from({ length: shards }, (_, n) => Math.max(1, Math.floor(total / shards) + (n < total % shards ? 1 : 0)));
}

/** The Redis Cluster slot of `key`: CRC16 (XMODEM) of its hash tag, or of the whole key without one, modulo 16,384. */
export function keySlot(key: string): number {
  const open = key.indexOf('{');
  const close = open === -1 ? -1 : key.indexOf('}', open + 1);
  const hashed = close > open + 1 ? key.slice(open + 1, close) : key;
  let crc = 0;
  for (const byte of Buffer.from(hashed, 'utf8')) {
    crc ^= byte << 8;
    for (let bit = 0; bit < 8; bit++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc % 16_384;
}

/**
 * How many of `count` shards of BullMQ queue `name` each master holds, given `masterOf` (a slot's
 * master): a Cluster places hash tags by their slots, so six shards on three masters land 2-2-2 or,
 * as it happens, 4-1-1.
 */
export function shardsPerMaster(queuePrefix: string, name: string, count: number, masterOf: (slot: number) => string | undefined): Map<string, number> {
  const held = new Map<string, number>();
  for (let n = 0; n < count; n++) {
    const master = masterOf(keySlot(shardPrefix('', queuePrefix, name, n))) ?? 'unknown';
    held.set(master, (held.get(master) ?? 0) + 1);
  }
  return held;
}

/**
 * The number of shards from `from` up to MAX_QUEUE_SHARDS whose busiest master holds the smallest
 * share of BullMQ queue `name`'s shards (the smaller count among equals), and that share.
 */
export function evenestShardCount(queuePrefix: string, name: string, from: number, masters: readonly string[], masterOf: (slot: number) => string | undefined): { count: number; busiest: number } {
  let best = { count: from, busiest: Infinity };
  for (let count = from; count <= MAX_QUEUE_SHARDS; count++) {
    const held = shardsPerMaster(queuePrefix, name, count, masterOf);
    const busiest = Math.max(...masters.map((m) => held.get(m) ?? 0)) / count;
    if (busiest < best.busiest - 1e-9) best = { count, busiest };
  }
  return best;
}
