/**
 * The REST API's request and response shapes, as the client sends and receives them. Every type
 * the client uses lives in this one module, so it can be replaced wholesale by types derived from
 * the API's own schemas.
 */

export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };
/** A duration: "90s", "15m", "1h30m", or integer milliseconds. */
export type DurationInput = string | number;
/** An instant in UTC, ISO 8601 with Z. */
export type Instant = string;

export type OverlapPolicy = 'allow' | 'skip' | 'buffer_one' | 'buffer_all' | 'replace';
/** queued, running, sleeping and waiting (a durable function parked by ctx.sleep or ctx.waitForSignal) are active; the rest are terminal. */
export type RunState = 'queued' | 'running' | 'sleeping' | 'waiting' | 'succeeded' | 'failed' | 'cancelled' | 'dead';
/** event: started by an event a schedule's `on` matched (its payload carries the event under `event`). */
export type RunOrigin = 'schedule' | 'manual' | 'retry' | 'backfill' | 'republish' | 'sensor' | 'event';
/** on_success: a step runs once every step it depends on succeeded (else it is skipped); always: once they all ended. */
export type StepWhen = 'on_success' | 'always';
/** waiting: a step it depends on has not ended; failed: an attempt failed and another will follow; skipped: it never became runnable. */
export type StepState = 'waiting' | 'queued' | 'running' | 'succeeded' | 'failed' | 'dead' | 'skipped' | 'cancelled';
export type ScheduleStatus = 'active' | 'paused' | 'completed';
export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface HandlerTarget {
  type: 'handler';
  name: string;
  /** Default "default". */
  queue?: string;
}
export interface HttpTargetInput {
  type: 'http';
  url: string;
  method?: HttpMethod;
  headers?: Record<string, string>;
  timeout?: DurationInput;
}
export type TargetInput = HandlerTarget | HttpTargetInput;
export type Target = Required<HandlerTarget> | { type: 'http'; url: string; method: HttpMethod; headers: Record<string, string>; timeout: string };

export interface RetryPolicyInput {
  maxAttempts?: number;
  backoff?: { type?: 'fixed' | 'exponential'; base?: DurationInput; max?: DurationInput; jitter?: number };
}
export interface RetryPolicy {
  maxAttempts: number;
  backoff: { type: 'fixed' | 'exponential'; base: string; max: string; jitter: number };
}

/** At most `limit` runs holding the key run at once; on a run the key is resolved from its payload. */
export interface Concurrency {
  key: string;
  limit: number;
}

/** One step of a multi-step run. */
export interface StepInput {
  /** Unique in the run: 1 to 64 of a-z, 0-9, "_" and "-". */
  name: string;
  /** The steps of the same list that must end before this one starts. Default: none (it starts with the run). */
  dependsOn?: string[];
  /** Default on_success. */
  when?: StepWhen;
  target: TargetInput;
  /** Default: the run's (the schedule's). */
  retry?: RetryPolicyInput;
  /** Of each attempt of this step. Default: the run's (the schedule's). */
  timeout?: DurationInput;
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

/**
 * What a schedule or a run executes, exactly one of: a target (one call), or steps (a graph of
 * calls; steps without a path between them run in parallel).
 */
export type Executable = { target: TargetInput; steps?: null } | { steps: StepInput[]; target?: null };

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

/** An ad-hoc run's fields but what it executes (see RunInput). */
export interface RunFields {
  payload?: JsonValue;
  retry?: RetryPolicyInput;
  timeout?: DurationInput;
  availableAt?: string;
  idempotencyKey?: string;
}
export type RunInput = RunFields & Executable;

/** One step of a multi-step run, frozen when the run was created, and where it stands. */
export interface RunStep {
  name: string;
  dependsOn: string[];
  when: StepWhen;
  state: StepState;
  attempt: number;
  maxAttempts: number;
  /** What the step returned, once succeeded: the `inputs` of the steps after it. */
  result: JsonValue | null;
  error: Record<string, unknown> | null;
  /** Set once the step is terminal (UPSTREAM_FAILED for a skipped step). */
  reasonCode: string | null;
  reasonText: string | null;
  startedAt: Instant | null;
  finishedAt: Instant | null;
  /** The step's own run (its events tell its story). */
  runId: string;
}

/** ctx.step, ctx.sleep, ctx.waitForSignal or ctx.waitForEvent. */
export type CheckpointKind = 'step' | 'sleep' | 'signal' | 'event';
/** step: succeeded; sleep: sleeping, then woken; signal and event: waiting, then received or timed_out. */
export type CheckpointState = 'succeeded' | 'sleeping' | 'woken' | 'waiting' | 'received' | 'timed_out';
/** One checkpoint of a run's durable function. */
export interface Checkpoint {
  /** The step's name (ctx.step), `sleep#<n>` for the n-th ctx.sleep, `signal:<name>` for ctx.waitForSignal, `event:<name>` (`event:<name>#<n>`) for ctx.waitForEvent. */
  name: string;
  kind: CheckpointKind;
  state: CheckpointState;
  /** A step's stored result, the signal's body, or the event received. */
  result: JsonValue;
  startedAt: Instant;
  finishedAt: Instant | null;
  /** A sleep's wake instant, or a wait's timeout. */
  wakeAt: Instant | null;
}
/** A signal sent to a run (runs.signal). */
export interface SignalResult {
  /** True when the run was waiting for this signal and resumes now; false when it is kept until the run asks for it. */
  delivered: boolean;
}

export interface Run {
  id: string;
  scheduleId: string | null;
  origin: RunOrigin;
  sourceRunId: string | null;
  scheduledFor: Instant;
  availableAt: Instant | null;
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
  runKey: string | null;
  /** For a run an event started (origin event): the event; its payload carries it under `event`. */
  eventId: string | null;
  /** The checkpoints of the run's durable function (ctx.step, ctx.sleep, ctx.waitForSignal), in the order they began. */
  checkpoints: Checkpoint[];
  retry: RetryPolicy;
  payload: JsonValue | null;
  result: JsonValue | null;
  error: Record<string, unknown> | null;
  reasonCode: string | null;
  reasonText: string | null;
  crashCount: number;
  cancelRequestedAt: Instant | null;
  idempotencyKey: string | null;
  createdAt: Instant;
  startedAt: Instant | null;
  finishedAt: Instant | null;
  leaseEpoch: number;
  /** The last progress its handler reported (ctx.progress, any JSON up to 64 KiB); null when it reported none. */
  progress: JsonValue | null;
  /**
   * The version of the worker that claimed it; null before its first claim. Once it stored a
   * checkpoint it is pinned to it: only workers of that version (or upgrade "auto" ones) claim it;
   * runs.moveVersion moves it.
   */
  version: string | null;
}
export interface RunCreated extends Run {
  deduped: boolean;
}
export interface Attempt {
  attempt: number;
  leaseEpoch: number;
  worker: string;
  startedAt: Instant;
  finishedAt: Instant | null;
  outcome: 'succeeded' | 'failed' | 'cancelled' | 'lost' | 'drained' | 'handed_back' | 'parked' | null;
  reasonCode: string | null;
  error: Record<string, unknown> | null;
  response: Record<string, unknown> | null;
}
export interface RunDetail extends Run {
  attempts: Attempt[];
}
export interface RunEvent {
  id: number;
  at: Instant;
  kind: string;
  fromState: RunState | null;
  toState: RunState | null;
  leaseEpoch: number | null;
  actor: string;
  reasonCode: string | null;
  detail: Record<string, unknown>;
}
export interface RunListFilter {
  scheduleId?: string;
  state?: RunState;
  limit?: number;
}
/** Which runs a bulk cancel or retry is for (at least one field set); a step of a multi-step run is matched through its run. */
export interface RunBulkFilter {
  scheduleId?: string | null;
  state?: RunState[] | null;
  /** A reason code of the catalogue: a deferred run's defer reason, an ended run's verdict. */
  reasonCode?: string | null;
  queue?: string | null;
  /** Created at or after this instant (ISO 8601 with an offset). */
  createdAfter?: string | null;
  /** Created before this instant. */
  createdBefore?: string | null;
}
export interface RunBulkInput {
  /** cancel: the active runs matched; retry: those POST /v1/runs/:id/retry accepts (failed, dead or cancelled). */
  action: 'cancel' | 'retry';
  filter: RunBulkFilter;
  /** Count and sample, change nothing. Default false. */
  dryRun?: boolean | null;
}
export interface RunBulkResult {
  /** Runs the filter matched that the action acts on. */
  matched: number;
  /** Runs cancelled (or asked to stop) or retried; 0 on a dry run. */
  acted: number;
  /** Up to 10 ids of runs acted on (a dry run: that would be), oldest first. */
  sample: string[];
}
export interface DeadLetterFilter {
  scheduleId?: string;
  limit?: number;
}

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
/** A queue of the namespace: its limits, its runs running, queued (due, not held) and held back by a limit, and its live workers. */
export interface Queue {
  name: string;
  /** Null: no limit. */
  maxRunning: number | null;
  /** Null: no rate limit. */
  rate: { max: number; per: string } | null;
  running: number;
  queued: number;
  held: number;
  /** Live workers of the queue: seen in the last minute and not stopped. */
  workers: number;
  /** When its limits were last set; null without limits. */
  updatedAt: Instant | null;
}

/** How each run a sensor asks for runs (what it executes is `target` or `steps`, see SensorRunInput). */
export interface SensorRunFields {
  retry?: RetryPolicyInput;
  /** Of each attempt; at most 24h. Default 5m. */
  timeout?: DurationInput;
  /** A concurrency key over each run's payload (e.g. "customer-{{payload.customerId}}") and its limit (default 1). */
  concurrency?: { key: string; limit?: number } | null;
}
/** What each run a sensor asks for executes: exactly one of target or steps. Its payload is what the evaluation asked with. */
export type SensorRunInput = SensorRunFields & Executable;

/** A sensor's fields but what its runs execute (see SensorInput). */
export interface SensorFields {
  /** Unique per namespace. */
  name: string;
  /** How often the sensor is evaluated; at least 1s. */
  every: DurationInput;
  /** The handler that evaluates it: it gets the cursor and payload and answers { runs: [{ runKey, payload }], cursor }. */
  target: HandlerTarget;
  /** Of one evaluation; at most 1h. Default 1m. */
  timeout?: DurationInput;
  /** Passed to each evaluation. */
  payload?: JsonValue;
  /** Default false. */
  paused?: boolean;
  labels?: Record<string, string>;
}
/** POST /v1/sensors. */
export type SensorInput = SensorFields & { run: SensorRunInput };
/** PATCH: the given fields replace the stored ones (`run` field by field; a new target replaces stored steps and vice versa). The cursor stays. */
export type SensorPatch = Partial<SensorFields> & { run?: SensorRunFields & { target?: TargetInput | null; steps?: StepInput[] | null } };

/** What each run a sensor asks for executes, with its defaults filled in. */
export interface SensorRun {
  /** Null when it runs steps. */
  target: Target | null;
  /** Null when it runs one target. */
  steps: Step[] | null;
  retry: RetryPolicy;
  timeout: string;
  concurrency: Concurrency | null;
}

export type SensorTickState = 'evaluating' | 'succeeded' | 'failed' | 'skipped';

/** One evaluation of a sensor and what came of it. */
export interface SensorTick {
  id: string;
  sensorId: string;
  /** The evaluation run. */
  runId: string;
  state: SensorTickState;
  /** Runs the evaluation asked for, runs created for it, and runs asked for by a run key asked for before. */
  requested: number;
  created: number;
  deduplicated: number;
  /** The runs created. */
  runIds: string[];
  cursorBefore: JsonValue | null;
  cursorAfter: JsonValue | null;
  reasonCode: string | null;
  reason: string | null;
  startedAt: Instant;
  finishedAt: Instant | null;
  /** Null while evaluating. */
  durationMs: number | null;
}

/** A sensor: its definition with defaults filled in, its cursor and its newest evaluation. */
export interface Sensor {
  id: string;
  name: string;
  every: string;
  target: Required<HandlerTarget>;
  /** Of one evaluation. */
  timeout: string;
  run: SensorRun;
  payload: JsonValue | null;
  paused: boolean;
  labels: Record<string, string>;
  cursor: JsonValue | null;
  /** Rises with every commit, cursor move and reset. */
  cursorVersion: number;
  /** Null while paused. */
  nextEvaluationAt: Instant | null;
  /** True while an evaluation is under way. */
  evaluating: boolean;
  lastTick: SensorTick | null;
  /** The apply source that declares it; null when made through the API. */
  source: string | null;
  createdAt: Instant;
  updatedAt: Instant;
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
/** json: the event as JSON, { id, type, occurredAt, namespace, data }; slack: a Slack incoming-webhook message. */
export type SubscriptionFormat = 'json' | 'slack';
/** disabled: its deliveries failed for the whole retry window; nothing is delivered until it is resumed. */
export type SubscriptionState = 'active' | 'paused' | 'disabled';

/** Which events of the listed types are delivered; an absent, null or empty field lets every one through. */
export interface SubscriptionFilterInput {
  /** Only events of these schedules (and their runs); at most 100. */
  scheduleIds?: string[] | null;
  /** Only events of schedules (or sensors) carrying every one of these labels. */
  labels?: Record<string, string> | null;
}
/** POST /v1/subscriptions. */
export interface SubscriptionInput {
  /** Where deliveries are POSTed: http or https, without credentials. */
  url: string;
  events: SubscriptionEventType[];
  filter?: SubscriptionFilterInput | null;
  /** Default json. */
  format?: SubscriptionFormat | null;
  /** At most 500 characters. */
  description?: string | null;
  /** Default false: create it paused, delivering nothing until it is resumed. */
  paused?: boolean | null;
}
/** PATCH: the given fields replace the stored ones (a new filter replaces the whole filter); `paused` pauses or resumes. */
export type SubscriptionPatch = Partial<SubscriptionInput>;

/** A subscription: where events go, which, in what format, and whether its deliveries are getting through. */
export interface Subscription {
  id: string;
  url: string;
  events: SubscriptionEventType[];
  filter: { scheduleIds: string[]; labels: Record<string, string> };
  format: SubscriptionFormat;
  description: string | null;
  state: SubscriptionState;
  /** Why it was disabled; null unless disabled. */
  disabledReason: string | null;
  /** Since when its oldest undelivered event has been failing; null while deliveries succeed. */
  failingSince: Instant | null;
  createdAt: Instant;
  updatedAt: Instant;
}

/** pending: not taken yet (retried at nextAttemptAt); delivered: answered 2xx; failed: given up. */
export type DeliveryState = 'pending' | 'delivered' | 'failed';
/** One HTTP attempt of a delivery. */
export interface DeliveryAttempt {
  attempt: number;
  attemptedAt: Instant;
  /** Null when there was no answer (refused address, network error, timeout). */
  statusCode: number | null;
  latencyMs: number;
  /** Null when it was taken (2xx). */
  error: string | null;
}
/** One event delivered (or being delivered) to a subscription, with each attempt. */
export interface SubscriptionDelivery {
  /** A decimal number. */
  id: string;
  /** The body's `id` and the Idempotency-Key header. */
  eventId: string;
  /** `ping` for a test delivery. */
  eventType: SubscriptionEventType | 'ping';
  state: DeliveryState;
  /** Oldest first. */
  attempts: DeliveryAttempt[];
  /** Null unless pending. */
  nextAttemptAt: Instant | null;
  /** The event as delivered in the json format. */
  body: Record<string, unknown>;
  createdAt: Instant;
  finishedAt: Instant | null;
}
/** A `ping` written for the subscription, delivered like any other event. */
export interface SubscriptionTestResult {
  eventId: string;
}

/** Public holidays of a country (ISO 3166-1 alpha-2, e.g. "DE"), and of its state ("BY") and region, computed for each year a slot falls in. */
export interface HolidaySource {
  country: string;
  state?: string | null;
  region?: string | null;
}
/** A calendar's fields but its name (PUT /v1/calendars/:name): explicit dates, public holidays, or both. */
export interface CalendarFields {
  /** Local dates written YYYY-MM-DD, read in each schedule's own timezone. */
  dates?: string[] | null;
  holidays?: HolidaySource | null;
  /** At most 500 characters. */
  description?: string | null;
}
/** POST /v1/calendars. */
export interface CalendarInput extends CalendarFields {
  /** Unique per namespace; schedules name it in calendar.exclude. */
  name: string;
}
/** A calendar: the local dates it excludes from the schedules that name it. */
export interface Calendar {
  name: string;
  /** Its own dates, ascending. */
  dates: string[];
  holidays: { country: string; state: string | null; region: string | null } | null;
  description: string | null;
  /** How many schedules name it; it cannot be deleted while any does (409 CALENDAR_IN_USE). */
  schedules: number;
  createdAt: Instant;
  updatedAt: Instant;
}
/** One date a calendar excludes. */
export interface CalendarDate {
  /** YYYY-MM-DD. */
  date: string;
  /** The public holiday's name; null for a date the calendar lists itself. */
  holiday: string | null;
}
/** The dates a calendar excludes between from and to (inclusive), ascending. */
export interface CalendarDates {
  from: string;
  to: string;
  items: CalendarDate[];
}

/**
 * The events that start a schedule (its `on`, instead of cron, every, at or in): each event of that
 * name whose values match starts one run, in the transaction that stores the event. Such a schedule
 * has no slots (no calendar, expect, startAt, endAt, maxRuns, catchup or jitter), and its payload, if
 * any, is an object: each run gets it with the event added under `event`.
 */
export interface EventTriggerInput {
  /** The event name: 1 to 128 letters, digits, ".", "_", ":" or "-", e.g. "order.paid". */
  event: string;
  /** Dotted paths into the event (`data.plan`, `name`, `id`) and the JSON value each must equal; at most 32. Absent or empty: every event of the name. */
  match?: Record<string, JsonValue> | null;
}
/**
 * Flow control of a schedule started by events. Each control's `key` is a template over the event
 * (`account-{{event.data.accountId}}`) or the payload; absent: one key for the schedule. An event
 * whose key cannot be resolved makes no run (skipped FLOW_KEY_UNRESOLVED).
 */
export interface DebounceInput {
  key?: string | null;
  /** How long without a new event before the run starts, e.g. "30s"; at most 7d. */
  period: DurationInput;
  /** The run starts at most this long after the first event of the burst. Default: no bound. */
  maxWait?: DurationInput | null;
}
/** A throttle (runs started) or rate limit (runs made): at most `limit` (1 to 100,000) per key in any window of `period`. */
export interface WindowLimitInput {
  key?: string | null;
  limit: number;
  /** The window, e.g. "1m"; at most 7d. */
  period: DurationInput;
}
export interface BatchInput {
  key?: string | null;
  /** 1 to 1,000 events per run. */
  maxSize: number;
  /** How long after the first event of a batch its run starts, full or not; at most 7d. */
  timeout: DurationInput;
}
export interface Debounce {
  key: string | null;
  period: string;
  maxWait: string | null;
}
export interface WindowLimit {
  key: string | null;
  limit: number;
  period: string;
}
export interface Batch {
  key: string | null;
  maxSize: number;
  timeout: string;
}
/** A schedule's `on`, with its default filled in. */
export interface EventTrigger {
  event: string;
  /** Empty: every event of the name. */
  match: Record<string, JsonValue>;
}

/** An event to send (POST /v1/events, one item of events.sendMany). */
export interface EventInput {
  /** 1 to 128 letters, digits, ".", "_", ":" or "-", e.g. "order.paid"; schedules whose `on.event` is this name start. */
  name: string;
  /** Any JSON, at most the payload limit serialized. Default null. */
  data?: JsonValue;
  /** Your id for the event (at most 200 characters): sent again within the retention window (KAIROS_EVENT_RETENTION), it answers the first event with `deduped: true` and starts nothing. Default: a new id. */
  id?: string | null;
}
/** A schedule the event matched that made no run for it, and why (SCHEDULE_PAUSED, OVERLAP_SKIPPED, CONCURRENCY_KEY_UNRESOLVED, RATE_LIMITED, FLOW_KEY_UNRESOLVED). */
export interface EventSkip {
  scheduleId: string;
  reasonCode: string;
}
/** An event, with what it started. */
export interface Event {
  /** Yours, or the one Kairos gave it. */
  id: string;
  name: string;
  /** As sent. */
  data: JsonValue | null;
  receivedAt: Instant;
  /** True when the id was seen before: this is the first event with it, and nothing ran again. */
  deduped: boolean;
  /** The runs it started, one per matching schedule. */
  runs: string[];
  skipped: EventSkip[];
  /** The runs waiting for it (ctx.waitForEvent) that it resumed. */
  resumed: string[];
}
export interface EventListFilter {
  /** Only events of this exact name. */
  name?: string;
  /** Page size. */
  limit?: number;
  /** Start after this page: a nextCursor of GET /v1/events. */
  cursor?: string;
}

/** A source's declaration of schedules for POST /v1/apply. */
export interface ApplyInput {
  /** Who declares these schedules; a prune deletes only this source's schedules. */
  source: string;
  /** Each a schedule body with its name (no idempotencyKey, no paused). */
  schedules?: ScheduleInput[];
  /** Each a sensor body (no paused), found by its name; a prune deletes only this source's sensors. */
  sensors?: SensorInput[];
  /** Each a calendar body, found by its name and written before the schedules, which may name them; a prune never deletes one. */
  calendars?: CalendarInput[];
  prune?: boolean;
  dryRun?: boolean;
}

export interface FieldChange {
  field: string;
  from: JsonValue;
  to: JsonValue;
}

export interface ApplyPlanItem {
  kind: 'schedule' | 'sensor' | 'calendar';
  name: string;
  action: 'create' | 'update' | 'unchanged' | 'delete';
  changes: FieldChange[];
}

export interface ApplyResult {
  plan: ApplyPlanItem[];
  /** False for a dry run. */
  applied: boolean;
}

/** One version of a schedule's definition. */
export interface ScheduleVersion {
  version: number;
  specHash: string;
  source: string | null;
  actor: string;
  appliedAt: Instant;
  changes: FieldChange[];
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

export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

/** Every error the API answers with. */
export interface ApiErrorBody {
  code: string;
  message: string;
  field: string | null;
}

/** An item of a batch that was refused, with the error its single route answers; nothing of it was stored. */
export interface BatchRefusal {
  error: ApiErrorBody;
}

/** One answer of a batch, in the order of its items: what the single route returns, or the refusal. */
export type BatchAnswer<T> = T | BatchRefusal;
