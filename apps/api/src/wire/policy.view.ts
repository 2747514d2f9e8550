/** The wire shapes schedules, runs and previews share: a target, a retry policy, a DST policy, and optional instants. */
import {
  explainDstPolicy,
  formatDuration,
  formatOptionalInstant,
  parseCron,
  isStepsTarget,
  type CallTarget,
  type DstPolicy,
  type RetryPolicy,
  type StepsTarget,
  type Target,
  queueOf,
} from '@kairos/domain';
import type { DstPolicy as DstPolicyShape, RetryPolicy as RetryPolicyShape, Step as StepShape, Target as TargetShape } from '@kairos/domain/wire';
import type { z } from 'zod';

export const iso = formatOptionalInstant;

export type TargetView = z.output<typeof TargetShape>;
export type RetryView = z.output<typeof RetryPolicyShape>;
export type StepDefinitionView = z.output<typeof StepShape>;

/** What a schedule or run executes, as the views show it: `target` for one call, `steps` (target null) for a graph. */
export function executableView(target: Target): { target: TargetView | null; steps: StepDefinitionView[] | null } {
  return isStepsTarget(target) ? { target: null, steps: stepsView(target) } : { target: targetView(target), steps: null };
}

export function stepsView(graph: StepsTarget): StepDefinitionView[] {
  return graph.steps.map((step) => ({
    name: step.name,
    dependsOn: step.dependsOn,
    when: step.when,
    target: targetView(step.target),
    retry: step.retry === null ? null : retryView(step.retry),
    timeout: step.timeoutMs === null ? null : formatDuration(step.timeoutMs),
    concurrency: step.concurrency ?? null,
    priority: step.priority ?? null,
    fairness: step.fairness ?? null,
  }));
}

export function targetView(target: CallTarget): TargetView {
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
