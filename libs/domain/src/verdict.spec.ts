import { describe, expect, it } from 'vitest';
import { DEFAULT_RETRY_POLICY, type BackoffPolicy, type RetryPolicy } from './run-policy.js';
import { backoffDelayMs, decideVerdict, type AttemptOutcome } from './verdict.js';

const exponential = (baseMs: number, maxMs: number, jitter = 0): BackoffPolicy => ({ type: 'exponential', baseMs, maxMs, jitter });
const fixed = (baseMs: number, maxMs: number, jitter = 0): BackoffPolicy => ({ type: 'fixed', baseMs, maxMs, jitter });
const ALMOST_ONE = 0.999_999_999;

describe('backoffDelayMs', () => {
  it.each<[string, BackoffPolicy, number, number, number]>([
    // Exponential: base × 2^(failed attempt - 1).
    ['exponential after attempt 1', exponential(1_000, 60_000), 1, 0, 1_000],
    ['exponential after attempt 2', exponential(1_000, 60_000), 2, 0, 2_000],
    ['exponential after attempt 3', exponential(1_000, 60_000), 3, 0, 4_000],
    ['exponential after attempt 6', exponential(1_000, 60_000), 6, 0, 32_000],
    ['exponential capped at max after attempt 7', exponential(1_000, 60_000), 7, 0, 60_000],
    ['exponential capped at max far out', exponential(1_000, 60_000), 100, 0, 60_000],
    ['exponential with max equal to base never grows', exponential(5_000, 5_000), 4, 0, 5_000],
    ['exponential from a zero base stays zero', exponential(0, 60_000), 5, 0, 0],
    // Fixed: base every time, still capped.
    ['fixed after attempt 1', fixed(7_000, 60_000), 1, 0, 7_000],
    ['fixed after attempt 9', fixed(7_000, 60_000), 9, 0, 7_000],
    ['fixed with max below base (max wins)', fixed(7_000, 5_000), 1, 0, 5_000],
    // Jitter takes up to its fraction off the delay.
    ['jitter 0.1, random 0: the full delay', exponential(60_000, 3_600_000, 0.1), 1, 0, 60_000],
    ['jitter 0.1, random 0.5: 5% off', exponential(60_000, 3_600_000, 0.1), 1, 0.5, 57_000],
    ['jitter 0.1, random ~1: 10% off', exponential(60_000, 3_600_000, 0.1), 1, ALMOST_ONE, 54_000],
    ['jitter 0.5, random ~1 on a capped delay', exponential(60_000, 100_000, 0.5), 5, ALMOST_ONE, 50_000],
    ['jitter 1, random ~1: close to nothing', fixed(10_000, 10_000, 1), 1, ALMOST_ONE, 0],
    ['jitter 1, random 0.25', fixed(10_000, 10_000, 1), 1, 0.25, 7_500],
    ['jitter 0 ignores random', fixed(10_000, 10_000, 0), 1, ALMOST_ONE, 10_000],
    ['rounds to whole milliseconds', fixed(1_001, 2_000, 0.5), 1, 0.5, 751],
  ])('%s', (_name, policy, failedAttempt, random, expected) => {
    expect(backoffDelayMs(policy, failedAttempt, random)).toBe(expected);
  });

  // DEFAULT_RETRY_POLICY: 60 s × 2^n capped at 1 h, n counting from 0 at the first failure.
  it.each<[number, number]>([
    [1, 60_000],
    [2, 120_000],
    [3, 240_000],
    [4, 480_000],
    [5, 960_000],
    [6, 1_920_000],
    [7, 3_600_000],
    [8, 3_600_000],
    [60, 3_600_000],
  ])('the default policy waits, after failed attempt %i, %i ms (no jitter drawn)', (attempt, expected) => {
    expect(backoffDelayMs(DEFAULT_RETRY_POLICY.backoff, attempt, 0)).toBe(expected);
  });

  it('the default policy jitters by at most 10%', () => {
    expect(DEFAULT_RETRY_POLICY).toEqual({
      maxAttempts: 3,
      backoff: { type: 'exponential', baseMs: 60_000, maxMs: 3_600_000, jitter: 0.1 },
    });
    expect(backoffDelayMs(DEFAULT_RETRY_POLICY.backoff, 2, ALMOST_ONE)).toBe(108_000);
    expect(backoffDelayMs(DEFAULT_RETRY_POLICY.backoff, 9, ALMOST_ONE)).toBe(3_240_000);
  });

  it('stays within [delay × (1 - jitter), delay] for any random in [0, 1)', () => {
    const policy = exponential(60_000, 3_600_000, 0.2);
    for (let i = 0; i < 1_000; i++) {
      const delay = backoffDelayMs(policy, 3, i / 1_000);
      expect(delay).toBeGreaterThanOrEqual(192_000);
      expect(delay).toBeLessThanOrEqual(240_000);
    }
  });
});

describe('decideVerdict', () => {
  const retry: RetryPolicy = { maxAttempts: 3, backoff: exponential(1_000, 60_000) };
  const failure = (retryable: boolean, details?: Record<string, unknown>): AttemptOutcome => ({
    kind: 'failed',
    retryable,
    reasonCode: retryable ? 'HTTP_5XX' : 'HTTP_4XX',
    message: retryable ? 'HTTP 503' : 'HTTP 404',
    ...(details ? { details } : {}),
  });

  it.each<[number, unknown]>([
    [1, { kind: 'retry', delayMs: 1_000, reasonCode: 'HTTP_5XX', reasonText: 'attempt 1 of 3 failed: HTTP 503' }],
    [2, { kind: 'retry', delayMs: 2_000, reasonCode: 'HTTP_5XX', reasonText: 'attempt 2 of 3 failed: HTTP 503' }],
    [
      3,
      { kind: 'final', state: 'dead', result: null, reasonCode: 'HTTP_5XX', reasonText: 'attempt 3 of 3 failed, no attempts left: HTTP 503' },
    ],
  ])('a retryable failure of attempt %i of 3', (attempt, expected) => {
    const verdict = decideVerdict(failure(true), attempt, retry, 0);
    expect(verdict).toMatchObject(expected as object);
    expect(verdict.error).toEqual({ message: 'HTTP 503', reasonCode: 'HTTP_5XX', attempt });
  });

  it('a retryable failure past the last attempt is dead too (attempts can exceed a lowered maxAttempts)', () => {
    expect(decideVerdict(failure(true), 5, retry, 0)).toMatchObject({ kind: 'final', state: 'dead' });
  });

  it('with maxAttempts 1 the first failure is final', () => {
    expect(decideVerdict(failure(true), 1, { ...retry, maxAttempts: 1 }, 0)).toMatchObject({
      kind: 'final',
      state: 'dead',
      reasonText: 'attempt 1 of 1 failed, no attempts left: HTTP 503',
    });
  });

  it.each([1, 2, 3])('a non-retryable failure of attempt %i is dead at once', (attempt) => {
    expect(decideVerdict(failure(false), attempt, retry, 0)).toEqual({
      kind: 'final',
      state: 'dead',
      result: null,
      error: { message: 'HTTP 404', reasonCode: 'HTTP_4XX', attempt },
      reasonCode: 'HTTP_4XX',
      reasonText: 'the failure is not retryable: HTTP 404',
      response: null,
    });
  });

  it('applies the backoff jitter with the random it is given', () => {
    const jittered: RetryPolicy = { maxAttempts: 5, backoff: exponential(10_000, 60_000, 0.5) };
    expect(decideVerdict(failure(true), 2, jittered, 0)).toMatchObject({ kind: 'retry', delayMs: 20_000 });
    expect(decideVerdict(failure(true), 2, jittered, ALMOST_ONE)).toMatchObject({ kind: 'retry', delayMs: 10_000 });
  });

  it('keeps the failure details in the recorded error', () => {
    const verdict = decideVerdict(failure(true, { status: 503, body: 'busy' }), 1, retry, 0);
    expect(verdict.error).toEqual({ message: 'HTTP 503', reasonCode: 'HTTP_5XX', attempt: 1, status: 503, body: 'busy' });
  });

  it.each<[string, AttemptOutcome, number, unknown]>([
    [
      'a success',
      { kind: 'succeeded', result: 'ok', response: { status: 200 } },
      1,
      { kind: 'final', state: 'succeeded', response: { status: 200 } },
    ],
    [
      'a failure with attempts left',
      { kind: 'failed', retryable: true, reasonCode: 'HTTP_5XX', message: 'HTTP 502', response: { status: 502, body: 'bad gateway' } },
      1,
      { kind: 'retry', response: { status: 502, body: 'bad gateway' } },
    ],
    [
      'the last failure',
      { kind: 'failed', retryable: true, reasonCode: 'HTTP_5XX', message: 'HTTP 502', response: { status: 502 } },
      3,
      { kind: 'final', state: 'dead', response: { status: 502 } },
    ],
    [
      'a non-retryable failure',
      { kind: 'failed', retryable: false, reasonCode: 'HTTP_4XX', message: 'HTTP 400', response: { status: 400 } },
      1,
      { kind: 'final', state: 'dead', response: { status: 400 } },
    ],
  ])('keeps the target response of %s', (_name, outcome, attempt, expected) => {
    expect(decideVerdict(outcome, attempt, retry, 0)).toMatchObject(expected as object);
  });

  it.each<[string, AttemptOutcome, unknown]>([
    [
      'success with a result',
      { kind: 'succeeded', result: { rows: 3 } },
      { kind: 'final', state: 'succeeded', result: { rows: 3 }, error: null, reasonCode: 'SUCCEEDED', reasonText: null, response: null },
    ],
    [
      'success without a result',
      { kind: 'succeeded', result: null },
      { kind: 'final', state: 'succeeded', result: null, error: null, reasonCode: 'SUCCEEDED', reasonText: null, response: null },
    ],
    [
      'cancelled by the user',
      { kind: 'cancelled', reasonCode: 'CANCELLED_BY_USER' },
      { kind: 'final', state: 'cancelled', result: null, error: null, reasonCode: 'CANCELLED_BY_USER', reasonText: null, response: null },
    ],
    [
      'replaced by a newer slot',
      { kind: 'cancelled', reasonCode: 'REPLACED_BY_OVERLAP' },
      { kind: 'final', state: 'cancelled', result: null, error: null, reasonCode: 'REPLACED_BY_OVERLAP', reasonText: null, response: null },
    ],
  ])('%s on any attempt', (_name, outcome, expected) => {
    for (const attempt of [1, 3]) expect(decideVerdict(outcome, attempt, retry, 0.5)).toEqual(expected);
  });
});
