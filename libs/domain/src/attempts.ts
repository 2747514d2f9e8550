/**
 * A run's attempts, read from its events: every claim opens an attempt at a new lease epoch, and
 * the event that ends it (a verdict, a retry, a reap, a drain, a hand-back, a refused verdict) closes it. The
 * events are the one record; attempts are a view of them, so the two can never disagree.
 */
import type { AttemptOutcomeKind } from './closed-sets.js';
import type { ReasonCode } from './reason-codes.js';

export interface AttemptEvent {
  at: Date;
  kind: string;
  leaseEpoch: number | null;
  actor: string;
  reasonCode: ReasonCode | null;
  detail: Record<string, unknown>;
}

export interface Attempt {
  attempt: number;
  leaseEpoch: number;
  worker: string;
  startedAt: Date;
  finishedAt: Date | null;
  /** Null while the attempt is still executing. */
  outcome: AttemptOutcomeKind | null;
  reasonCode: ReasonCode | null;
  error: Record<string, unknown> | null;
  /** What an HTTP target answered. */
  response: Record<string, unknown> | null;
}

const ENDED_BY_HOLDER: Record<string, AttemptOutcomeKind> = {
  succeeded: 'succeeded',
  failed: 'failed',
  dead: 'failed',
  cancelled: 'cancelled',
  retry_scheduled: 'failed',
};

/** Events in the order they were written (run_events.id). */
export function attemptsOf(events: readonly AttemptEvent[]): Attempt[] {
  const attempts: Attempt[] = [];
  const byEpoch = new Map<number, Attempt>();
  const close = (epoch: number | null, event: AttemptEvent, outcome: AttemptOutcomeKind): void => {
    const attempt = epoch === null ? undefined : byEpoch.get(epoch);
    if (!attempt || attempt.outcome !== null) return;
    attempt.outcome = outcome;
    attempt.finishedAt = event.at;
    attempt.reasonCode = event.reasonCode;
    attempt.error = (event.detail.error as Record<string, unknown> | undefined) ?? null;
    attempt.response = (event.detail.response as Record<string, unknown> | undefined) ?? null;
  };
  for (const event of events) {
    const epoch = event.leaseEpoch;
    if (event.kind === 'claimed' && epoch !== null) {
      const attempt: Attempt = {
        attempt: Number(event.detail.attempt),
        leaseEpoch: epoch,
        worker: event.actor,
        startedAt: event.at,
        finishedAt: null,
        outcome: null,
        reasonCode: null,
        error: null,
        response: null,
      };
      attempts.push(attempt);
      byEpoch.set(epoch, attempt);
    } else if (event.kind in ENDED_BY_HOLDER) {
      close(epoch, event, ENDED_BY_HOLDER[event.kind]!);
    } else if ((event.kind === 'reaped' || event.kind === 'poisoned') && epoch !== null) {
      // The reaper bumps the epoch: the attempt it ends is the one before.
      close(epoch - 1, event, 'lost');
    } else if (event.kind === 'drained' && epoch !== null) {
      close(epoch - 1, event, 'drained');
    } else if (event.kind === 'handed_back' && epoch !== null) {
      close(epoch - 1, event, 'handed_back');
    } else if ((event.kind === 'slept' || event.kind === 'awaiting_signal') && epoch !== null) {
      // A durable function parked the run: the attempt ends without a verdict, the epoch raised.
      close(epoch - 1, event, 'parked');
    } else if (event.kind === 'lease_lost') {
      close(epoch, event, 'lost');
    }
  }
  return attempts;
}
