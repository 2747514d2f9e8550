/**
 * The REST wire shapes the dashboard reads (the API's /v1 contract, as far as the pages use it). A
 * hand-kept copy, because the page must not bundle zod; test/ui/wire-types.spec.ts has the
 * compiler hold it to the declarations in libs/domain/src/wire (every response fits these types,
 * and no field here is wider than the one the API sends), and `npm run lint` type-checks that file.
 */
import type { RunEvent } from '../logic/run-story.js';

export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };
export type RunState = 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled' | 'dead';
export type RunOrigin = 'schedule' | 'manual' | 'retry' | 'backfill' | 'republish';
/** Deleted schedules are never sent. */
export type ScheduleStatus = 'active' | 'paused' | 'completed';
export type TickOutcome = 'triggered' | 'skipped' | 'missed' | 'error';
export type AttemptOutcome = 'succeeded' | 'failed' | 'cancelled' | 'lost' | 'drained' | 'handed_back';
export type OverlapPolicy = 'allow' | 'skip' | 'buffer_one' | 'buffer_all' | 'replace';
export type Target =
  | { type: 'handler'; name: string; queue: string }
  | { type: 'http'; url: string; method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'; headers: Record<string, string>; timeout: string };

export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

export type Scope = 'read' | 'write' | 'admin';

export interface WhoAmI {
  namespaceId: string;
  actor: string;
  scopes: Scope[];
}

export interface Schedule {
  id: string;
  name: string;
  cron: string | null;
  every: string | null;
  at: string | null;
  timezone: string;
  dst: { gap: 'auto' | 'shift' | 'skip'; overlap: 'auto' | 'first' | 'last' | 'both' };
  catchup: { mode: 'none' | 'latest' | 'all'; window: string | null; limit: number | null };
  overlap: OverlapPolicy;
  target: Target;
  payload: JsonValue;
  retry: { maxAttempts: number; backoff: { type: 'fixed' | 'exponential'; base: string; max: string; jitter: number } };
  timeout: string;
  startAt: string | null;
  endAt: string | null;
  maxRuns: number | null;
  jitter: string;
  labels: Record<string, string>;
  status: ScheduleStatus;
  nextFireAt: string | null;
  lastFireAt: string | null;
  fireCount: number;
  createdAt: string;
  updatedAt: string;
}

export interface Tick {
  scheduledFor: string;
  outcome: TickOutcome;
  reasonCode: string;
  runId: string | null;
}

/** One version of a schedule's definition and the change that made it. */
export interface ScheduleVersion {
  version: number;
  source: string | null;
  actor: string;
  appliedAt: string;
  changes: { field: string; from: JsonValue; to: JsonValue }[];
}

export interface Run {
  id: string;
  scheduleId: string | null;
  origin: RunOrigin;
  scheduledFor: string;
  state: RunState;
  attempt: number;
  maxAttempts: number;
  target: Target;
  payload: JsonValue;
  result: JsonValue;
  error: Record<string, unknown> | null;
  reasonCode: string | null;
  reasonText: string | null;
  createdAt: string;
  startedAt: string | null;
  finishedAt: string | null;
  leaseEpoch: number;
}

export interface Attempt {
  attempt: number;
  leaseEpoch: number;
  worker: string;
  startedAt: string;
  finishedAt: string | null;
  outcome: AttemptOutcome | null;
  reasonCode: string | null;
  error: Record<string, unknown> | null;
  response: Record<string, unknown> | null;
}

export type RunWithAttempts = Run & { attempts: Attempt[] };
export type { RunEvent };

export interface Cluster {
  leader: { holder: string; epoch: number; expiresAt: string; live: boolean } | null;
  sessions: { holder: string; startedAt: string; lastSeenAt: string }[];
  schedulers: { holder: string; hostname: string; pid: number; live: boolean; clockOffsetMs: number | null }[];
  runs: Record<string, number>;
  queue: Record<string, number>;
  outages: { startedAt: string; endedAt: string }[];
}

export interface Worker {
  id: string;
  queue: string;
  handlers: string[];
  version: string;
  startedAt: string;
  lastSeenAt: string;
  clockOffsetMs: number | null;
}
