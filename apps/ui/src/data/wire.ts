/** The REST wire shapes the dashboard reads (the API's /v1 contract, as far as the pages use it). */
import type { RunEvent } from '../logic/run-story.js';

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
  dst: { gap: string; overlap: string };
  catchup: { mode: string; window: string | null; limit: number | null };
  overlap: string;
  target: Record<string, unknown>;
  payload: unknown;
  retry: { maxAttempts: number; backoff: { type: string; base: string; max: string; jitter: number } };
  timeout: string;
  startAt: string | null;
  endAt: string | null;
  maxRuns: number | null;
  jitter: string;
  labels: Record<string, string>;
  status: string;
  nextFireAt: string | null;
  lastFireAt: string | null;
  fireCount: number;
  createdAt: string;
  updatedAt: string;
}

export interface Tick {
  scheduledFor: string;
  outcome: string;
  reasonCode: string | null;
  runId: string | null;
}

export interface Run {
  id: string;
  scheduleId: string | null;
  origin: string;
  scheduledFor: string;
  state: string;
  attempt: number;
  maxAttempts: number;
  target: Record<string, unknown>;
  payload: unknown;
  result: unknown;
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
  outcome: string | null;
  reasonCode: string | null;
  error: Record<string, unknown> | null;
  response: Record<string, unknown> | null;
}

export type RunWithAttempts = Run & { attempts: Attempt[] };
export type { RunEvent };

export interface Cluster {
  leader: { holder: string; epoch: number; expiresAt: string; live: boolean } | null;
  sessions: { holder: string; startedAt: string; lastSeenAt: string }[];
  runs: Record<string, number>;
  queue: Record<string, number>;
  outages: { startedAt: string; endedAt: string | null }[];
}

export interface Worker {
  id: string;
  queue: string;
  handlers: string[];
  version: string;
  startedAt: string;
  lastSeenAt: string;
}
