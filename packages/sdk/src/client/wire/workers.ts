/** Workers and queues: the live workers, the versions of the code they run, the queues' limits, and worker credentials. */
import type { DurationInput, Instant } from './shared.js';

export interface Worker {
  id: string;
  queue: string;
  handlers: string[];
  version: string;
  startedAt: Instant;
  lastSeenAt: Instant;
}

/** A version of the code on a queue: its live workers and the runs that need it. When activeRuns is 0 its last worker may be stopped. */
export interface Version {
  queue: string;
  /** The workers' version (KairosWorker's `version`). */
  version: string;
  /** Live workers of the queue running this version: seen in the last minute and not stopped. */
  workers: number;
  /** Runs of the namespace on the queue claimed by this version that have not ended. */
  activeRuns: number;
  /** Of those, the runs held until a worker of their version runs (deferReason VERSION_UNAVAILABLE). */
  pinnedWaiting: number;
}

/** A queue's limits (PUT /v1/queues/:name): an absent or null field lifts its limit; neither clears the queue's limits. */
export interface QueueLimitsInput {
  /** At most this many runs of the queue run at once in the namespace (1 to 100,000). */
  maxRunning?: number | null;
  /** At most `max` (1 to 1,000,000) runs of the queue start in any window of `per` (100ms to 1d). */
  rate?: { max: number; per: DurationInput } | null;
}
/** A queue of the namespace: its limits, its runs running, queued (due, not held) and held back, what waits on it by priority and fairness key, and its live workers. */
export interface Queue {
  name: string;
  /** Null: no limit. */
  maxRunning: number | null;
  /** Null: no rate limit. */
  rate: { max: number; per: string } | null;
  running: number;
  queued: number;
  held: number;
  /** Its runs in state queued (due or not, held or not) by priority: five items, priority 1 (starts first) to 5. */
  queuedByPriority: { priority: number; queued: number }[];
  /** The (at most 10) fairness keys with the most of its queued runs, most first, ties by key; runs without a key are left out. */
  fairnessKeys: { key: string; queued: number }[];
  /** Live workers of the queue: seen in the last minute and not stopped. */
  workers: number;
  /** When its limits were last set; null without limits. */
  updatedAt: Instant | null;
}

/** A login that may call only the worker protocol, for one namespace and its queues. */
export interface WorkerCredential {
  role: string;
  namespace: string;
  queues: string[];
  createdAt: Instant;
  /** An API key prefix, or `cli`. */
  createdBy: string;
}

/** A worker credential just granted: its URLs carry the password, shown only in this answer. */
export interface IssuedWorkerCredential extends WorkerCredential {
  /** The worker's DATABASE_URL. */
  databaseUrl: string;
  /** The worker's Redis user (its REDIS_URL); null when the queues live in Postgres. */
  redis: { user: string; url: string; command: string; applied: boolean } | null;
  /** The worker protocol versions the server serves. */
  protocol: { oldest: number; newest: number };
}
