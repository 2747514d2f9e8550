/**
 * Limits as the dashboard tells them: a queue's load against its limit (the cluster page's bar),
 * its rate limit in words, and why a held run has not started (the run page's note), a run waiting
 * for its fairness key's turn among them.
 */
import type { Concurrency, Queue, RunState, Target } from '../data/wire/index.js';
import { priorityInWords } from './priority.js';

/** The defer reasons of a run a limit holds back (it starts, oldest first, as soon as a place frees), or its fairness key's turn does (FAIR_SHARE). */
export const HOLD_REASONS = ['CONCURRENCY_LIMIT', 'QUEUE_LIMIT', 'QUEUE_RATE_LIMIT', 'FAIR_SHARE'] as const;
export type HoldReason = (typeof HOLD_REASONS)[number];

/** The queue a run travels on: its handler target's, else the default queue. */
export function queueOf(target: Target | null): string {
  return target !== null && target.type === 'handler' ? target.queue : 'default';
}

/** How full a queue is: running against its limit (fraction 0 to 1, null without a limit), in words. */
export function queueLoad(queue: Pick<Queue, 'running' | 'maxRunning'>): { fraction: number | null; words: string } {
  if (queue.maxRunning === null) return { fraction: null, words: `${queue.running} running, no limit` };
  return { fraction: Math.min(1, queue.running / queue.maxRunning), words: `${queue.running} of at most ${queue.maxRunning} running` };
}

/** A rate limit as read: "100 per 1m", or "none". */
export function rateInWords(rate: Queue['rate']): string {
  return rate === null ? 'none' : `${rate.max} per ${rate.per}`;
}

/** The limit holding a run back, or null when none does (a running or ended run, or a delay of another kind). */
export function holdOf(run: { state: RunState; deferReason: string | null }): HoldReason | null {
  if (run.state !== 'queued' && run.state !== 'sleeping' && run.state !== 'waiting') return null;
  return (HOLD_REASONS as readonly string[]).includes(run.deferReason ?? '') ? (run.deferReason as HoldReason) : null;
}

/** What holds the run back and when it starts, in words; `queue` (read separately) adds the queue's numbers when known. */
export function holdInWords(
  reason: HoldReason,
  run: { target: Target | null; concurrency: Concurrency | null; priority?: number; fairnessKey?: string | null },
  queue: Queue | null,
): string {
  const name = queueOf(run.target);
  switch (reason) {
    case 'CONCURRENCY_LIMIT': {
      const key = run.concurrency;
      const taken = key === null ? 'its concurrency key is taken' : key.limit === 1 ? 'another run holding the key is running' : `${key.limit} runs holding the key are running`;
      return `Held back by its concurrency key${key === null ? '' : ` "${key.key}" (limit ${key.limit})`}: ${taken}. It starts, oldest first, as soon as one of them ends.`;
    }
    case 'QUEUE_LIMIT': {
      const limit = queue?.maxRunning ?? null;
      const now = queue === null ? '' : ` (${queue.running} running now, ${queue.held} held)`;
      return `Held back by the limit of queue "${name}": ${limit === null ? 'its places are taken' : `at most ${limit} of its runs run at once`}${now}. It starts, oldest first, as soon as a place frees.`;
    }
    case 'QUEUE_RATE_LIMIT': {
      const rate = queue?.rate ?? null;
      return `Held back by the rate limit of queue "${name}": ${rate === null ? 'its window is full' : `at most ${rate.max} of its runs start per ${rate.per}`}. It starts, oldest first, as soon as the window has room.`;
    }
    case 'FAIR_SHARE': {
      const key = run.fairnessKey ?? null;
      const whose = key === null ? 'the one key of runs without a key' : `its fairness key "${key}"`;
      const within = run.priority === undefined ? 'its priority' : priorityInWords(run.priority);
      const waiting = key === null ? undefined : queue?.fairnessKeys?.find((k) => k.key === key)?.queued;
      const now = waiting === undefined ? '' : ` (${waiting === 1 ? '1 run' : `${waiting} runs`} of the key queued now)`;
      return `Waiting for the turn of ${whose} on queue "${name}"${now}: among the due runs of ${within}, the fairness keys take starts in proportion to their weights. It starts, oldest of its key first, when its key's turn comes.`;
    }
  }
}
