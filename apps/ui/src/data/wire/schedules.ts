/** Schedules: a schedule as the API sends it, its flow control and calendar rule, its preview, ticks and versions. */
import type { Concurrency, Fairness, JsonValue, OverlapPolicy, RetryPolicy, ScheduleStatus, Step, Target, TickOutcome } from './shared.js';
import type { EventTrigger } from './events.js';

export interface Schedule {
  id: string;
  name: string;
  cron: string | null;
  every: string | null;
  at: string | null;
  /** The events that start it; null for a schedule of the clock (then one of cron, every or at is set). */
  on: EventTrigger | null;
  /** Flow control of a schedule started by events; each null when not declared (always for a schedule of the clock). */
  debounce: Debounce | null;
  throttle: WindowLimit | null;
  rateLimit: WindowLimit | null;
  batch: Batch | null;
  timezone: string;
  dst: { gap: 'auto' | 'shift' | 'skip'; overlap: 'auto' | 'first' | 'last' | 'both' };
  catchup: { mode: 'none' | 'latest' | 'all'; window: string | null; limit: number | null };
  overlap: OverlapPolicy;
  /** Null when it runs steps. */
  target: Target | null;
  /** Null when it runs one target. */
  steps: Step[] | null;
  payload: JsonValue;
  retry: RetryPolicy;
  timeout: string;
  concurrency: Concurrency | null;
  /** Each run's priority, 1 (first) to 5. */
  priority: number;
  /** Each run's fairness key (a template over the payload) and weight; null: none. */
  fairness: Fairness | null;
  startAt: string | null;
  endAt: string | null;
  maxRuns: number | null;
  jitter: string;
  /** What each slot's run must do; null: nothing is expected. */
  expect: { succeededWithin: string } | null;
  /** The first late slot of a lateness under way; null while the schedule keeps its deadlines. */
  lateSince: string | null;
  /** The local dates it does not fire on; null: every date. */
  calendar: CalendarRule | null;
  labels: Record<string, string>;
  status: ScheduleStatus;
  nextFireAt: string | null;
  lastFireAt: string | null;
  fireCount: number;
  createdAt: string;
  updatedAt: string;
}

/** One run per key once `period` passed without a new event (the last wins), at most `maxWait` after the first. Key: a template over the event; null: one key for the schedule. */
export interface Debounce {
  key: string | null;
  period: string;
  maxWait: string | null;
}

/** At most `limit` runs per key in any window of `period`: throttle, start (the others wait); rateLimit, made (the other events make none). */
export interface WindowLimit {
  key: string | null;
  limit: number;
  period: string;
}

/** Events gathered per key into one run when `maxSize` are in, or `timeout` after the first. */
export interface Batch {
  key: string | null;
  maxSize: number;
  timeout: string;
}

/** skip: an excluded date fires nothing (one CALENDAR_EXCLUDED tick records it); previous / next: its slots move to the nearest allowed date before / after it, at the same local time. */
export type OnExcluded = 'skip' | 'previous' | 'next';

/** The dates a schedule does not fire on: the calendars it excludes, and Saturdays and Sundays if weekdaysOnly (each slot's local date in the schedule's zone). */
export interface CalendarRule {
  exclude: string[];
  weekdaysOnly: boolean;
  onExcluded: OnExcluded;
}

/** The next fire instants of a schedule, and (when it has a calendar) the local dates (YYYY-MM-DD, in its zone) the calendar kept clear up to the last of them (skip only). */
export interface Preview {
  fireTimes: string[];
  excludedDates?: string[];
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
