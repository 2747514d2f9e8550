/**
 * A subscription's recent delivery attempts on one time axis, oldest left: one bar per attempt
 * where it was made, as tall as it took, taken (solid), refused with a status (hatched) or not
 * answered at all (dashed outline), and a tooltip telling the attempt.
 */
import { useMemo } from 'preact/hooks';
import type { SubscriptionDelivery } from '../data/wire.js';
import { formatElapsed } from '../logic/run-story.js';
import { instantInWords } from '../logic/sensor-evaluations.js';
import { ATTEMPT_OUTCOMES, ATTEMPTS_CHART, attemptsChart, type AttemptOutcome } from '../logic/subscriptions.js';

const OUTCOMES: readonly AttemptOutcome[] = ['taken', 'refused', 'unanswered'];

export function DeliveryAttempts({ deliveries, labelledBy }: { deliveries: readonly SubscriptionDelivery[]; labelledBy: string }) {
  const chart = useMemo(() => attemptsChart(deliveries), [deliveries]);
  const { barWidth, gap, left, top, right } = ATTEMPTS_CHART;
  return (
    <>
      <div class="scroll">
        <svg
          data-testid="delivery-attempts"
          class="delivery-attempts"
          role="group"
          aria-labelledby={labelledBy}
          width={chart.width}
          height={chart.height}
          viewBox={`0 0 ${chart.width} ${chart.height}`}
        >
          <defs>
            <pattern id="attempt-refused" class="attempt-hatch" width={4} height={4} patternUnits="userSpaceOnUse" patternTransform="rotate(45)">
              <rect width={4} height={4} />
              <line x1={0} y1={0} x2={0} y2={4} />
            </pattern>
          </defs>
          <g class="chart-axis" aria-hidden="true">
            <line x1={left - 4} y1={top} x2={chart.width} y2={top} class="chart-grid" />
            <text x={left - 8} y={top + 4} text-anchor="end">
              {formatElapsed(chart.scaleMaxMs)}
            </text>
            <line x1={left - 4} y1={chart.baseline} x2={chart.width} y2={chart.baseline} />
            <text x={left - 8} y={chart.baseline + 4} text-anchor="end">
              0
            </text>
            {chart.from && (
              <text x={left} y={chart.height - 8}>
                {instantInWords(chart.from)}
              </text>
            )}
            {chart.to && chart.to !== chart.from && (
              <text x={chart.width - right} y={chart.height - 8} text-anchor="end">
                {instantInWords(chart.to)}
              </text>
            )}
          </g>
          {chart.marks.map((mark) => (
            <g
              key={mark.key}
              data-testid={`delivery-attempt-${mark.key}`}
              data-outcome={mark.outcome}
              class={`attempt-mark attempt-${mark.outcome}`}
              role="img"
              aria-label={mark.words}
            >
              <title>{mark.words}</title>
              {/* The whole column answers the pointer, however short the bar. */}
              <rect class="attempt-hit" x={mark.x - gap / 2} y={top} width={barWidth + gap} height={chart.baseline - top} />
              <rect class="attempt-bar" x={mark.x} y={mark.y} width={barWidth} height={mark.height} />
            </g>
          ))}
        </svg>
      </div>
      <ul class="chart-legend" aria-label="Legend">
        {OUTCOMES.map((outcome) => (
          <li key={outcome}>
            <span class={`swatch attempt-${outcome}`} /> {ATTEMPT_OUTCOMES[outcome]}
          </li>
        ))}
        <li class="muted">height: how long the attempt took</li>
      </ul>
    </>
  );
}
