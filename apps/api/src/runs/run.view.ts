/** The wire shape of a run, as REST and GraphQL return it, and of its events. */
import type { Attempt, JsonValue } from '@kairos/domain';
import type { RunEventRow, RunRow } from '@kairos/ledger';
import { iso, retryView, targetView } from '../wire/policy.view.js';
import { formatInstant } from '@kairos/domain';

export function runView(row: RunRow) {
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

export type RunView = ReturnType<typeof runView>;

export function attemptView(attempt: Attempt) {
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

export type AttemptView = ReturnType<typeof attemptView>;

export function runEventView(event: RunEventRow) {
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

export type RunEventView = ReturnType<typeof runEventView>;
