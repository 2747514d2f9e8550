/**
 * A sensor's recent evaluations as a bar chart: one bar per tick, oldest left, as tall as the runs
 * it asked for, split into created (solid), deduplicated (hatched) and never committed (dashed
 * outline); a mark under each bar in its state's colour and shape, and a tooltip telling the tick.
 */
import { useMemo } from 'preact/hooks';
import type { SensorTick, SensorTickState } from '../data/wire/index.js';
import { EVALUATIONS_CHART, evaluationsChart, TICK_STATES } from '../logic/sensor-evaluations.js';
import { Axes, Hatch } from './chart-frame.js';

/** Each state's mark under its bar: a shape as well as a colour, so the states read without colour too. */
const MARKS: Record<SensorTickState, string> = { succeeded: '●', failed: '✕', skipped: '–', evaluating: '◌' };

export function SensorEvaluations({ ticks, labelledBy }: { ticks: readonly SensorTick[]; labelledBy: string }) {
  const chart = useMemo(() => evaluationsChart(ticks), [ticks]);
  const { left, top } = EVALUATIONS_CHART;
  const { barWidth } = chart;
  const states = new Set(ticks.map((t) => t.state));
  return (
    <>
      <div class="scroll">
        <svg
          data-testid="sensor-evaluations"
          class="sensor-evaluations"
          role="group"
          aria-labelledby={labelledBy}
          width={chart.width}
          height={chart.height}
          viewBox={`0 0 ${chart.width} ${chart.height}`}
        >
          <defs>
            <Hatch id="tick-deduplicated" className="tick-hatch" size={5} />
          </defs>
          <Axes
            {...{ left, top, right: EVALUATIONS_CHART.right, width: chart.width, height: chart.height, baseline: chart.baseline }}
            scaleLabel={String(chart.scaleMax)}
            from={chart.from}
            to={chart.bars.length > 1 ? chart.to : null}
            instantsInset={4}
          />
          {chart.bars.map((bar) => (
            <g key={bar.id} data-testid={`sensor-tick-${bar.id}`} data-state={bar.state} class={`tick-bar tick-${bar.state}`} role="img" aria-label={bar.words}>
              <title>{bar.words}</title>
              {/* The whole column answers the pointer, however short the bar. */}
              <rect class="tick-hit" x={bar.x - (chart.slot - barWidth) / 2} y={top} width={chart.slot} height={chart.baseline - top + EVALUATIONS_CHART.marker + 10} />
              {bar.created.height > 0 && <rect class="tick-created" x={bar.x} y={bar.created.y} width={barWidth} height={bar.created.height} />}
              {bar.deduplicated.height > 0 && <rect class="tick-deduplicated" x={bar.x} y={bar.deduplicated.y} width={barWidth} height={bar.deduplicated.height} />}
              {bar.uncommitted.height > 0 && <rect class="tick-uncommitted" x={bar.x + 0.75} y={bar.uncommitted.y} width={barWidth - 1.5} height={bar.uncommitted.height} />}
              {/* A tick that asked for nothing still shows on the baseline. */}
              <rect class="tick-stub" x={bar.x} y={chart.baseline - 2} width={barWidth} height={2} />
              <text class="tick-mark" x={bar.x + barWidth / 2} y={chart.baseline + EVALUATIONS_CHART.marker + 6} text-anchor="middle">
                {MARKS[bar.state]}
              </text>
            </g>
          ))}
        </svg>
      </div>
      <ul class="chart-legend" aria-label="Legend">
        <li>
          <span class="swatch tick-created" /> runs created
        </li>
        <li>
          <span class="swatch tick-deduplicated" /> deduplicated (a run key asked for before)
        </li>
        <li>
          <span class="swatch tick-uncommitted" /> asked for, not committed
        </li>
        {(['succeeded', 'failed', 'skipped', 'evaluating'] as const)
          .filter((state) => states.has(state))
          .map((state) => (
            <li key={state} class={`tick-${state}`}>
              <span class="tick-mark">{MARKS[state]}</span> {state}: {TICK_STATES[state]}
            </li>
          ))}
      </ul>
    </>
  );
}
