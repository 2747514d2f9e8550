/** An ad-hoc run as POST /v1/runs declares it: a target executed once now (or at availableAt), with retries. */
import type { JsonValue } from './closed-sets.js';
import type { ConcurrencySpec } from './concurrency.js';
import type { FairnessSpec } from './priority.js';
import type { RetryPolicy } from './run-policy.js';
import type { Target } from './steps.js';

export interface RunCreateRequest {
  target: Target;
  payload: JsonValue | null;
  retry: RetryPolicy;
  timeoutMs: number;
  concurrency: ConcurrencySpec | null;
  /** 1 (starts first) to 5. */
  priority: number;
  fairness: FairnessSpec | null;
  /** When the run becomes due; never earlier than now. */
  availableAtMs: number;
  idempotencyKey: string | null;
}
