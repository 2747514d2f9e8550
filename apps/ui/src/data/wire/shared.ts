/**
 * What every area of the wire shares: JSON, the states and origins of runs, steps and ticks,
 * targets, retry policies, concurrency and steps, every reason code, the pages of every list, and who
 * the caller is.
 */

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

/** At most `limit` runs holding the key run at once; on a run the key is resolved from its payload. */
export interface Concurrency {
  key: string;
  limit: number;
}

/**
 * A fairness key and its weight: within a priority, the keys with runs due on a queue take starts
 * in proportion to their weights. On a schedule, a sensor or a step the key is the template as declared.
 */
export interface Fairness {
  key: string;
  weight: number;
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
  /** 1 (starts first) to 5; null: the run's. */
  priority: number | null;
  /** Null: the run's. */
  fairness: Fairness | null;
}
