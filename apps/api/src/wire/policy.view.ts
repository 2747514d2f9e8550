/** The wire shapes schedules and runs share: a target, a retry policy, and optional instants. */
import { formatDuration, formatOptionalInstant, type RetryPolicy, type Target } from '@kairos/domain';

export const iso = formatOptionalInstant;

export interface RetryView {
  maxAttempts: number;
  backoff: { type: string; base: string; max: string; jitter: number };
}

export function targetView(target: Target): Record<string, unknown> {
  return target.type === 'handler'
    ? { type: 'handler', name: target.name }
    : { type: 'http', url: target.url, method: target.method, headers: target.headers, timeout: formatDuration(target.timeoutMs) };
}

export function retryView(retry: RetryPolicy): RetryView {
  const { backoff } = retry;
  return {
    maxAttempts: retry.maxAttempts,
    backoff: { type: backoff.type, base: formatDuration(backoff.baseMs), max: formatDuration(backoff.maxMs), jitter: backoff.jitter },
  };
}
