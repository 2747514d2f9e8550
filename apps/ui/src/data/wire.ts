/**
 * The REST wire shapes the dashboard reads (the API's /v1 contract, as far as the pages use it). A
 * hand-kept copy, because the page must not bundle zod; test/ui/wire-types.spec.ts has the
 * compiler hold it to the declarations in libs/domain/src/wire (every response fits these types,
 * and no field here is wider than the one the API sends), and `npm run lint` type-checks that file.
 */
import type { RunEvent } from '../logic/run-story.js';

export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };
/** queued, running, sleeping and waiting (a durable function parked by ctx.sleep or ctx.waitForSignal) are active; the rest are terminal. */
export type RunState = 'queued' | 'running' | 'sleeping' | 'waiting' | 'succeeded' | 'failed' | 'cancelled' | 'dead';
export type RunOrigin = 'schedule' | 'manual' | 'retry' | 'backfill' | 'republish' | 'sensor' | 'event';
/** Deleted schedules are never sent. */
export type ScheduleStatus = 'active' | 'paused' | 'completed';
export type TickOutcome = 'triggered' | 'skipped' | 'missed' | 'error';
export type AttemptOutcome = 'succeeded' | 'failed' | 'cancelled' | 'lost' | 'drained' | 'handed_back' | 'parked';
export type OverlapPolicy = 'allow' | 'skip' | 'buffer_one' | 'buffer_all' | 'replace';
export type Target =
  | { type: 'handler'; name: string; queue: string }
  | { type: 'http'; url: string; method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'; headers: Record<string, string>; timeout: string };
export type RetryPolicy = { maxAttempts: number; backoff: { type: 'fixed' | 'exponential'; base: string; max: string; jitter: number } };
export type StepWhen = 'on_success' | 'always';
export type StepState = 'waiting' | 'queued' | 'running' | 'succeeded' | 'failed' | 'dead' | 'skipped' | 'cancelled';
/** ctx.step, ctx.sleep, ctx.waitForSignal or ctx.waitForEvent. */
export type CheckpointKind = 'step' | 'sleep' | 'signal' | 'event';
/** step: succeeded; sleep: sleeping, then woken; signal and event: waiting, then received or timed_out. */
export type CheckpointState = 'succeeded' | 'sleeping' | 'woken' | 'waiting' | 'received' | 'timed_out';
/**
 * Every reason code. The dashboard keeps a run's, a tick's and an event's as text, but the wire-type
 * check can leave a code out of its comparison only at the top of a response, so the code of a
 * step (nested in its run) is this closed set, held to the API's both ways by the same check.
 */
export type ReasonCode =
  | 'SUCCEEDED'
  | 'HANDLER_ERROR'
  | 'HANDLER_NON_RETRYABLE'
  | 'UNKNOWN_HANDLER'
  | 'NONDETERMINISTIC_REPLAY'
  | 'HTTP_5XX'
  | 'HTTP_4XX'
  | 'HTTP_RETRYABLE_STATUS'
  | 'HTTP_REDIRECT'
  | 'HTTP_NETWORK_ERROR'
  | 'TARGET_REFUSED'
  | 'TIMEOUT'
  | 'CANCELLED_BY_USER'
  | 'REPLACED_BY_OVERLAP'
  | 'SCHEDULE_DELETED'
  | 'SCHEDULE_PAUSED'
  | 'SCHEDULE_CHANGED'
  | 'POISONED'
  | 'STEP_FAILED'
  | 'UPSTREAM_FAILED'
  | 'CONCURRENCY_KEY_UNRESOLVED'
  | 'FLOW_KEY_UNRESOLVED'
  | 'RATE_LIMITED'
  | 'LEASE_EXPIRED'
  | 'LEASE_LOST'
  | 'RETRY_SCHEDULED'
  | 'OVERLAP_BUFFERED'
  | 'CONCURRENCY_LIMIT'
  | 'QUEUE_LIMIT'
  | 'QUEUE_RATE_LIMIT'
  | 'THROTTLED'
  | 'HANDLER_NOT_REGISTERED'
  | 'TRIGGERED'
  | 'OVERLAP_SKIPPED'
  | 'CATCHUP_NONE'
  | 'CATCHUP_SUPERSEDED'
  | 'CALENDAR_EXCLUDED'
  | 'CATCHUP_WINDOW_MISSED'
  | 'CATCHUP_LIMIT_EXCEEDED'
  | 'INVALID_DEFINITION'
  | 'SENSOR_CURSOR_MOVED'
  | 'SENSOR_RESULT_INVALID'
  | 'SENSOR_EVALUATION_FAILED'
  | 'SENSOR_EVALUATION_ABANDONED'
  | 'SCHEDULER_CRASHED'
  | 'SCHEDULER_STOPPED';

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

/** At most `limit` runs holding the key run at once; on a run the key is resolved from its payload. */
export interface Concurrency {
  key: string;
  limit: number;
}

/** One step of a multi-step definition, with its defaults filled in. */
export interface Step {
  name: string;
  dependsOn: string[];
  when: StepWhen;
  target: Target;
  /** Null: the run's (the schedule's). */
  retry: RetryPolicy | null;
  /** Null: the run's (the schedule's). */
  timeout: string | null;
  concurrency: Concurrency | null;
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

/** Which runs a bulk cancel or retry is for (POST /v1/runs/bulk); at least one field set. */
export interface RunBulkFilter {
  scheduleId?: string;
  state?: RunState[];
  reasonCode?: string;
  queue?: string;
  createdAfter?: string;
  createdBefore?: string;
}
export interface RunBulkRequest {
  action: 'cancel' | 'retry';
  filter: RunBulkFilter;
  dryRun?: boolean;
}
/** What a bulk action matched (the runs it acts on), did, and up to 10 of their ids. */
export interface RunBulkResult {
  matched: number;
  acted: number;
  sample: string[];
}
export interface Run {
  id: string;
  scheduleId: string | null;
  origin: RunOrigin;
  scheduledFor: string;
  /** Why the run has not started: while a limit holds it back, CONCURRENCY_LIMIT, QUEUE_LIMIT or QUEUE_RATE_LIMIT; while no worker of its version runs, VERSION_UNAVAILABLE. */
  deferReason: string | null;
  state: RunState;
  attempt: number;
  maxAttempts: number;
  /** Null for a multi-step run. */
  target: Target | null;
  /** The steps of a multi-step run, in declaration order; null for a single-target run. */
  steps: RunStep[] | null;
  /** For a step's own run: the multi-step run it belongs to. */
  parentRunId: string | null;
  /** For a step's own run: its step's name. */
  stepName: string | null;
  concurrency: Concurrency | null;
  sensorId: string | null;
  /** For a run an event started (origin event): the event; its payload carries it under `event`. */
  eventId: string | null;
  runKey: string | null;
  /** The checkpoints of the run's durable function, in the order they began (empty for any other run). */
  checkpoints: Checkpoint[];
  payload: JsonValue;
  result: JsonValue;
  error: Record<string, unknown> | null;
  reasonCode: string | null;
  reasonText: string | null;
  createdAt: string;
  startedAt: string | null;
  finishedAt: string | null;
  leaseEpoch: number;
  /** The last progress its handler reported (ctx.progress); null when it reported none. */
  progress: JsonValue;
  /** The version of the worker that claimed it (null before); once it stored a checkpoint, only that version's workers claim it. */
  version: string | null;
}

/** One step of a multi-step run and where it stands. */
export interface RunStep {
  name: string;
  dependsOn: string[];
  when: StepWhen;
  state: StepState;
  attempt: number;
  maxAttempts: number;
  /** What the step returned, once succeeded. */
  result: JsonValue;
  error: Record<string, unknown> | null;
  /** Set once the step is terminal (UPSTREAM_FAILED for a skipped step). */
  reasonCode: ReasonCode | null;
  reasonText: string | null;
  startedAt: string | null;
  finishedAt: string | null;
  /** The step's own run. */
  runId: string;
}

/** One checkpoint of a run's durable function. */
export interface Checkpoint {
  /** The step's name (ctx.step), `sleep#<n>` for the n-th ctx.sleep, `signal:<name>` for ctx.waitForSignal, the wait's name for ctx.waitForEvent. */
  name: string;
  kind: CheckpointKind;
  state: CheckpointState;
  /** A step's stored result, the signal's body, or the event received. */
  result: JsonValue;
  startedAt: string;
  finishedAt: string | null;
  /** A sleep's wake instant, or a wait's timeout. */
  wakeAt: string | null;
}

/** The answer to a signal sent to a run. */
export interface SignalResult {
  /** True when the run waited for it and resumes now; false when it is kept until the run asks. */
  delivered: boolean;
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

/** A queue of the namespace: its limits (null: none), its runs running, queued (due, not held) and held, and its live workers. */
export interface Queue {
  name: string;
  maxRunning: number | null;
  rate: { max: number; per: string } | null;
  running: number;
  queued: number;
  held: number;
  workers: number;
  updatedAt: string | null;
}

/** A version of the code on a queue: its live workers, the runs of the namespace it claimed that have not ended, and of those the ones waiting for it. */
export interface Version {
  queue: string;
  version: string;
  workers: number;
  activeRuns: number;
  pinnedWaiting: number;
}

/** The runs that ended in one bucket of GET /v1/stats/runs (by their finishedAt). */
export interface RunStatsBucket {
  start: string;
  succeeded: number;
  failed: number;
  dead: number;
  cancelled: number;
  durationP50Ms: number | null;
  durationP95Ms: number | null;
  latenessP95Ms: number | null;
}

export interface RunStats {
  buckets: RunStatsBucket[];
}

/** evaluating: the evaluation run has not ended; succeeded: what it asked for was committed; failed: nothing was; skipped: it was not started. */
export type SensorTickState = 'evaluating' | 'succeeded' | 'failed' | 'skipped';

/** One evaluation of a sensor and what came of it. */
export interface SensorTick {
  id: string;
  sensorId: string;
  /** The evaluation run. */
  runId: string;
  state: SensorTickState;
  requested: number;
  created: number;
  deduplicated: number;
  /** The runs created. */
  runIds: string[];
  cursorBefore: JsonValue;
  cursorAfter: JsonValue;
  reasonCode: string | null;
  reason: string | null;
  startedAt: string;
  finishedAt: string | null;
  durationMs: number | null;
}

/** A sensor: its definition with defaults filled in, its cursor, and its newest evaluation. */
export interface Sensor {
  id: string;
  name: string;
  every: string;
  /** The handler that evaluates it. */
  target: Extract<Target, { type: 'handler' }>;
  /** Of one evaluation. */
  timeout: string;
  /** What each run it asks for executes. */
  run: { target: Target | null; steps: Step[] | null; retry: RetryPolicy; timeout: string; concurrency: Concurrency | null };
  payload: JsonValue;
  paused: boolean;
  labels: Record<string, string>;
  cursor: JsonValue;
  cursorVersion: number;
  /** Null while paused. */
  nextEvaluationAt: string | null;
  evaluating: boolean;
  lastTick: SensorTick | null;
  source: string | null;
  createdAt: string;
  updatedAt: string;
}

/** The events a subscription may listen to. */
export type SubscriptionEventType =
  | 'run.succeeded'
  | 'run.failed'
  | 'run.dead'
  | 'schedule.created'
  | 'schedule.updated'
  | 'schedule.paused'
  | 'schedule.resumed'
  | 'schedule.deleted'
  | 'schedule.completed'
  | 'schedule.missed'
  | 'schedule.late'
  | 'schedule.recovered'
  | 'sensor.failed'
  | 'outage.detected'
  | 'subscription.disabled';
/** What a delivery carries: a subscribable event, or `ping`, a test sent to one subscription. */
export type DeliveredEventType = SubscriptionEventType | 'ping';
/** disabled: its deliveries failed for the whole retry window; nothing is delivered until it is resumed. */
export type SubscriptionState = 'active' | 'paused' | 'disabled';
/** pending: not taken yet (retried at nextAttemptAt); delivered: the endpoint answered 2xx; failed: given up. */
export type DeliveryState = 'pending' | 'delivered' | 'failed';

/** A webhook told of the namespace's events of the listed types that match its filter. */
export interface Subscription {
  id: string;
  url: string;
  events: SubscriptionEventType[];
  /** Empty lists and maps match everything. */
  filter: { scheduleIds: string[]; labels: Record<string, string> };
  format: 'json' | 'slack';
  description: string | null;
  state: SubscriptionState;
  /** Null unless disabled. */
  disabledReason: string | null;
  /** Since when its oldest undelivered event has been failing; null while deliveries succeed. */
  failingSince: string | null;
  createdAt: string;
  updatedAt: string;
}

/** One HTTP attempt of a delivery. */
export interface DeliveryAttempt {
  attempt: number;
  attemptedAt: string;
  /** Null when there was no answer (refused address, network error, timeout). */
  statusCode: number | null;
  latencyMs: number;
  /** Null when the endpoint took it (2xx). */
  error: string | null;
}

/** One event delivered, or being delivered, to a subscription. */
export interface SubscriptionDelivery {
  id: string;
  eventId: string;
  eventType: DeliveredEventType;
  state: DeliveryState;
  /** Oldest first. */
  attempts: DeliveryAttempt[];
  /** Null unless pending. */
  nextAttemptAt: string | null;
  /** The event as the json format delivers it: { id, type, occurredAt, namespace, data }. */
  body: Record<string, unknown>;
  createdAt: string;
  finishedAt: string | null;
}

/** The ping written by POST /v1/subscriptions/{id}/test; its delivery is listed with the others. */
export interface SubscriptionTestResult {
  eventId: string;
}

/** A named set of local dates the schedules that name it do not fire on: its own dates, and the public holidays of a country (and state and region). */
export interface Calendar {
  name: string;
  /** Ascending. */
  dates: string[];
  holidays: { country: string; state: string | null; region: string | null } | null;
  description: string | null;
  /** How many schedules name it. */
  schedules: number;
  createdAt: string;
  updatedAt: string;
}

/** One date a calendar excludes: a holiday's name, or null for one of its own dates. */
export interface CalendarDate {
  date: string;
  holiday: string | null;
}

/** The dates a calendar excludes between from and to (inclusive), ascending. */
export interface CalendarDates {
  from: string;
  to: string;
  items: CalendarDate[];
}

/** The events that start a schedule: their name, and the values they must match (dotted paths into the event; empty: every event of the name). */
export interface EventTrigger {
  event: string;
  match: Record<string, JsonValue>;
}

/** A schedule the event matched that made no run for it, and why (SCHEDULE_PAUSED, OVERLAP_SKIPPED). */
export interface EventSkip {
  scheduleId: string;
  reasonCode: ReasonCode;
}

/** An event an application sent (POST /v1/events), with the runs it started, the schedules it skipped and the waits it resumed. Not the DOM's Event. */
export interface KairosEvent {
  id: string;
  name: string;
  data: JsonValue;
  receivedAt: string;
  /** True when its id was seen before: this is the first event with it, and nothing ran again. */
  deduped: boolean;
  runs: string[];
  skipped: EventSkip[];
  /** The runs waiting for it (ctx.waitForEvent) that it resumed. */
  resumed: string[];
}
