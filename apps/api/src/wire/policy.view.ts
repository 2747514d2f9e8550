/** The wire shapes schedules, runs and previews share: a target, a retry policy, a DST policy, and optional instants. */
import {
  explainDstPolicy,
  formatDuration,
  formatOptionalInstant,
  parseCron,
  type DstPolicy,
  type RetryPolicy,
  type Target,
  queueOf,
} from '@kairos/domain';
import type { DstPolicy as DstPolicyShape, RetryPolicy as RetryPolicyShape, Target as TargetShape } from '@kairos/domain/wire';
import type { z } from 'zod';

export const iso = formatOptionalInstant;

export type TargetView = z.output<typeof TargetShape>;
export type RetryView = z.output<typeof RetryPolicyShape>;

export function targetView(target: Target): TargetView {
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
export type DstView = z.output<typeof DstPolicyShape>;

export function dstView(cron: string | null, dst: DstPolicy): DstView {
  return explainDstPolicy(cron === null ? null : parseCron(cron), dst);
}
