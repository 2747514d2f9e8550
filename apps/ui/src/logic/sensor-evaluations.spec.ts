import { describe, expect, it } from 'vitest';
import type { SensorTick } from '../data/wire/index.js';
import { countsInWords, EVALUATIONS_CHART, evaluationsChart, tickInWords } from './sensor-evaluations.js';

const tick = (id: string, fields: Partial<SensorTick> = {}): SensorTick => ({
  id,
  sensorId: 's1',
  runId: `run-${id}`,
  state: 'succeeded',
  requested: 0,
  created: 0,
  deduplicated: 0,
  runIds: [],
  cursorBefore: null,
  cursorAfter: null,
  reasonCode: null,
  reason: null,
  startedAt: '2026-05-01T10:00:00Z',
  finishedAt: '2026-05-01T10:00:00.250Z',
  durationMs: 250,
  ...fields,
});

describe('evaluationsChart', () => {
  const { left, maxSlot, minPlotWidth, minSlot, plotHeight, top } = EVALUATIONS_CHART;

  it('draws one bar per tick, oldest left, from ticks listed newest first', () => {
    const chart = evaluationsChart([tick('c', { startedAt: '2026-05-01T10:02:00Z' }), tick('b', { startedAt: '2026-05-01T10:01:00Z' }), tick('a')]);
    expect(chart.bars.map((b) => b.id)).toEqual(['a', 'b', 'c']);
    // Few ticks get wide slots; the plot keeps its least width.
    expect(chart.slot).toBe(maxSlot);
    expect(chart.barWidth).toBeLessThan(chart.slot);
    expect(chart.bars.map((b) => b.x)).toEqual([left, left + maxSlot, left + 2 * maxSlot]);
    expect(chart.width).toBe(left + minPlotWidth + EVALUATIONS_CHART.right);
    expect(chart.from).toBe('2026-05-01T10:00:00Z');
    expect(chart.to).toBe('2026-05-01T10:02:00Z');
  });

  it('scales bars to the most runs any tick asked for, stacking created, deduplicated, then what was never committed', () => {
    const chart = evaluationsChart([tick('big', { requested: 4, created: 3, deduplicated: 1 }), tick('failed', { state: 'failed', requested: 2 }), tick('half', { requested: 2, created: 1, deduplicated: 1 })]);
    expect(chart.scaleMax).toBe(4);
    const unit = plotHeight / 4;
    const [half, failed, big] = chart.bars;
    expect(big!.created).toEqual({ y: chart.baseline - 3 * unit, height: 3 * unit });
    expect(big!.deduplicated).toEqual({ y: chart.baseline - 4 * unit, height: unit });
    expect(big!.uncommitted.height).toBe(0);
    expect(half!.created.height).toBe(unit);
    expect(failed!.created.height + failed!.deduplicated.height).toBe(0);
    expect(failed!.uncommitted).toEqual({ y: chart.baseline - 2 * unit, height: 2 * unit });
    expect(failed!.state).toBe('failed');
    expect(chart.baseline).toBe(top + plotHeight);
  });

  it('narrows the slots for many ticks, down to the least slot', () => {
    const many = evaluationsChart(Array.from({ length: 60 }, (_, i) => tick(`t${i}`)));
    expect(many.slot).toBe(Math.max(minSlot, Math.floor(EVALUATIONS_CHART.plotTarget / 60)));
    expect(many.width).toBe(left + 60 * many.slot + EVALUATIONS_CHART.right);
    expect(many.bars[59]!.x).toBe(left + 59 * many.slot);
  });

  it('keeps a scale of one run when no tick asked for any, and has a width for no ticks at all', () => {
    expect(evaluationsChart([tick('quiet'), tick('skipped', { state: 'skipped' })]).scaleMax).toBe(1);
    const empty = evaluationsChart([]);
    expect(empty.bars).toEqual([]);
    expect(empty.width).toBeGreaterThan(0);
    expect(empty.from).toBeNull();
  });
});

describe('tick words', () => {
  it('tells the time, state, runs, duration and reason', () => {
    expect(tickInWords(tick('t', { requested: 3, created: 2, deduplicated: 1 }))).toBe(
      '2026-05-01 10:00:00Z · succeeded (committed what it asked for) · 3 runs asked for: 2 created, 1 deduplicated · took 250 ms',
    );
    expect(tickInWords(tick('t', { state: 'failed', requested: 1, reasonCode: 'SENSOR_CURSOR_MOVED', reason: 'the cursor moved' }))).toBe(
      '2026-05-01 10:00:00Z · failed (committed nothing) · 1 run asked for: 0 created, 0 deduplicated, 1 not committed · took 250 ms · SENSOR_CURSOR_MOVED: the cursor moved',
    );
    expect(tickInWords(tick('t', { state: 'evaluating', finishedAt: null, durationMs: null }))).toBe('2026-05-01 10:00:00Z · evaluating (under way) · no runs asked for · still evaluating');
    expect(countsInWords({ requested: 0, created: 0, deduplicated: 0 })).toBe('no runs asked for');
  });
});
