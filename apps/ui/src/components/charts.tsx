/**
 * The dashboard's small SVG charts of runs: outcomes per bucket as stacked bars, a measure per
 * bucket as a line, queue depths as horizontal bars, and a schedule's runs as one mark each. Their
 * arithmetic is in logic/charts.ts; here they are only drawn. Each mark carries a title in words.
 */
import { useMemo } from 'preact/hooks';
import type { Queue, RunStatsBucket } from '../data/wire/index.js';
import { OUTCOMES, durationTicks, formatTick, linePaths, linearScale, niceTicks, runMarks, stackedBars, timeLabel, timeTicks, total, type ChartRun, type Plot } from '../logic/charts.js';

const WIDTH = 640;
const HEIGHT = 180;
const PLOT: Plot = { width: WIDTH, height: HEIGHT, left: 56, right: 8, top: 10, bottom: 24 };

/** The horizontal grid with its labels, and the time axis below. */
function Frame({ ticks, label, fromMs, toMs, bucketMs, plot = PLOT }: { ticks: number[]; label: (v: number) => string; fromMs: number; toMs: number; bucketMs: number; plot?: Plot }) {
  const max = ticks[ticks.length - 1]!;
  const y = linearScale(0, max, plot.height - plot.bottom, plot.top);
  const x = linearScale(fromMs, toMs, plot.left, plot.width - plot.right);
  return (
    <g class="chart-axis" aria-hidden="true">
      {ticks.map((t) => (
        <g key={t}>
          <line x1={plot.left - 4} y1={y(t)} x2={plot.width - plot.right} y2={y(t)} class={t === 0 ? '' : 'chart-grid'} />
          <text x={plot.left - 8} y={y(t) + 4} text-anchor="end">
            {label(t)}
          </text>
        </g>
      ))}
      {timeTicks(fromMs, toMs).map((t) => (
        <text key={t} class="chart-time" x={x(t)} y={plot.height - 6} text-anchor="middle">
          {timeLabel(t, bucketMs)}
        </text>
      ))}
    </g>
  );
}

interface BucketChartProps {
  buckets: readonly RunStatsBucket[];
  bucketMs: number;
  /** The id of the heading naming the chart. */
  labelledBy: string;
}

const windowOf = (buckets: readonly RunStatsBucket[], bucketMs: number) => {
  const fromMs = Date.parse(buckets[0]!.start);
  return { fromMs, toMs: Date.parse(buckets[buckets.length - 1]!.start) + bucketMs };
};

/** Runs per bucket, stacked by outcome (succeeded at the bottom). */
export function OutcomeBars({ buckets, bucketMs, labelledBy }: BucketChartProps) {
  const ticks = niceTicks(Math.max(1, ...buckets.map(total)));
  const bars = useMemo(() => stackedBars(buckets, PLOT, ticks[ticks.length - 1]!), [buckets]);
  const { fromMs, toMs } = windowOf(buckets, bucketMs);
  return (
    <>
      <div class="scroll">
        <svg data-testid="outcome-bars" class="run-chart" role="group" aria-labelledby={labelledBy} width={WIDTH} height={HEIGHT} viewBox={`0 0 ${WIDTH} ${HEIGHT}`}>
          <Frame ticks={ticks} label={String} fromMs={fromMs} toMs={toMs} bucketMs={bucketMs} />
          {bars.map((bar) => (
            <g key={bar.start} class="outcome-bar" data-start={bar.start} role="img" aria-label={`${timeLabel(Date.parse(bar.start), bucketMs)}: ${bar.words}`}>
              <title>{`${timeLabel(Date.parse(bar.start), bucketMs)}: ${bar.words}`}</title>
              {bar.segments.map((s) => (
                <rect key={s.outcome} class={`bar-segment outcome-${s.outcome}`} data-outcome={s.outcome} x={bar.x} y={s.y} width={bar.width} height={s.height} />
              ))}
            </g>
          ))}
        </svg>
      </div>
      <ul class="chart-legend" aria-label="Legend">
        {OUTCOMES.map((o) => (
          <li key={o}>
            <span class={`swatch outcome-${o}`} /> {o}
          </li>
        ))}
      </ul>
    </>
  );
}

/** One measure per bucket as a line with a dot per bucket that has one; an empty bucket breaks the line. */
export function BucketLine({
  buckets,
  bucketMs,
  labelledBy,
  values,
  format,
  kind,
  testId,
}: BucketChartProps & { values: readonly (number | null)[]; format: (v: number) => string; kind: 'share' | 'duration'; testId: string }) {
  const present = values.filter((v): v is number => v !== null);
  const ticks = kind === 'share' ? niceTicks(Math.max(0.01, ...present)) : durationTicks(Math.max(1, ...present));
  const max = ticks[ticks.length - 1]!;
  const paths = linePaths(values, PLOT, max);
  const { fromMs, toMs } = windowOf(buckets, bucketMs);
  let index = 0;
  const points = values.flatMap((v, i) => (v === null ? [] : [{ v, start: buckets[i]!.start }]));
  return (
    <div class="scroll">
      <svg data-testid={testId} class="run-chart" role="group" aria-labelledby={labelledBy} width={WIDTH} height={HEIGHT} viewBox={`0 0 ${WIDTH} ${HEIGHT}`}>
        <Frame ticks={ticks} label={format} fromMs={fromMs} toMs={toMs} bucketMs={bucketMs} />
        {paths.map((path) => (
          <polyline key={`${path[0]!.x}`} class="chart-line" points={path.map((p) => `${p.x},${p.y}`).join(' ')} />
        ))}
        {paths.flat().map((p) => {
          const point = points[index++]!;
          const words = `${timeLabel(Date.parse(point.start), bucketMs)}: ${format(point.v)}`;
          return (
            <circle key={point.start} class="chart-point" data-start={point.start} cx={p.x} cy={p.y} r={3} role="img" aria-label={words}>
              <title>{words}</title>
            </circle>
          );
        })}
      </svg>
    </div>
  );
}

/** Each queue's runs waiting for a worker (queued) and held back by a limit, as horizontal bars. */
export function QueueDepth({ queues, labelledBy }: { queues: readonly Queue[]; labelledBy: string }) {
  const row = 26;
  const left = 140;
  const height = queues.length * row + 8;
  const ticks = niceTicks(Math.max(1, ...queues.map((q) => q.queued + q.held)));
  const x = linearScale(0, ticks[ticks.length - 1]!, left, WIDTH - 80);
  return (
    <div class="scroll">
      <svg data-testid="queue-depth" class="run-chart" role="group" aria-labelledby={labelledBy} width={WIDTH} height={height} viewBox={`0 0 ${WIDTH} ${height}`}>
        {queues.map((q, i) => {
          const words = `${q.name}: ${q.queued} queued, ${q.held} held, ${q.running} running`;
          return (
            <g key={q.name} class="queue-bar" data-queue={q.name} role="img" aria-label={words}>
              <title>{words}</title>
              <text class="chart-label" x={left - 8} y={i * row + 20} text-anchor="end">
                {q.name}
              </text>
              <rect class="depth-queued" x={left} y={i * row + 8} width={x(q.queued) - left} height={16} />
              <rect class="depth-held" x={x(q.queued)} y={i * row + 8} width={x(q.queued + q.held) - x(q.queued)} height={16} />
              <text class="chart-label" x={x(q.queued + q.held) + 6} y={i * row + 20}>
                {q.queued + q.held === 0 ? 'empty' : `${q.queued} queued${q.held > 0 ? `, ${q.held} held` : ''}`}
              </text>
            </g>
          );
        })}
      </svg>
    </div>
  );
}

/** A schedule's runs, one mark each where it started, as high as it took (or as late as it started), coloured by how it ended. */
export function RunScatter({ runs, measure, labelledBy, testId }: { runs: readonly ChartRun[]; measure: 'duration' | 'lateness'; labelledBy: string; testId: string }) {
  const chart = useMemo(() => runMarks(runs, PLOT, measure), [runs, measure]);
  const ticks = durationTicks(chart.maxMs);
  const span = Math.max(chart.toMs - chart.fromMs, 1);
  return (
    <div class="scroll">
      <svg data-testid={testId} class="run-chart" role="group" aria-labelledby={labelledBy} width={WIDTH} height={HEIGHT} viewBox={`0 0 ${WIDTH} ${HEIGHT}`}>
        <Frame ticks={ticks} label={formatTick} fromMs={chart.fromMs} toMs={chart.fromMs + span} bucketMs={span > 2 * 86_400_000 ? 86_400_000 : 60_000} />
        {chart.marks.map((m) => (
          <circle key={m.id} class={`run-mark outcome-${m.state}`} data-run-id={m.id} data-state={m.state} cx={m.x} cy={m.y} r={4} role="img" aria-label={m.words}>
            <title>{m.words}</title>
          </circle>
        ))}
      </svg>
    </div>
  );
}
