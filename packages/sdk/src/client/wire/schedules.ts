/** Schedules: a definition's fields and body, a schedule as the API sends it, its calendar rule, ticks, triggers, backfills and previews. */
import type { Concurrency, DurationInput, Executable, Fairness, FairnessInput, Instant, JsonValue, OverlapPolicy, RetryPolicy, RetryPolicyInput, ScheduleStatus, Step, StepInput, Target, TargetInput } from './shared.js';
import type { Run } from './runs.js';
import type { Batch, BatchInput, Debounce, DebounceInput, EventTrigger, EventTriggerInput, WindowLimit, WindowLimitInput } from './events.js';

/** A schedule definition's fields but what it executes (see ScheduleInput). */
export interface ScheduleFields {
  name?: string;
  cron?: string;
  every?: DurationInput;
  at?: string;
  in?: DurationInput;
  /** Started by events instead of the clock (instead of cron, every, at or in): see EventTriggerInput. */
  on?: EventTriggerInput;
  /** With `on` only: one run per key once `period` passed without a new event (the last wins). Not with batch or throttle. */
  debounce?: DebounceInput | null;
  /** With `on` only: every event gets its run, at most `limit` starting per key in any window of `period` (the others wait, THROTTLED). Not with debounce or batch. */
  throttle?: WindowLimitInput | null;
  /** With `on` only: at most `limit` runs made per key in any window of `period`; further events make none (skipped RATE_LIMITED). */
  rateLimit?: WindowLimitInput | null;
  /** With `on` only: events gathered per key into one run (payload `events`, in order) of up to `maxSize`, or `timeout` after the first. Not with debounce. */
  batch?: BatchInput | null;
  timezone?: string;
  dst?: { gap?: 'auto' | 'shift' | 'skip'; overlap?: 'auto' | 'first' | 'last' | 'both' };
  catchup?: { mode?: 'none' | 'latest' | 'all'; window?: DurationInput | null; limit?: number | null };
  overlap?: OverlapPolicy;
  payload?: JsonValue;
  retry?: RetryPolicyInput;
  timeout?: DurationInput;
  /** Each run's priority, 1 (starts first) to 5. Default 3. */
  priority?: number | null;
  /** A fairness key over the payload (e.g. "tenant-{{payload.tenantId}}") and its weight, given to every run. Default: none. */
  fairness?: FairnessInput | null;
  startAt?: string | null;
  endAt?: string | null;
  maxRuns?: number | null;
  jitter?: DurationInput;
  paused?: boolean;
  idempotencyKey?: string;
  labels?: Record<string, string>;
  /**
   * A deadline for each slot's run: one that has not succeeded `succeededWithin` (1s to 30d) after
   * its slot makes the schedule late (`schedule.late` to the subscriptions). Default none.
   */
  expect?: { succeededWithin: DurationInput } | null;
  /** The local dates (in its timezone) it does not fire on. Default none. */
  calendar?: CalendarRuleInput | null;
}
export type ScheduleInput = ScheduleFields & Executable;
/** PATCH: the given fields replace the stored ones. To switch between target and steps, give the new one and null for the other. */
export type SchedulePatch = Partial<ScheduleFields> & { target?: TargetInput | null; steps?: StepInput[] | null };

export interface Schedule {
  id: string;
  name: string;
  cron: string | null;
  every: string | null;
  at: Instant | null;
  /** The events that start it; null for a schedule of the clock. */
  on: EventTrigger | null;
  /** Flow control of a schedule started by events; each null when not declared. */
  debounce: Debounce | null;
  throttle: WindowLimit | null;
  rateLimit: WindowLimit | null;
  batch: Batch | null;
  timezone: string;
  dst: { gap: string; overlap: string };
  catchup: { mode: string; window: string | null; limit: number | null };
  overlap: OverlapPolicy;
  /** Null when it runs steps. */
  target: Target | null;
  /** Null when it runs one target. */
  steps: Step[] | null;
  payload: JsonValue | null;
  retry: RetryPolicy;
  timeout: string;
  concurrency: Concurrency | null;
  /** Each run's priority: 1 starts first, 5 last. */
  priority: number;
  /** Each run's fairness key (a template over the payload) and weight; null: none. */
  fairness: Fairness | null;
  startAt: Instant | null;
  endAt: Instant | null;
  maxRuns: number | null;
  jitter: string;
  /** Null: nothing is expected of its runs. */
  expect: { succeededWithin: string } | null;
  /** Null: it fires on every date. */
  calendar: CalendarRule | null;
  /** The first late slot of a lateness under way; null while the schedule keeps its deadlines. */
  lateSince: Instant | null;
  paused: boolean;
  idempotencyKey: string | null;
  labels: Record<string, string>;
  status: ScheduleStatus;
  nextFireAt: Instant | null;
  lastFireAt: Instant | null;
  fireCount: number;
  createdAt: Instant;
  updatedAt: Instant;
  deduped: boolean;
}

/** skip: an excluded date fires nothing (one tick CALENDAR_EXCLUDED records it); previous / next: its slots move to the nearest allowed date before / after it, at the same local time. */
export type OnExcluded = 'skip' | 'previous' | 'next';
/** The dates a schedule does not fire on: each slot's local date, in the schedule's timezone, is tested. */
export interface CalendarRuleInput {
  /** Names of the namespace's calendars (at least one, unless weekdaysOnly). */
  exclude?: string[] | null;
  /** Saturdays and Sundays are excluded too. Default false. */
  weekdaysOnly?: boolean | null;
  /** Default skip. */
  onExcluded?: OnExcluded | null;
}
/** A schedule's calendar rule, with its defaults filled in. */
export interface CalendarRule {
  exclude: string[];
  weekdaysOnly: boolean;
  onExcluded: OnExcluded;
}

export interface ScheduleListFilter {
  status?: ScheduleStatus;
  name?: string;
  /** `key:value` */
  label?: string;
  /** Page size. */
  limit?: number;
}

export interface TriggerInput {
  overlap?: OverlapPolicy;
  payload?: JsonValue;
}
export interface BackfillInput {
  from: string;
  to: string;
  overlap?: OverlapPolicy;
}
export interface BackfillResult {
  slots: number;
  created: number;
  alreadyTicked: number;
  runs: Run[];
}

export interface Tick {
  scheduledFor: Instant;
  outcome: string;
  reasonCode: string | null;
  reasonText: string | null;
  runId: string | null;
  origin: string;
  createdAt: Instant;
}

export interface Preview {
  fireTimes: Instant[];
  /** Present when the schedule has a calendar: the local dates (YYYY-MM-DD, in its timezone) up to the last fire listed that the calendar kept clear (onExcluded skip). */
  excludedDates?: string[];
}
export interface CronPreviewInput {
  cron?: string;
  every?: DurationInput;
  timezone?: string;
  dst?: ScheduleInput['dst'];
  startAt?: string;
  after?: string;
  count?: number;
}
