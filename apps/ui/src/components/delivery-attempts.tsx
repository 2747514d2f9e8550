/**
 * A subscription's recent delivery attempts on one time axis, oldest left: one bar per attempt
 * where it was made, as tall as it took, taken (solid), refused with a status (hatched) or not
 * answered at all (dashed outline), and a tooltip telling the attempt.
 */
import { useMemo } from 'preact/hooks';
import type { SubscriptionDelivery } from '../data/wire/index.js';
import { Axes, Hatch } from './chart-frame.js';
import { formatElapsed } from '../logic/run-story.js';
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
            <Hatch id="attempt-refused" className="attempt-hatch" size={4} />
          </defs>
          <Axes
            {...{ left, top, right, width: chart.width, height: chart.height, baseline: chart.baseline }}
            scaleLabel={formatElapsed(chart.scaleMaxMs)}
            from={chart.from}
            to={chart.to !== chart.from ? chart.to : null}
            instantsInset={8}
          />
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
