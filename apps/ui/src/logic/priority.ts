/**
 * Priority and fair share as the dashboard tells them: a priority in words, a fairness declaration
 * in words, and the arithmetic of the cluster page's pictures of a queue's queued runs (a stacked
 * bar by priority, a bar per fairness key).
 */
import type { Fairness, Queue } from '../data/wire/index.js';

export const PRIORITIES = [1, 2, 3, 4, 5] as const;
/** The priority a run has unless it says otherwise. */
export const NORMAL_PRIORITY = 3;

const PRIORITY_WORDS: Record<number, string> = { 1: 'first', 2: 'before normal', 3: 'normal', 4: 'after normal', 5: 'last' };

/** "priority 1 (first)", "priority 3 (normal)", "priority 5 (last)". */
export function priorityInWords(priority: number): string {
  const words = PRIORITY_WORDS[priority];
  return words === undefined ? `priority ${priority}` : `priority ${priority} (${words})`;
}

/** A fairness declaration (a schedule's, a sensor's, a step's) in words; `none` says what a missing one means. */
export function fairnessInWords(fairness: Fairness | null, none = 'none: its runs share the one key of runs without a key'): string {
  if (fairness === null) return none;
  return `key ${fairness.key}, weight ${fairness.weight}`;
}

/** A run's resolved fairness key in words. */
export function fairnessKeyInWords(key: string | null): string {
  return key === null ? 'none (it shares the one key of runs without a key)' : key;
}

/** A queue's queued runs by priority (always the five, 1 first), or null when the API does not send them. */
export function queuedByPriority(queue: { queuedByPriority?: Queue['queuedByPriority'] }): { priority: number; queued: number }[] | null {
  const given = queue.queuedByPriority;
  if (!Array.isArray(given)) return null;
  return PRIORITIES.map((priority) => ({ priority, queued: Math.max(0, given.find((g) => g.priority === priority)?.queued ?? 0) }));
}

export interface PrioritySegment {
  priority: number;
  queued: number;
  x: number;
  width: number;
  words: string;
}

/** The stacked bar of a queue's queued runs, priority 1 at the left, each priority as wide as its share of `width`; priorities without runs have no segment. */
export function prioritySegments(counts: readonly { priority: number; queued: number }[], width: number): PrioritySegment[] {
  const total = counts.reduce((sum, c) => sum + c.queued, 0);
  if (total === 0) return [];
  let x = 0;
  return counts
    .filter((c) => c.queued > 0)
    .map((c) => {
      const w = (c.queued / total) * width;
      const segment = { priority: c.priority, queued: c.queued, x, width: w, words: `${priorityInWords(c.priority)}: ${c.queued} queued` };
      x += w;
      return segment;
    });
}

export interface KeyBar {
  key: string;
  /** The key as labelled: cut to `maxLabel` characters. */
  label: string;
  queued: number;
  width: number;
  words: string;
}

/** One bar per fairness key with queued runs, most first, as long as its count against the largest (which takes `width`). */
export function fairnessKeyBars(keys: Queue['fairnessKeys'] | undefined, width: number, maxLabel = 28): KeyBar[] {
  if (!Array.isArray(keys)) return [];
  // A stable sort: keys with as many runs keep the API's order.
  const shown = keys.filter((k) => k.queued > 0).sort((a, b) => b.queued - a.queued);
  const most = Math.max(1, ...shown.map((k) => k.queued));
  return shown.map((k) => ({
    key: k.key,
    label: k.key.length > maxLabel ? `${k.key.slice(0, maxLabel - 1)}…` : k.key,
    queued: k.queued,
    width: (k.queued / most) * width,
    words: `fairness key ${k.key}: ${k.queued} queued`,
  }));
}
