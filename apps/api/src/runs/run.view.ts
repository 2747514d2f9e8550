/** The wire shape of a run, as REST and GraphQL return it, and of its events. */
import { formatInstant, type Attempt, type JsonValue } from '@kairos/domain';
import type { Attempt as AttemptShape, Run, RunEvent } from '@kairos/domain/wire';
import type { RunEventRow, RunRow } from '@kairos/ledger';
import type { z } from 'zod';
import { iso, retryView, targetView } from '../wire/policy.view.js';

export type RunView = z.output<typeof Run>;
export type AttemptView = z.output<typeof AttemptShape>;
export type RunEventView = z.output<typeof RunEvent>;

export function runView(row: RunRow): RunView {
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
    target: targetView(row.target),
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
  };
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
