/** Executes a claimed run's target once and reports what happened as an AttemptOutcome. */
import type { AttemptOutcome, CallTarget } from '@kairos/domain';
import type { ClaimedRun } from './worker-protocol.js';
import { traceContextOf } from '@kairos/telemetry/trace-context';
import type { KairosHandlerFunction } from './handler.js';
import { NonRetryableError } from './non-retryable-error.js';
import { asJson, durableContext, RunParked, type CheckpointLedger } from './durable-functions.js';
import { NondeterministicReplay } from './replay.js';
import { RunAborted, type RunAbort } from './run-abort.js';
import { ProgressReporter } from './run-progress.js';

/** How a worker that serves HTTP targets calls one (the built-in worker registers one). */
export type HttpTargetCall = (run: ClaimedRun, target: Extract<CallTarget, { type: 'http' }>, signal: AbortSignal) => Promise<AttemptOutcome>;

export class TargetRunner {
  constructor(
    private readonly handlers: ReadonlyMap<string, KairosHandlerFunction>,
    private readonly http: HttpTargetCall | null,
    /** The ledger behind handlers' durable functions (ctx.step, ctx.sleep, ctx.waitForSignal, ctx.waitForEvent). */
    private readonly checkpoints: CheckpointLedger,
    /** Where a failed progress write is reported. */
    private readonly warn: (message: string) => void = (message) => console.warn(message),
    /** The worker's version, as handlers see it (ctx.version). */
    private readonly version = 'unversioned',
  ) {}

  /** False when this worker has no code for the target: the run must go to a worker that has. */
  serves(target: CallTarget): boolean {
    return target.type === 'http' ? this.http !== null : this.handlers.has(target.name);
  }

  /**
   * Runs the target until it settles or the run is aborted, whichever comes first. An abort is
   * rethrown as the RunAborted that caused it; everything else becomes an outcome. `startedAt` is
   * when the attempt began on the database's clock (read before its claim).
   */
  async execute(run: ClaimedRun, abort: RunAbort, startedAt: Date): Promise<AttemptOutcome> {
    const { signal } = abort;
    const progress = new ProgressReporter(
      (json) => this.checkpoints.reportProgress(run.id, run.leaseEpoch, json),
      (message) => this.warn(`run ${run.id}: ${message}`),
    );
    try {
      return await Promise.race([this.attempt(run, signal, startedAt, progress), abort.aborted]);
    } catch (error) {
      if (error instanceof RunAborted || error instanceof RunParked) throw error;
      if (signal.aborted && signal.reason instanceof RunAborted) throw signal.reason;
      // Retried under the run's policy: a worker still running the code the run took may finish it.
      if (error instanceof NondeterministicReplay) {
        return { kind: 'failed', retryable: true, reasonCode: 'NONDETERMINISTIC_REPLAY', message: error.message, details: { asked: error.asked, stored: error.stored } };
      }
      const final = error instanceof NonRetryableError;
      return {
        kind: 'failed',
        retryable: !final,
        reasonCode: final ? 'HANDLER_NON_RETRYABLE' : 'HANDLER_ERROR',
        message: error instanceof Error ? error.message : String(error),
      };
    } finally {
      // Before the verdict is written: the final progress is stored while the lease is held.
      await progress.close();
    }
  }

  private async attempt(run: ClaimedRun, signal: AbortSignal, startedAt: Date, progress: ProgressReporter): Promise<AttemptOutcome> {
    const target = run.target;
    if (target.type === 'http') return this.http!(run, target, signal);
    const trace = traceContextOf();
    // A divergence from the run's checkpoints decides the attempt whatever the handler made of the
    // error (caught it and returned, or threw another): the code took another path than the run.
    let diverged: NondeterministicReplay | null = null;
    let result: unknown;
    try {
      const durable = durableContext(this.checkpoints, { id: run.id, leaseEpoch: run.leaseEpoch, retry: run.retry, attemptStartedAt: startedAt }, signal, () => progress.flush(), (error) => (diverged = error));
      // Added onto the durable context rather than spread into a new object: spreading an object of
      // methods cost 16 µs an attempt (measured on Node 20), about a tenth of a run's Node CPU.
      result = await this.handlers.get(target.name)!(Object.assign(durable, {
        progress: (value: unknown) => progress.report(value),
        runId: run.id,
        scheduleId: run.scheduleId,
        scheduledFor: run.scheduledFor,
        attempt: run.attempt,
        payload: run.payload,
        stepName: run.stepName,
        parentRunId: run.graphRunId,
        version: this.version,
        inputs: run.inputs ?? {},
        sensor: target.evaluation?.sensor ?? null,
        cursor: target.evaluation?.cursor ?? null,
        signal,
        traceparent: trace.traceParent,
        tracestate: trace.traceState,
      }));
    } catch (error) {
      throw diverged !== null && !(error instanceof RunAborted) ? diverged : error;
    }
    if (diverged !== null) throw diverged;
    return { kind: 'succeeded', result: asJson(result) };
  }
}
