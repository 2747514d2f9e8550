/** The wire shapes schedules, runs and previews share: a target, a retry policy, a DST policy, and optional instants. */
import {
  explainDstPolicy,
  formatDuration,
  formatOptionalInstant,
  parseCron,
  type DstExplanation,
  type DstPolicy,
  type RetryPolicy,
  type Target,
  queueOf,
} from '@kairos/domain';

export const iso = formatOptionalInstant;

export interface RetryView {
  maxAttempts: number;
  backoff: { type: string; base: string; max: string; jitter: number };
}

export function targetView(target: Target): Record<string, unknown> {
  return target.type === 'handler'
    ? { type: 'handler', name: target.name, queue: queueOf(target) }
    : { type: 'http', url: target.url, method: target.method, headers: target.headers, timeout: formatDuration(target.timeoutMs) };
}

export function retryView(retry: RetryPolicy): RetryView {
  const { backoff } = retry;
  return {
    maxAttempts: retry.maxAttempts,
    backoff: { type: backoff.type, base: formatDuration(backoff.baseMs), max: formatDuration(backoff.maxMs), jitter: backoff.jitter },
  };
}

/**
 * The DST policy as declared (`auto` stays `auto`), what it resolves to for the schedule's cron
 * expression (null for intervals and one-shots, which DST does not touch), and one line saying so.
 */
export type DstView = DstExplanation;

export function dstView(cron: string | null, dst: DstPolicy): DstView {
  return explainDstPolicy(cron === null ? null : parseCron(cron), dst);
}
