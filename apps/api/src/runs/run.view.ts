/** The wire shape of a run, as REST and GraphQL return it, and of its events. */
import { formatInstant, isStepsTarget, stepStateOf, type Attempt, type JsonValue, type StepsTarget } from '@kairos/domain';
import type { Attempt as AttemptShape, Checkpoint, Run, RunEvent, RunStep } from '@kairos/domain/wire';
import type { CheckpointRow, Queryable, RunEventRow, RunRepository, RunRow } from '@kairos/ledger';
import type { z } from 'zod';
import { iso, retryView, targetView } from '../wire/policy.view.js';

export type RunView = z.output<typeof Run>;
export type RunStepView = z.output<typeof RunStep>;
export type CheckpointView = z.output<typeof Checkpoint>;
export type AttemptView = z.output<typeof AttemptShape>;
export type RunEventView = z.output<typeof RunEvent>;

/** A run as the API shows it; a multi-step run with its step runs (`steps`, read by RunRepository.stepsOf). */
export function runView(row: RunRow, steps: readonly RunRow[] = [], checkpoints: readonly CheckpointRow[] = []): RunView {
  return {
    id: row.id,
    scheduleId: row.scheduleId,
    origin: row.origin,
    sourceRunId: row.sourceRunId,
    scheduledFor: formatInstant(row.scheduledFor),
    availableAt: iso(row.availableAt),
    deferReason: row.deferReason,
    state: row.state,
    attempt: row.attempt,
    maxAttempts: row.maxAttempts,
    target: isStepsTarget(row.target) ? null : targetView(row.target),
    steps: isStepsTarget(row.target) ? runStepViews(row.target, steps) : null,
    parentRunId: row.parentRunId,
    stepName: row.stepName,
    concurrency: row.concurrency,
    priority: row.priority,
    fairnessKey: row.fairnessKey,
    sensorId: row.sensorId,
    eventId: row.eventId,
    runKey: row.runKey,
    checkpoints: checkpoints.map((c) => ({
      name: c.name,
      kind: c.kind,
      state: c.state,
      result: c.result,
      startedAt: formatInstant(c.startedAt),
      finishedAt: iso(c.finishedAt),
      wakeAt: iso(c.wakeAt),
    })),
    retry: retryView(row.retry),
    payload: row.payload as JsonValue | null,
    result: row.result as JsonValue | null,
    error: row.error,
    reasonCode: row.reasonCode,
    reasonText: row.reasonText,
    crashCount: row.crashCount,
    cancelRequestedAt: iso(row.cancelRequestedAt),
    idempotencyKey: row.idempotencyKey,
    createdAt: formatInstant(row.createdAt),
    startedAt: iso(row.startedAt),
    finishedAt: iso(row.finishedAt),
    leaseEpoch: row.leaseEpoch,
    progress: (row.progress ?? null) as JsonValue | null,
    version: row.version,
  };
}

/** Runs as the API shows them, each multi-step run with its steps and each run with its checkpoints (one query each). */
export async function runViews(db: Queryable, runs: RunRepository, rows: readonly RunRow[]): Promise<RunView[]> {
  const [steps, checkpoints] = await Promise.all([runs.stepsOf(db, rows), runs.checkpointsOf(db, rows.map((r) => r.id))]);
  return rows.map((row) => runView(row, steps.get(row.id), checkpoints.get(row.id)));
}

/** Each step of a graph in declaration order, as its step run stands. */
function runStepViews(graph: StepsTarget, steps: readonly RunRow[]): RunStepView[] {
  const byName = new Map(steps.map((s) => [s.stepName, s]));
  return graph.steps.flatMap((step) => {
    const run = byName.get(step.name);
    if (!run) return [];
    return [
      {
        name: step.name,
        dependsOn: step.dependsOn,
        when: step.when,
        state: stepStateOf(run),
        attempt: run.attempt,
        maxAttempts: run.maxAttempts,
        result: run.result as JsonValue | null,
        error: run.error,
        reasonCode: run.reasonCode,
        reasonText: run.reasonText,
        startedAt: iso(run.startedAt),
        finishedAt: iso(run.finishedAt),
        runId: run.id,
      },
    ];
  });
}

export function attemptView(attempt: Attempt): AttemptView {
  return {
    attempt: attempt.attempt,
    leaseEpoch: attempt.leaseEpoch,
    worker: attempt.worker,
    startedAt: formatInstant(attempt.startedAt),
    finishedAt: iso(attempt.finishedAt),
    outcome: attempt.outcome,
    reasonCode: attempt.reasonCode,
    error: attempt.error,
    response: attempt.response,
  };
}

export function runEventView(event: RunEventRow): RunEventView {
  return {
    id: event.id,
    at: formatInstant(event.at),
    kind: event.kind,
    fromState: event.fromState,
    toState: event.toState,
    leaseEpoch: event.leaseEpoch,
    actor: event.actor,
    reasonCode: event.reasonCode,
    detail: event.detail,
  };
}
