/** Executes a claimed run's target once and reports what happened as an AttemptOutcome. */
import { Injectable } from '@nestjs/common';
import type { AttemptOutcome, JsonValue } from '@kairos/domain';
import type { ClaimedRun } from '@kairos/ledger';
import { RunAbort, RunAborted } from '../execution/run-abort.js';
import { HandlerRegistry } from './handler/handler.registry.js';
import { HandlerError } from './handler/run-handler.js';
import { HttpTarget } from './http/http-target.js';

@Injectable()
export class TargetRunner {
  constructor(
    private readonly handlers: HandlerRegistry,
    private readonly http: HttpTarget,
  ) {}

  /**
   * Runs the target until it settles or the run is aborted, whichever comes first. An abort is
   * rethrown as the RunAborted that caused it; everything else becomes an outcome.
   */
  async execute(run: ClaimedRun, abort: RunAbort): Promise<AttemptOutcome> {
    const { signal } = abort;
    try {
      return await Promise.race([this.attempt(run, signal), abort.aborted]);
    } catch (error) {
      if (error instanceof RunAborted) throw error;
      if (signal.aborted && signal.reason instanceof RunAborted) throw signal.reason;
      return {
        kind: 'failed',
        retryable: !(error instanceof HandlerError) || error.retryable,
        reasonCode: error instanceof HandlerError && !error.retryable ? 'HANDLER_NON_RETRYABLE' : 'HANDLER_ERROR',
        message: error instanceof Error ? error.message : String(error),
      };
    }
  }

  private async attempt(run: ClaimedRun, signal: AbortSignal): Promise<AttemptOutcome> {
    const target = run.target;
    if (target.type === 'http') return this.http.call(run, target, signal);
    const handler = this.handlers.get(target.name);
    if (!handler) {
      return { kind: 'failed', retryable: false, reasonCode: 'UNKNOWN_HANDLER', message: `no handler named "${target.name}" is registered in this worker` };
    }
    const result = await handler.run({
      runId: run.id,
      scheduleId: run.scheduleId,
      scheduledFor: run.scheduledFor,
      attempt: run.attempt,
      payload: run.payload as never,
      signal,
    });
    return { kind: 'succeeded', result: (result ?? null) as JsonValue | null };
  }
}
