/** Runs: an ad-hoc run's body, a run with its steps, checkpoints, attempts and events, and the filters of lists and bulk actions. */
import type { Concurrency, DurationInput, Executable, FairnessInput, Instant, JsonValue, RetryPolicy, RetryPolicyInput, RunOrigin, RunState, StepState, StepWhen, Target } from './shared.js';

/** An ad-hoc run's fields but what it executes (see RunInput). */
export interface RunFields {
  payload?: JsonValue;
  retry?: RetryPolicyInput;
  timeout?: DurationInput;
  /** 1 to 5: among the due runs of its queue, the next start goes to the best priority (1 first). Default 3. */
  priority?: number | null;
  /** A fairness key over the payload (e.g. "tenant-{{payload.tenantId}}") and its weight. Default: none (the run shares the one key of runs without a key). */
  fairness?: FairnessInput | null;
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

/** The reasons a queued run waits that the API names; other values tell why availableAt is later than the slot. */
export type DeferReason = 'CONCURRENCY_LIMIT' | 'QUEUE_LIMIT' | 'QUEUE_RATE_LIMIT' | 'FAIR_SHARE' | 'VERSION_UNAVAILABLE' | (string & {});

export interface Run {
  id: string;
  scheduleId: string | null;
  origin: RunOrigin;
  sourceRunId: string | null;
  scheduledFor: Instant;
  availableAt: Instant | null;
  /**
   * Why the run has not started: while a limit holds it back, CONCURRENCY_LIMIT, QUEUE_LIMIT or
   * QUEUE_RATE_LIMIT; while it waits for its fairness key's turn, FAIR_SHARE; while no live worker
   * runs its version, VERSION_UNAVAILABLE; otherwise why availableAt is later than the slot.
   */
  deferReason: DeferReason | null;
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
  /** 1 starts first, 5 last. */
  priority: number;
  /** The fairness key whose turns it takes (resolved from its payload); null: the one key runs without a key share. */
  fairnessKey: string | null;
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
