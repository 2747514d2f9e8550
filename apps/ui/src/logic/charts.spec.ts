import { describe, expect, it } from 'vitest';
import { durationTicks, failureRate, formatTick, linePaths, linearScale, niceStep, niceTicks, percent, runMarks, stackedBars, timeLabel, timeTicks, type StatsBucket } from './charts.js';

const bucket = (start: string, counts: Partial<StatsBucket> = {}): StatsBucket => ({
  start,
  succeeded: 0,
  failed: 0,
  dead: 0,
  cancelled: 0,
  durationP50Ms: null,
  durationP95Ms: null,
  latenessP95Ms: null,
  ...counts,
});
const plot = { width: 140, height: 120, left: 40, right: 0, top: 10, bottom: 10 };

describe('linearScale', () => {
  it.each([
    [0, 10, 0, 100, 5, 50],
    [0, 10, 100, 0, 2, 80],
    [5, 5, 7, 9, 5, 7],
    [-10, 10, 0, 20, 0, 10],
  ])('maps [%d, %d] onto [%d, %d]: %d → %d', (d0, d1, r0, r1, value, expected) => {
    expect(linearScale(d0, d1, r0, r1)(value)).toBe(expected);
  });
});

describe('niceStep and niceTicks', () => {
  it.each([
    [10, 4, 5, [0, 5, 10]],
    [7, 4, 2, [0, 2, 4, 6, 8]],
    [1, 4, 0.5, [0, 0.5, 1]],
    [0.3, 4, 0.1, [0, 0.1, 0.2, 0.3]],
    [950, 4, 500, [0, 500, 1000]],
    [0, 4, 1, [0, 1]],
    [1234, 5, 500, [0, 500, 1000, 1500]],
  ])('max %d in %d parts: step %d, ticks %j', (max, count, step, ticks) => {
    expect(niceStep(max, count)).toBe(step);
    expect(niceTicks(max, count)).toEqual(ticks);
  });
});

describe('durationTicks', () => {
  it.each([
    [800, [0, 200, 400, 600, 800]],
    [4_800, [0, 2_000, 4_000, 6_000]],
    [114_000, [0, 50_000, 100_000, 150_000]],
    [150_000, [0, 60_000, 120_000, 180_000]],
    [3 * 3_600_000, [0, 3_600_000, 7_200_000, 10_800_000]],
  ])('%d ms: %j', (max, ticks) => {
    expect(durationTicks(max)).toEqual(ticks);
  });
});

describe('time axis', () => {
  it.each([
    ['2026-03-01T14:00:00Z', 3_600_000, '14:00'],
    ['2026-03-01T09:05:00Z', 60_000, '09:05'],
    ['2026-03-01T00:00:00Z', 3_600_000, 'Mar 1'],
    ['2026-03-07T13:00:00Z', 86_400_000, 'Mar 7'],
  ])('%s in buckets of %d ms reads %s', (at, bucketMs, label) => {
    expect(timeLabel(Date.parse(at), bucketMs)).toBe(label);
  });

  it.each([
    ['a day, every 6 hours', '2026-03-01T00:20:00Z', '2026-03-02T00:20:00Z', 6, ['06:00', '12:00', '18:00', '00:00']],
    ['three hours, every 30 minutes', '2026-03-01T00:00:00Z', '2026-03-01T03:00:00Z', 6, ['00:00', '00:30', '01:00', '01:30', '02:00', '02:30', '03:00']],
    ['ten minutes, every 5', '2026-03-01T00:01:00Z', '2026-03-01T00:11:00Z', 6, ['00:05', '00:10']],
  ])('ticks %s', (_, from, to, count, expected) => {
    const ticks = timeTicks(Date.parse(from), Date.parse(to), count);
    expect(ticks.length).toBeLessThanOrEqual(count + 1);
    expect(ticks.map((t) => new Date(t).toISOString().slice(11, 16))).toEqual(expected);
  });
});

describe('failure rate', () => {
  it.each([
    [{ succeeded: 3, failed: 1 }, 0.25, '25%'],
    [{ succeeded: 1, dead: 1, cancelled: 1 }, 1 / 3, '33.3%'],
    [{ cancelled: 2 }, 0, '0%'],
    [{}, null, null],
  ])('%j: %s', (counts, rate, words) => {
    const share = failureRate(bucket('2026-03-01T00:00:00Z', counts));
    expect(share).toBe(rate);
    if (share !== null) expect(percent(share)).toBe(words);
  });
});

describe('stackedBars', () => {
  it('stacks the outcomes of each bucket with runs bottom up, and leaves empty buckets out', () => {
    const bars = stackedBars([bucket('a', { succeeded: 5, dead: 5 }), bucket('b'), bucket('c', { failed: 10 }), bucket('d', { cancelled: 1 })], plot, 10);
    expect(bars.map((b) => [b.start, b.x, b.width])).toEqual([
      ['a', 42.5, 20],
      ['c', 92.5, 20],
      ['d', 117.5, 20],
    ]);
    expect(bars[0]!.segments).toEqual([
      { outcome: 'succeeded', y: 60, height: 50 },
      { outcome: 'dead', y: 10, height: 50 },
    ]);
    expect(bars[0]!.words).toBe('5 succeeded, 5 dead');
    expect(bars[1]!.segments).toEqual([{ outcome: 'failed', y: 10, height: 100 }]);
    expect(bars[2]!.segments).toEqual([{ outcome: 'cancelled', y: 100, height: 10 }]);
  });
});

describe('linePaths', () => {
  it.each([
    ['an unbroken line', [0, 5, 10, 5], [[[52.5, 110], [77.5, 60], [102.5, 10], [127.5, 60]]]],
    ['a gap breaks it', [10, null, 0, 0], [[[52.5, 10]], [[102.5, 110], [127.5, 110]]]],
    ['nothing to draw', [null, null], []],
  ])('%s', (_, values, expected) => {
    expect(linePaths(values, plot, 10).map((path) => path.map((p) => [p.x, p.y]))).toEqual(expected);
  });
});

describe('runMarks', () => {
  const run = (id: string, state: string, scheduledFor: string, startedAt: string | null, finishedAt: string | null) => ({ id, state, scheduledFor, startedAt, finishedAt });

  it('places each run at when it started, as high as it took, with its lateness in words', () => {
    const chart = runMarks(
      [
        run('a', 'succeeded', '2026-03-01T00:00:00Z', '2026-03-01T00:00:01Z', '2026-03-01T00:00:03Z'),
        run('b', 'dead', '2026-03-01T00:01:00Z', '2026-03-01T00:01:00Z', '2026-03-01T00:01:04Z'),
        run('c', 'cancelled', '2026-03-01T00:02:00Z', null, '2026-03-01T00:02:30Z'),
        run('d', 'running', '2026-03-01T00:01:30Z', '2026-03-01T00:01:30Z', null),
      ],
      plot,
    );
    expect(chart.maxMs).toBe(4_000);
    expect(chart.fromMs).toBe(Date.parse('2026-03-01T00:00:01Z'));
    expect(chart.toMs).toBe(Date.parse('2026-03-01T00:02:00Z'));
    expect(chart.marks.map((m) => [m.id, m.durationMs, m.latenessMs, m.y])).toEqual([
      ['a', 2_000, 1_000, 60],
      ['b', 4_000, 0, 10],
      ['c', null, null, 110],
      ['d', null, 0, 110],
    ]);
    expect(chart.marks[0]!.x).toBe(44);
    expect(chart.marks[2]!.x).toBe(136);
    expect(chart.marks[0]!.words).toBe('succeeded, took 2.0 s, started 1.0 s after its slot');
    expect(chart.marks[2]!.words).toBe('cancelled, never started');
  });

  it('measures lateness instead when asked', () => {
    const chart = runMarks(
      [run('a', 'succeeded', '2026-03-01T00:00:00Z', '2026-03-01T00:00:03Z', '2026-03-01T00:00:04Z'), run('b', 'succeeded', '2026-03-01T00:01:00Z', '2026-03-01T00:01:00Z', '2026-03-01T00:01:09Z')],
      plot,
      'lateness',
    );
    expect(chart.maxMs).toBe(3_000);
    expect(chart.marks.map((m) => m.y)).toEqual([10, 110]);
  });

  it('puts a lone run in the middle', () => {
    const chart = runMarks([run('a', 'succeeded', '2026-03-01T00:00:00Z', '2026-03-01T00:00:00Z', '2026-03-01T00:00:00.500Z')], plot);
    expect(chart.maxMs).toBe(600);
    expect(chart.marks[0]).toMatchObject({ x: 90, durationMs: 500 });
  });
});

describe('formatTick', () => {
  it.each([
    [0, '0'],
    [200, '200 ms'],
    [2_000, '2 s'],
    [1_500, '1.5 s'],
    [120_000, '2 min'],
    [10_800_000, '3 h'],
  ])('%d ms reads %s', (ms, words) => {
    expect(formatTick(ms)).toBe(words);
  });
});
