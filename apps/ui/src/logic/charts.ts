/**
 * The arithmetic of the dashboard's small charts, apart from their drawing: linear scales, round
 * ticks, the UTC labels of a time axis, the stacked bars of run outcomes per bucket, the points of a
 * line, and a schedule's runs as marks (when each started, how long it took, how it ended).
 */
import { formatElapsed } from './run-story.js';

/** The outcomes a run ends with, bottom to top in a stacked bar. */
export const OUTCOMES = ['succeeded', 'failed', 'dead', 'cancelled'] as const;
export type Outcome = (typeof OUTCOMES)[number];

/** A bucket of GET /v1/stats/runs, as far as the charts read it. */
export interface StatsBucket {
  start: string;
  succeeded: number;
  failed: number;
  dead: number;
  cancelled: number;
  durationP50Ms: number | null;
  durationP95Ms: number | null;
  latenessP95Ms: number | null;
}

/** A function from [d0, d1] onto [r0, r1]; a domain of no width maps everything to r0. */
export function linearScale(d0: number, d1: number, r0: number, r1: number): (value: number) => number {
  const span = d1 - d0;
  return (value) => (span === 0 ? r0 : r0 + ((value - d0) / span) * (r1 - r0));
}

/** The smallest step of 1, 2 or 5 times a power of ten that splits [0, max] in at most `count` parts. */
export function niceStep(max: number, count: number): number {
  if (!(max > 0) || count < 1) return 1;
  const raw = max / count;
  const power = 10 ** Math.floor(Math.log10(raw));
  for (const factor of [1, 2, 5, 10]) if (factor * power >= raw) return factor * power;
  return 10 * power;
}

/** Round ticks from 0 up to the first one at or above `max` (at most `count` steps): the last is the top of the scale. */
export function niceTicks(max: number, count = 4): number[] {
  const step = niceStep(max, count);
  const ticks = [0];
  while (ticks[ticks.length - 1]! < max) ticks.push(Math.round((ticks[ticks.length - 1]! + step) * 1e9) / 1e9);
  if (ticks.length === 1) ticks.push(step);
  return ticks;
}

/** Duration ticks: a round number of ms, seconds, minutes or hours, so the labels read well. */
export function durationTicks(maxMs: number, count = 4): number[] {
  const units = [1, 1_000, 60_000, 3_600_000];
  const unit = [...units].reverse().find((u) => maxMs >= u * 2) ?? 1;
  return niceTicks(maxMs / unit, count).map((t) => t * unit);
}

const pad = (n: number) => String(n).padStart(2, '0');

/** A time axis label in UTC: `14:00` within a day, `Mar 1` at midnight or with buckets of a day. */
export function timeLabel(ms: number, bucketMs: number): string {
  const d = new Date(ms);
  const months = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
  if (bucketMs >= 86_400_000 || (d.getUTCHours() === 0 && d.getUTCMinutes() === 0)) return `${months[d.getUTCMonth()]} ${d.getUTCDate()}`;
  return `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}`;
}

/** The instants of a time axis from `fromMs` to `toMs`: whole multiples of a round step, at most `count`. */
export function timeTicks(fromMs: number, toMs: number, count = 6): number[] {
  if (!(toMs > fromMs)) return [fromMs];
  const steps = [60_000, 300_000, 900_000, 1_800_000, 3_600_000, 3 * 3_600_000, 6 * 3_600_000, 12 * 3_600_000, 86_400_000, 7 * 86_400_000];
  const step = steps.find((s) => (toMs - fromMs) / s <= count) ?? steps[steps.length - 1]!;
  const ticks: number[] = [];
  for (let t = Math.ceil(fromMs / step) * step; t <= toMs; t += step) ticks.push(t);
  return ticks;
}

export const total = (b: StatsBucket): number => b.succeeded + b.failed + b.dead + b.cancelled;

/** The share of a bucket's runs that ended failed or dead; null for a bucket without runs. */
export function failureRate(b: StatsBucket): number | null {
  const all = total(b);
  return all === 0 ? null : (b.failed + b.dead) / all;
}

/** `0.125` → "12.5%", `1` → "100%". */
export function percent(share: number): string {
  return `${Math.round(share * 1000) / 10}%`;
}

export interface Plot {
  width: number;
  height: number;
  left: number;
  right: number;
  top: number;
  bottom: number;
}

export interface BarSegment {
  outcome: Outcome;
  y: number;
  height: number;
}

export interface StackedBar {
  start: string;
  x: number;
  width: number;
  segments: BarSegment[];
  words: string;
}

/** One bar per bucket with runs, its outcomes stacked bottom up; `max` is the top of the scale. */
export function stackedBars(buckets: readonly StatsBucket[], plot: Plot, max: number): StackedBar[] {
  const n = Math.max(buckets.length, 1);
  const slot = (plot.width - plot.left - plot.right) / n;
  const y = linearScale(0, max, plot.height - plot.bottom, plot.top);
  const bars: StackedBar[] = [];
  buckets.forEach((b, i) => {
    if (total(b) === 0) return;
    let below = 0;
    const segments: BarSegment[] = [];
    for (const outcome of OUTCOMES) {
      const count = b[outcome];
      if (count === 0) continue;
      const top = y(below + count);
      segments.push({ outcome, y: top, height: y(below) - top });
      below += count;
    }
    const words = OUTCOMES.filter((o) => b[o] > 0)
      .map((o) => `${b[o]} ${o}`)
      .join(', ');
    bars.push({ start: b.start, x: plot.left + i * slot + slot * 0.1, width: Math.max(slot * 0.8, 1), segments, words });
  });
  return bars;
}

/**
 * The points of a line over the buckets (each at its bucket's middle); a bucket without a value
 * breaks the line, so the answer is a list of runs of points.
 */
export function linePaths(values: readonly (number | null)[], plot: Plot, max: number): { x: number; y: number }[][] {
  const n = Math.max(values.length, 1);
  const slot = (plot.width - plot.left - plot.right) / n;
  const y = linearScale(0, max, plot.height - plot.bottom, plot.top);
  const paths: { x: number; y: number }[][] = [];
  let current: { x: number; y: number }[] | null = null;
  values.forEach((value, i) => {
    if (value === null) {
      current = null;
      return;
    }
    if (current === null) paths.push((current = []));
    current.push({ x: plot.left + (i + 0.5) * slot, y: y(value) });
  });
  return paths;
}

/** A run as a schedule's chart reads it. */
export interface ChartRun {
  id: string;
  state: string;
  scheduledFor: string;
  startedAt: string | null;
  finishedAt: string | null;
}

export interface RunMark {
  id: string;
  state: string;
  x: number;
  y: number;
  /** How long it ran, or null while it runs or when it never started (drawn on the baseline). */
  durationMs: number | null;
  latenessMs: number | null;
  words: string;
}

/**
 * Each run at when it started (or its slot, if it never started), as high as it took (or, measuring
 * lateness, as long after its slot as it started); the time axis spans the runs.
 */
export function runMarks(runs: readonly ChartRun[], plot: Plot, measure: 'duration' | 'lateness' = 'duration'): { marks: RunMark[]; fromMs: number; toMs: number; maxMs: number } {
  const timed = runs.map((r) => {
    const startMs = Date.parse(r.startedAt ?? r.scheduledFor);
    const durationMs = r.startedAt !== null && r.finishedAt !== null ? Date.parse(r.finishedAt) - Date.parse(r.startedAt) : null;
    const latenessMs = r.startedAt !== null ? Math.max(0, Date.parse(r.startedAt) - Date.parse(r.scheduledFor)) : null;
    return { r, startMs, durationMs, latenessMs };
  });
  const fromMs = Math.min(...timed.map((t) => t.startMs));
  const toMs = Math.max(...timed.map((t) => t.startMs));
  const measured = (t: { durationMs: number | null; latenessMs: number | null }) => (measure === 'duration' ? t.durationMs : t.latenessMs) ?? 0;
  const maxMs = durationTicks(Math.max(1, ...timed.map(measured))).at(-1)!;
  // A single instant still gets a span, so its one mark sits in the middle.
  const x = fromMs === toMs ? () => (plot.left + plot.width - plot.right) / 2 : linearScale(fromMs, toMs, plot.left + 4, plot.width - plot.right - 4);
  const y = linearScale(0, maxMs, plot.height - plot.bottom, plot.top);
  const marks = timed.map(({ r, startMs, durationMs, latenessMs }) => ({
    id: r.id,
    state: r.state,
    x: x(startMs),
    y: y(measured({ durationMs, latenessMs })),
    durationMs,
    latenessMs,
    words: `${r.state}${durationMs === null ? '' : `, took ${formatElapsed(durationMs)}`}${latenessMs === null ? ', never started' : `, started ${formatElapsed(latenessMs)} after its slot`}`,
  }));
  return { marks, fromMs, toMs, maxMs };
}

/** A duration tick: `0`, `500 ms`, `2 s`, `5 min`, `3 h`. */
export function formatTick(ms: number): string {
  if (ms === 0) return '0';
  if (ms < 1_000) return `${ms} ms`;
  if (ms < 60_000) return `${ms / 1_000} s`;
  if (ms < 3_600_000) return `${ms / 60_000} min`;
  return `${ms / 3_600_000} h`;
}
