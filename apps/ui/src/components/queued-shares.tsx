/**
 * A queue's runs in state queued (due or not, held or not) as two small pictures: one stacked bar by priority (1 at the left), and a
 * bar per fairness key with the most queued runs. Nothing shows for a queue without queued runs, or
 * from an API that does not send the counts. The arithmetic is in logic/priority.ts.
 */
import type { Queue } from '../data/wire/index.js';
import { PRIORITIES, fairnessKeyBars, priorityInWords, prioritySegments, queuedByPriority } from '../logic/priority.js';

const BAR_WIDTH = 360;
const BAR_HEIGHT = 18;
const KEY_LABEL = 200;
const KEY_BAR = 200;
const KEY_ROW = 20;

/** The colour key of the priority bars, shown once under them. */
export function PriorityLegend() {
  return (
    <ul class="chart-legend" aria-label="Legend">
      {PRIORITIES.map((p) => (
        <li key={p}>
          <span class={`swatch priority-${p}`} /> {priorityInWords(p)}
        </li>
      ))}
    </ul>
  );
}

/** True when the queue has something to draw: the API sent its counts by priority and some run is queued. */
export function hasQueuedShares(queue: Queue): boolean {
  return (queuedByPriority(queue) ?? []).some((c) => c.queued > 0);
}

export function QueuedShares({ queue }: { queue: Queue }) {
  // An API before priorities sends neither count: nothing to draw.
  const counts = queuedByPriority(queue);
  if (counts === null) return null;
  const segments = prioritySegments(counts, BAR_WIDTH);
  if (segments.length === 0) return null;
  const total = segments.reduce((sum, s) => sum + s.queued, 0);
  const keys = fairnessKeyBars(queue.fairnessKeys, KEY_BAR);
  const keysHeight = keys.length * KEY_ROW + 4;
  return (
    <figure class="queued-shares" data-testid={`queued-shares-${queue.name}`}>
      <figcaption>
        <code>{queue.name}</code>: {total === 1 ? '1 run' : `${total} runs`} in state queued, by priority{keys.length > 0 && ', and the fairness keys with the most'}
      </figcaption>
      <svg data-testid="priority-bar" class="priority-bar" role="group" aria-label={`Queued runs of ${queue.name} by priority`} width={BAR_WIDTH} height={BAR_HEIGHT} viewBox={`0 0 ${BAR_WIDTH} ${BAR_HEIGHT}`}>
        <rect class="load-track" width={BAR_WIDTH} height={BAR_HEIGHT} rx={3} />
        {segments.map((s) => (
          <g key={s.priority} class={`priority-segment priority-${s.priority}`} data-priority={s.priority} data-queued={s.queued} role="img" aria-label={s.words}>
            <title>{s.words}</title>
            <rect x={s.x} width={s.width} height={BAR_HEIGHT} />
            {s.width >= 22 && (
              <text x={s.x + s.width / 2} y={BAR_HEIGHT / 2 + 4} text-anchor="middle">
                {s.queued}
              </text>
            )}
          </g>
        ))}
      </svg>
      {keys.length > 0 && (
        <svg
          data-testid="fairness-keys"
          class="fairness-keys"
          role="group"
          aria-label={`Fairness keys of ${queue.name} with the most queued runs`}
          width={KEY_LABEL + KEY_BAR + 48}
          height={keysHeight}
          viewBox={`0 0 ${KEY_LABEL + KEY_BAR + 48} ${keysHeight}`}
        >
          {keys.map((k, i) => (
            <g key={k.key} class="fairness-key" data-key={k.key} data-queued={k.queued} role="img" aria-label={k.words}>
              <title>{k.words}</title>
              <text class="chart-label" x={KEY_LABEL - 8} y={i * KEY_ROW + 15} text-anchor="end">
                {k.label}
              </text>
              <rect class="fairness-key-bar" x={KEY_LABEL} y={i * KEY_ROW + 4} width={Math.max(1, k.width)} height={14} />
              <text class="chart-label" x={KEY_LABEL + k.width + 6} y={i * KEY_ROW + 15}>
                {k.queued}
              </text>
            </g>
          ))}
        </svg>
      )}
    </figure>
  );
}
