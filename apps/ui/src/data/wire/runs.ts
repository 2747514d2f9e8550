/** Runs: a run with its steps, checkpoints, attempts and events, bulk actions on runs, and the counts of runs that ended. */
import type { RunEvent } from '../../logic/run-story.js';
import type { AttemptOutcome, CheckpointKind, CheckpointState, Concurrency, JsonValue, ReasonCode, RunOrigin, RunState, StepState, StepWhen, Target } from './shared.js';

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
  /** Why the run has not started: while a limit holds it back, CONCURRENCY_LIMIT, QUEUE_LIMIT or QUEUE_RATE_LIMIT; while it waits for its fairness key's turn, FAIR_SHARE; while no worker of its version runs, VERSION_UNAVAILABLE. */
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
  /** 1 starts first, 5 last (3: normal): among the due runs of its queue, the next start goes to the best priority. */
  priority: number;
  /** The fairness key whose turns it takes, resolved from its payload; null: the one key runs without a key share. */
  fairnessKey: string | null;
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
