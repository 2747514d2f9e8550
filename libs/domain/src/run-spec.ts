/** An ad-hoc run as POST /v1/runs declares it: a target executed once now (or at availableAt), with retries. */
import { readInstant, readObject, readPayload, readString, readDuration } from './json-readers.js';
import type { JsonValue } from './closed-sets.js';
import { DEFAULT_RUN_TIMEOUT_MS, MAX_RUN_TIMEOUT_MS, readRetryPolicy, readTarget, type RetryPolicy, type Target } from './run-policy.js';

export interface RunCreateRequest {
  target: Target;
  payload: JsonValue | null;
  retry: RetryPolicy;
  timeoutMs: number;
  /** When the run becomes due; never earlier than now. */
  availableAtMs: number;
  idempotencyKey: string | null;
}

export function parseRunCreate(body: unknown, nowMs: number): RunCreateRequest {
  const obj = readObject(body, '', ['target', 'payload', 'retry', 'timeout', 'availableAt', 'idempotencyKey']);
  return {
    target: readTarget(obj, 'target'),
    payload: readPayload(obj, 'payload', ''),
    retry: readRetryPolicy(obj, 'retry'),
    timeoutMs: readDuration(obj, 'timeout', '', { minMs: 1, maxMs: MAX_RUN_TIMEOUT_MS }) ?? DEFAULT_RUN_TIMEOUT_MS,
    availableAtMs: Math.max(nowMs, readInstant(obj, 'availableAt', '') ?? nowMs),
    idempotencyKey: readString(obj, 'idempotencyKey', '', { maxLength: 200 }) ?? null,
  };
}
