/** What a user's handler is given and may throw. */
import type { JsonValue } from '@kairos/domain';
import type { DurableContext } from './durable-functions.js';

/**
 * A handler's context: its run, and its durable functions (`step`, `sleep`, `waitForSignal`,
 * `waitForEvent`, `idempotencyKey`, `patched`: see durable-functions.ts) and its live `progress`. The handler runs from the top again
 * on every attempt of its run, resumes after a sleep, a signal or an event included: side effects
 * belong in steps.
 */
export interface HandlerContext<P = JsonValue | null> extends DurableContext {
  runId: string;
  /** Null for an ad-hoc run. */
  scheduleId: string | null;
  /** The slot the run belongs to (for an ad-hoc run, when it was due). */
  scheduledFor: Date;
  /** 1 for the first attempt; retries count up. */
  attempt: number;
  /** The run's payload, exactly as it was declared. */
  payload: P;
  /** For a step of a multi-step run: its step's name (null for a single-target run). */
  stepName: string | null;
  /** For a step of a multi-step run: the run of its graph (null for a single-target run). */
  parentRunId: string | null;
  /** The version of the worker running this attempt (KairosWorker's option `version`, `unversioned` by default). */
  version: string;
  /** For a step of a multi-step run: the results of its upstream steps, by step name ({} otherwise). */
  inputs: Record<string, JsonValue | null>;
  /** For a sensor's evaluation: the sensor (null for any other run). */
  sensor: { id: string; name: string } | null;
  /** For a sensor's evaluation: the cursor the last committed evaluation left (null at first, and for any other run). */
  cursor: JsonValue | null;
  /** Aborted on cancellation, timeout, a lost lease or a shutdown past its grace; long handlers must honour it. */
  signal: AbortSignal;
  /**
   * The W3C `traceparent` of the run's execution span, null when nothing traces the run. The span
   * is also the active OpenTelemetry context while the handler runs, so spans the handler starts
   * nest under it; pass this on to continue the trace elsewhere.
   */
  traceparent: string | null;
  /** The W3C `tracestate` that goes with `traceparent`, null when there is none. */
  tracestate: string | null;
  /**
   * Reports the run's live progress: any JSON value of at most 64 KiB (`{ done: 3, total: 10 }`
   * draws a bar on the dashboard), shown as the run view's `progress` (the last value) and sent to
   * GET /v1/runs/:id/stream. Cheap to call often: writes are coalesced to one every 250 ms per run,
   * carrying the latest value, and the latest is always written before the run parks or ends. The
   * promise resolves once the value is stored or superseded by a later one; a failed write is
   * logged and never fails the handler, so awaiting it is optional. A value that is not JSON, or
   * larger, throws NonRetryableError at the call.
   */
  progress(value: JsonValue | object): Promise<void>;
}

/**
 * What a sensor's evaluation handler returns: the runs the world asks for, each under a run key
 * unique for the sensor (a key seen before asks for nothing: replays are safe), and the cursor the
 * next evaluation starts from (absent: unchanged). Committed in one transaction, only if nobody
 * moved the cursor while the evaluation ran.
 */
export interface SensorResult {
  runs: { runKey: string; payload?: JsonValue | null }[];
  cursor?: JsonValue | null;
}

/**
 * A handler: its return value (JSON; undefined is stored as null) is the run's result. Throwing
 * NonRetryableError ends the run dead at once; any other throw is retried under the run's policy.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a handler reads its own payload shape
export type KairosHandlerFunction<P = any> = (context: HandlerContext<P>) => unknown;
