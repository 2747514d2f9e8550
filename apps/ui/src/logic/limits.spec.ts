import { describe, expect, it } from 'vitest';
import type { Queue } from '../data/wire/index.js';
import { holdInWords, holdOf, queueLoad, queueOf, rateInWords } from './limits.js';

const queue = (fields: Partial<Queue> = {}): Queue => ({
  name: 'q1',
  maxRunning: 3,
  rate: null,
  running: 3,
  queued: 0,
  held: 2,
  workers: 1,
  updatedAt: null,
  queuedByPriority: [1, 2, 3, 4, 5].map((priority) => ({ priority, queued: 0 })),
  fairnessKeys: [],
  ...fields,
});
const handler = { type: 'handler', name: 'work', queue: 'q1' } as const;

describe('queue load and rate', () => {
  it('tells running against the limit, capped at full', () => {
    expect(queueLoad({ running: 2, maxRunning: 4 })).toEqual({ fraction: 0.5, words: '2 of at most 4 running' });
    expect(queueLoad({ running: 6, maxRunning: 4 }).fraction).toBe(1);
    expect(queueLoad({ running: 7, maxRunning: null })).toEqual({ fraction: null, words: '7 running, no limit' });
    expect(rateInWords({ max: 100, per: '1m' })).toBe('100 per 1m');
    expect(rateInWords(null)).toBe('none');
  });
});

describe('held runs', () => {
  it('is held only while active, not running, with a limit as its defer reason', () => {
    expect(holdOf({ state: 'queued', deferReason: 'QUEUE_LIMIT' })).toBe('QUEUE_LIMIT');
    expect(holdOf({ state: 'waiting', deferReason: 'CONCURRENCY_LIMIT' })).toBe('CONCURRENCY_LIMIT');
    expect(holdOf({ state: 'queued', deferReason: 'retry backoff' })).toBeNull();
    expect(holdOf({ state: 'queued', deferReason: null })).toBeNull();
    expect(holdOf({ state: 'running', deferReason: 'QUEUE_LIMIT' })).toBeNull();
    expect(holdOf({ state: 'succeeded', deferReason: 'QUEUE_RATE_LIMIT' })).toBeNull();
  });

  it('names the limit, the queue or key, and when the run starts', () => {
    expect(queueOf(handler)).toBe('q1');
    expect(queueOf(null)).toBe('default');
    expect(holdInWords('QUEUE_LIMIT', { target: handler, concurrency: null }, queue())).toBe(
      'Held back by the limit of queue "q1": at most 3 of its runs run at once (3 running now, 2 held). It starts, oldest first, as soon as a place frees.',
    );
    expect(holdInWords('QUEUE_LIMIT', { target: handler, concurrency: null }, null)).toMatch(/^Held back by the limit of queue "q1": its places are taken\./);
    expect(holdInWords('QUEUE_RATE_LIMIT', { target: handler, concurrency: null }, queue({ rate: { max: 100, per: '1m' } }))).toBe(
      'Held back by the rate limit of queue "q1": at most 100 of its runs start per 1m. It starts, oldest first, as soon as the window has room.',
    );
    expect(holdInWords('CONCURRENCY_LIMIT', { target: handler, concurrency: { key: 'customer-42', limit: 1 } }, null)).toBe(
      'Held back by its concurrency key "customer-42" (limit 1): another run holding the key is running. It starts, oldest first, as soon as one of them ends.',
    );
    expect(holdInWords('CONCURRENCY_LIMIT', { target: handler, concurrency: { key: 'k', limit: 3 } }, null)).toMatch(/3 runs holding the key are running/);
  });

  it("tells a run waiting for its fairness key's turn which key, within which priority, and how many of the key wait", () => {
    expect(holdOf({ state: 'queued', deferReason: 'FAIR_SHARE' })).toBe('FAIR_SHARE');
    const run = { target: handler, concurrency: null, priority: 1, fairnessKey: 'tenant-a' };
    expect(holdInWords('FAIR_SHARE', run, queue({ fairnessKeys: [{ key: 'tenant-b', queued: 9 }, { key: 'tenant-a', queued: 4 }] }))).toBe(
      'Waiting for the turn of its fairness key "tenant-a" on queue "q1" (4 runs of the key queued now): among the due runs of priority 1 (first), the fairness keys take starts in proportion to their weights. It starts, oldest of its key first, when its key\'s turn comes.',
    );
    expect(holdInWords('FAIR_SHARE', run, null)).toMatch(/^Waiting for the turn of its fairness key "tenant-a" on queue "q1": among/);
    expect(holdInWords('FAIR_SHARE', { ...run, fairnessKey: null, priority: 3 }, queue())).toMatch(/^Waiting for the turn of the one key of runs without a key on queue "q1": among the due runs of priority 3 \(normal\)/);
  });
});
