/**
 * From what an attempt did to what the ledger records: success, another attempt after a backoff,
 * or the end of the run. Pure; the worker supplies the randomness for jitter.
 */
import type { JsonValue } from './closed-sets.js';
import type { ReasonCode } from './reason-codes.js';
import type { BackoffPolicy, RetryPolicy } from './run-policy.js';

/** What an HTTP target answered, kept on the attempt: status, a subset of headers, the body (capped). */
export type TargetResponse = Record<string, unknown>;

export type AttemptOutcome =
  | { kind: 'succeeded'; result: JsonValue | null; response?: TargetResponse }
  | { kind: 'failed'; retryable: boolean; reasonCode: ReasonCode; message: string; details?: Record<string, unknown>; response?: TargetResponse }
  | { kind: 'cancelled'; reasonCode: 'CANCELLED_BY_USER' | 'REPLACED_BY_OVERLAP' };

export type Verdict =
  | {
      kind: 'final';
      state: 'succeeded' | 'cancelled' | 'dead';
      result: JsonValue | null;
      error: Record<string, unknown> | null;
      reasonCode: ReasonCode;
      reasonText: string | null;
      response: TargetResponse | null;
    }
  | { kind: 'retry'; delayMs: number; error: Record<string, unknown>; reasonCode: ReasonCode; reasonText: string; response: TargetResponse | null };

/**
 * The delay before the attempt after `failedAttempt` (1-based): `fixed` waits base every time,
 * `exponential` waits base × 2^(failedAttempt - 1), both capped at max; jitter takes up to that
 * fraction off the delay (`random` in [0, 1)).
 */
export function backoffDelayMs(policy: BackoffPolicy, failedAttempt: number, random: number): number {
  const raw = policy.type === 'fixed' ? policy.baseMs : policy.baseMs * 2 ** Math.min(failedAttempt - 1, 52);
  const capped = Math.min(raw, policy.maxMs);
  return Math.round(capped * (1 - policy.jitter * random));
}

export function decideVerdict(outcome: AttemptOutcome, attempt: number, retry: RetryPolicy, random: number): Verdict {
  switch (outcome.kind) {
    case 'succeeded':
      return { kind: 'final', state: 'succeeded', result: outcome.result, error: null, reasonCode: 'SUCCEEDED', reasonText: null, response: outcome.response ?? null };
    case 'cancelled':
      return { kind: 'final', state: 'cancelled', result: null, error: null, reasonCode: outcome.reasonCode, reasonText: null, response: null };
    case 'failed': {
      const error = { message: outcome.message, reasonCode: outcome.reasonCode, attempt, ...outcome.details };
      if (outcome.retryable && attempt < retry.maxAttempts) {
        const delayMs = backoffDelayMs(retry.backoff, attempt, random);
        return {
          kind: 'retry',
          delayMs,
          error,
          reasonCode: outcome.reasonCode,
          reasonText: `attempt ${attempt} of ${retry.maxAttempts} failed: ${outcome.message}`,
          response: outcome.response ?? null,
        };
      }
      const why = outcome.retryable ? `attempt ${attempt} of ${retry.maxAttempts} failed, no attempts left` : 'the failure is not retryable';
      return {
        kind: 'final',
        state: 'dead',
        result: null,
        error,
        reasonCode: outcome.reasonCode,
        reasonText: `${why}: ${outcome.message}`,
        response: outcome.response ?? null,
      };
    }
  }
}
