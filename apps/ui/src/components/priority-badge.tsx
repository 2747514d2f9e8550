/** Marks a run whose priority is not the normal one: "P1" (first) to "P5" (last), the words in its tooltip. */
import { NORMAL_PRIORITY, priorityInWords } from '../logic/priority.js';

export function PriorityBadge({ priority }: { priority: number | undefined }) {
  if (priority === undefined || priority === NORMAL_PRIORITY) return null;
  const words = priorityInWords(priority);
  return (
    <span class={`badge badge-priority badge-priority-${priority}`} title={words} data-testid="priority-badge">
      P{priority}
      <span class="sr-only"> ({words})</span>
    </span>
  );
}
