/**
 * The wire shapes of queue limits: PUT /v1/queues/:name's body, and a queue as GET /v1/queues lists
 * it (its limits, what runs and waits on it, by priority and fairness key, its live workers).
 */
import { z } from 'zod';
import { DEFAULT_QUEUE, QUEUE_NAME_PATTERN } from '../handlers.js';
import { MAX_PRIORITY, MIN_PRIORITY } from '../priority.js';
import { closedObject, integer, present, readWire, text, worded } from './read.js';
import { component, page } from './registry.js';
import { Duration, durationMs, Instant } from './shared.js';

/** The most runs of one queue a limit may let run at once. */
export const MAX_QUEUE_RUNNING = 100_000;
/** The most starts a rate limit may allow per window. */
export const MAX_QUEUE_RATE = 1_000_000;
/** How many fairness keys a queue's view names: those with the most queued runs. */
export const QUEUE_VIEW_FAIRNESS_KEYS = 10;
/** A rate limit's window: from 100 ms to a day. */
export const MIN_QUEUE_RATE_WINDOW_MS = 100;
export const MAX_QUEUE_RATE_WINDOW_MS = 86_400_000;

const queueName = text(64).regex(QUEUE_NAME_PATTERN, worded((field) => `${field} must be 1 to 64 letters, digits, "_", "." or "-" (the default queue is "${DEFAULT_QUEUE}")`));
const queuePath = z.strictObject({ name: queueName });

/** A queue name from a path, refused (VALIDATION_FAILED on `name`) unless it is one a handler target may name. */
export function readQueueName(name: unknown): string {
  return readWire(queuePath, { name }).name;
}

export const QueueLimitsPut = component(
  'QueueLimitsPut',
  closedObject({
    maxRunning: integer(1, MAX_QUEUE_RUNNING)
      .nullable()
      .optional()
      .describe(`At most this many runs of the queue run at once in the namespace (1 to ${MAX_QUEUE_RUNNING}). Absent or null: no limit.`),
    rate: closedObject({
      max: present(integer(1, MAX_QUEUE_RATE), (field) => `${field} is required: how many runs of the queue may start in each window, e.g. 100`).describe(
        `1 to ${MAX_QUEUE_RATE} starts.`,
      ),
      per: present(durationMs({ minMs: MIN_QUEUE_RATE_WINDOW_MS, maxMs: MAX_QUEUE_RATE_WINDOW_MS }), (field) => `${field} is required: the window, e.g. "1m"`).describe(
        'The sliding window the starts are counted in, from 100ms to 1d.',
      ),
    })
      .nullable()
      .optional()
      .describe('At most `max` runs of the queue start in any window of `per`. Absent or null: no rate limit.'),
  }),
  "The limits of a queue of the caller's namespace; absent or null fields lift theirs, and a body without limits clears the queue's. A run a limit holds back stays queued (deferReason QUEUE_LIMIT or QUEUE_RATE_LIMIT) and starts, oldest first, as soon as a place frees.",
);

/** A PUT /v1/queues/:name body: the limits, each null when not limited; the window in milliseconds. */
export function readQueueLimitsPut(body: unknown): { maxRunning: number | null; rate: { max: number; perMs: number } | null } {
  const { maxRunning, rate } = readWire(QueueLimitsPut, body);
  // `per` is present (the declaration refuses it absent or null).
  return { maxRunning: maxRunning ?? null, rate: rate ? { max: rate.max, perMs: rate.per! } : null };
}

const count = () => z.int().min(0);

export const QueueView = component(
  'QueueView',
  z.strictObject({
    name: z.string().regex(QUEUE_NAME_PATTERN),
    maxRunning: z.int().min(1).nullable().describe('At most this many of its runs run at once; null: no limit.'),
    rate: z
      .strictObject({ max: z.int().min(1), per: Duration })
      .nullable()
      .describe('At most `max` of its runs start in any window of `per`; null: no rate limit.'),
    running: count().describe('Runs of the namespace on the queue running now.'),
    queued: count().describe('Runs due and waiting for a worker (not held back by a limit).'),
    held: count().describe(
      'Runs held back: by a limit until a place frees (deferReason CONCURRENCY_LIMIT, QUEUE_LIMIT or QUEUE_RATE_LIMIT), until a worker of their version runs (VERSION_UNAVAILABLE), or until their fairness key\'s turn (FAIR_SHARE).',
    ),
    queuedByPriority: z
      .array(z.strictObject({ priority: z.int().min(MIN_PRIORITY).max(MAX_PRIORITY), queued: count() }))
      .length(MAX_PRIORITY - MIN_PRIORITY + 1)
      .describe(
        `Its runs in state queued (due or not, held or not) by priority: one item per priority, ${MIN_PRIORITY} (starts first) to ${MAX_PRIORITY}, in that order, with 0 for a priority without runs.`,
      ),
    fairnessKeys: z
      .array(z.strictObject({ key: z.string(), queued: count() }))
      .max(QUEUE_VIEW_FAIRNESS_KEYS)
      .describe(
        `The (at most ${QUEUE_VIEW_FAIRNESS_KEYS}) fairness keys with the most of its runs in state queued, most first, ties by key; runs without a key are left out. Empty when none of its queued runs has a key.`,
      ),
    workers: count().describe('Live workers serving the queue: seen in the last minute and not stopped.'),
    updatedAt: Instant.nullable().describe('When its limits were last set; null without limits.'),
  }),
  "A queue of the caller's namespace: its limits, its runs running, queued and held, its queued runs by priority and top fairness keys, and its live workers.",
);
export const QueuePage = component('QueuePage', page(QueueView, 'Every queue with limits, active runs or live workers, by name; one page (nextCursor is null).'));
