/**
 * Where a run's job goes in its BullMQ queue so that the queue hands its jobs out best priority
 * first, oldest first within one, while a queue whose runs all have the default priority pays
 * nothing for it. BullMQ keeps plain jobs in a list, taken first, oldest first, and prioritized jobs
 * in a sorted set, taken once the list is empty; the sorted set costs every job a good deal more
 * (measured: about 13% of a durable run's CPU). So:
 *   - a run of the default priority (3) goes to the list, unless the queue holds prioritized jobs
 *     (one of 1 or 2 may be waiting there): then to the set, with priority 3, behind them;
 *   - a run of priority 4 or 5 goes to the set: behind everything in the list, ordered in the set;
 *   - a run of priority 1 or 2 goes to the set, unless the list holds jobs (runs of priority 3
 *     handed over plainly): then to the head of the list (BullMQ's lifo), ahead of them.
 * Runs of priority 1 or 2 that jump a list of plain jobs so start before them, newest first among
 * themselves; once the list is empty they are ordered in the set.
 */
import { DEFAULT_PRIORITY } from '@kairos/domain';
import type { RunsQueue } from '@kairos/queue';

/** What the placement of a job needs to know of its queue. */
export interface QueueShape {
  /** Plain jobs waiting in the list (null: not read, taken as none). */
  listed: number | null;
  /** Whether prioritized jobs wait in the set. */
  prioritized: boolean;
}

/** The BullMQ options that place a run's job: nothing for a plain one. */
export function placement(priority: number, queue: QueueShape): { priority: number } | { lifo: true } | Record<string, never> {
  if (priority === DEFAULT_PRIORITY) return queue.prioritized ? { priority } : {};
  if (priority > DEFAULT_PRIORITY) return { priority };
  return (queue.listed ?? 0) > 0 ? { lifo: true } : { priority };
}

/** How long a queue's shape, read in the background, is used before being read again. */
const SHAPE_TTL_MS = 250;

/**
 * The shape of each queue a process dispatches to. A dispatch of default-priority runs only reads
 * the shape kept (refreshed behind its back, at most every SHAPE_TTL_MS); a dispatch with another
 * priority reads it first, and so pays for what it uses.
 */
export class QueueShapes {
  private readonly kept = new WeakMap<RunsQueue, { prioritized: boolean; readAt: number; reading: boolean }>();

  /** The shape kept for `queue` (a BullMQ queue: one shard of a runs queue), refreshed in the background when stale. */
  current(queue: RunsQueue): QueueShape {
    const entry = this.kept.get(queue) ?? { prioritized: false, readAt: -Infinity, reading: false };
    this.kept.set(queue, entry);
    if (!entry.reading && performance.now() - entry.readAt > SHAPE_TTL_MS) {
      entry.reading = true;
      void this.read(queue)
        .catch(() => undefined)
        .finally(() => (entry.reading = false));
    }
    return { listed: null, prioritized: entry.prioritized };
  }

  /** Reads `queue`'s shape now (and keeps it). */
  async read(queue: RunsQueue): Promise<QueueShape> {
    const counts = await queue.getJobCounts('wait', 'prioritized');
    const shape = { listed: counts.wait ?? 0, prioritized: (counts.prioritized ?? 0) > 0 };
    const entry = this.kept.get(queue) ?? { prioritized: false, readAt: -Infinity, reading: false };
    this.kept.set(queue, { ...entry, prioritized: shape.prioritized, readAt: performance.now() });
    return shape;
  }
}
