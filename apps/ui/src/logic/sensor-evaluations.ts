/**
 * A sensor's recent evaluations as the sensor page draws them: one bar per tick, oldest left, its
 * height the runs the evaluation asked for, split into the runs created, those deduplicated (a run
 * key asked for before) and those never committed (a failed or abandoned evaluation); its state
 * marked under the baseline; and each tick told in words (its tooltip and the table's).
 */
import type { SensorTick, SensorTickState } from '../data/wire/index.js';
import { formatElapsed } from './run-story.js';

/**
 * The chart's geometry, in SVG pixels: each tick gets a slot about `plotTarget` / ticks wide, kept
 * between `minSlot` and `maxSlot`, its bar `barShare` of it; the plot is at least `minPlotWidth`
 * wide, so the instants under its ends have room.
 */
export const EVALUATIONS_CHART = { minSlot: 20, maxSlot: 72, plotTarget: 640, barShare: 0.7, minPlotWidth: 360, plotHeight: 120, top: 16, left: 36, right: 12, marker: 8, bottom: 40 } as const;

export interface Segment {
  y: number;
  height: number;
}

export interface TickBar {
  id: string;
  state: SensorTickState;
  /** The left edge of the bar. */
  x: number;
  created: Segment;
  deduplicated: Segment;
  /** Asked for, but neither created nor deduplicated. */
  uncommitted: Segment;
  /** The tooltip: time, counts, duration, reason. */
  words: string;
}

export interface EvaluationsChart {
  width: number;
  height: number;
  /** The width of each bar, and of the slot each tick takes (its bar and the gap after it). */
  barWidth: number;
  slot: number;
  /** The y of the baseline (zero runs). */
  baseline: number;
  /** The count the top of the plot stands for. */
  scaleMax: number;
  bars: TickBar[];
  /** The oldest and newest tick drawn. */
  from: string | null;
  to: string | null;
}

/** Each state in a word, and what it means for the runs asked for. */
export const TICK_STATES: Record<SensorTickState, string> = {
  succeeded: 'committed what it asked for',
  failed: 'committed nothing',
  skipped: 'not started',
  evaluating: 'under way',
};

/** An instant as the dashboard prints it (see When): UTC, to the second. */
export function instantInWords(at: string): string {
  return at.replace('T', ' ').replace(/(\.\d+)?Z$/, 'Z');
}

/** What came of the runs one tick asked for: "3 runs asked for: 2 created, 1 deduplicated". */
export function countsInWords(tick: Pick<SensorTick, 'requested' | 'created' | 'deduplicated'>): string {
  if (tick.requested === 0) return 'no runs asked for';
  const parts = [`${tick.created} created`, `${tick.deduplicated} deduplicated`];
  const uncommitted = uncommittedOf(tick);
  if (uncommitted > 0) parts.push(`${uncommitted} not committed`);
  return `${tick.requested} ${tick.requested === 1 ? 'run' : 'runs'} asked for: ${parts.join(', ')}`;
}

/** One tick in words: when, its state, its runs, how long it took, and its reason. */
export function tickInWords(tick: SensorTick): string {
  const took = tick.durationMs === null ? 'still evaluating' : `took ${formatElapsed(tick.durationMs)}`;
  const reason = tick.reasonCode === null ? '' : ` · ${tick.reasonCode}${tick.reason ? `: ${tick.reason}` : ''}`;
  return `${instantInWords(tick.startedAt)} · ${tick.state} (${TICK_STATES[tick.state]}) · ${countsInWords(tick)} · ${took}${reason}`;
}

function uncommittedOf(tick: Pick<SensorTick, 'requested' | 'created' | 'deduplicated'>): number {
  return Math.max(0, tick.requested - tick.created - tick.deduplicated);
}

/** Lays out `ticks` (newest first, as the API lists them) as bars, oldest left. */
export function evaluationsChart(ticks: readonly SensorTick[], box: typeof EVALUATIONS_CHART = EVALUATIONS_CHART): EvaluationsChart {
  const oldestFirst = [...ticks].reverse();
  const scaleMax = Math.max(1, ...oldestFirst.map((t) => Math.max(t.requested, t.created + t.deduplicated)));
  const unit = box.plotHeight / scaleMax;
  const slot = Math.max(box.minSlot, Math.min(box.maxSlot, Math.floor(box.plotTarget / Math.max(1, oldestFirst.length))));
  const barWidth = Math.round(slot * box.barShare);
  const baseline = box.top + box.plotHeight;
  const bars = oldestFirst.map((tick, i): TickBar => {
    let y = baseline;
    const stack = (count: number): Segment => {
      const height = count * unit;
      y -= height;
      return { y, height };
    };
    const created = stack(tick.created);
    const deduplicated = stack(tick.deduplicated);
    const uncommitted = stack(uncommittedOf(tick));
    return { id: tick.id, state: tick.state, x: box.left + i * slot, created, deduplicated, uncommitted, words: tickInWords(tick) };
  });
  const plotWidth = Math.max(box.minPlotWidth, oldestFirst.length * slot);
  return {
    width: box.left + plotWidth + box.right,
    height: baseline + box.bottom,
    barWidth,
    slot,
    baseline,
    scaleMax,
    bars,
    from: oldestFirst[0]?.startedAt ?? null,
    to: oldestFirst[oldestFirst.length - 1]?.startedAt ?? null,
  };
}
