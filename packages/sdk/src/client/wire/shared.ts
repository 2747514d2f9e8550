/**
 * What every area of the API shares: JSON, durations and instants, the states and origins of runs
 * and steps, targets, retry policies, concurrency, steps and what a schedule or run executes, and the
 * pages, errors and batch answers of every list and batch.
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

/**
 * A fairness key (literal text and `{{payload.<field>}}` placeholders, resolved from each run's
 * payload) and its weight (1 to 100, default 1). Within a priority, the keys with runs due on a
 * queue take starts in proportion to their weights (runs without a key share one key); within a
 * key, the oldest due starts first. A run waiting for its key's turn is queued with deferReason FAIR_SHARE.
 */
export interface FairnessInput {
  key: string;
  weight?: number | null;
}
/** A fairness key and its weight; on a schedule, sensor or step the key is the template as declared. */
export interface Fairness {
  key: string;
  weight: number;
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
  /** 1 (starts first) to 5. Default: the run's (the schedule's). */
  priority?: number | null;
  /** A fairness key over the run's payload. Default: the run's (the schedule's). */
  fairness?: FairnessInput | null;
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
  /** Null: the run's (the schedule's). */
  priority: number | null;
  /** Null: the run's (the schedule's). */
  fairness: Fairness | null;
}

/**
 * What a schedule or a run executes, exactly one of: a target (one call), or steps (a graph of
 * calls; steps without a path between them run in parallel).
 */
export type Executable = { target: TargetInput; steps?: null } | { steps: StepInput[]; target?: null };

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
