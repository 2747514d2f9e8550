/** How a run, or each run of a schedule, shares its queue with the others, in words for the CLI's human output. */
import { DEFAULT_PRIORITY } from '@kairos/domain';

/**
 * Its priority when not the default, and its fairness key with its weight when it has one, e.g.
 * "priority 1, fairness key tenant-a (weight 2)"; null when it has neither.
 */
export function shareWords(priority: number, fairness: { key: string; weight: number } | null): string | null {
  const words: string[] = [];
  if (priority !== DEFAULT_PRIORITY) words.push(`priority ${priority}`);
  if (fairness !== null) words.push(`fairness key ${fairness.key} (weight ${fairness.weight})`);
  return words.length === 0 ? null : words.join(', ');
}
