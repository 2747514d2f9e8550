import { describe, expect, it } from 'vitest';
import { cronMatches, parseCron } from './cron.js';
import { DEFAULT_DST_POLICY, DST_GAP_POLICIES, DST_OVERLAP_POLICIES, resolveDstPolicy, type DstPolicy, type ResolvedDstPolicy } from './dst-policy.js';
import { nextFireAfter, nextFireTimes, previousFireBefore, type Recurrence } from './recurrence.js';
import { instantsForWallTime, shiftGapWallTime, toWallTime } from './zone.js';

/**
 * The fastest of five timings of `work`, in ms: on a shared machine one timing can include a
 * preemption or a GC pause; the fastest is what the algorithm costs.
 */
function fastestMs(work: () => unknown): number {
  let fastest = Infinity;
  for (let i = 0; i < 5; i += 1) {
    const started = performance.now();
    work();
    fastest = Math.min(fastest, performance.now() - started);
  }
  return fastest;
}

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const T0 = Date.parse('2026-03-01T00:00:00Z');

describe('policies', () => {
  it('defaults to auto on both sides', () => {
    expect(DEFAULT_DST_POLICY).toEqual({ gap: 'auto', overlap: 'auto' });
    expect(DST_GAP_POLICIES).toEqual(['auto', 'shift', 'skip']);
    expect(DST_OVERLAP_POLICIES).toEqual(['auto', 'first', 'last', 'both']);
  });
});

describe('every', () => {
  const every: Recurrence = { kind: 'every', everyMs: 15 * MINUTE, anchorMs: T0 };

  it.each([
    ['long before the anchor', T0 - 10 * DAY, T0],
    ['just before the anchor', T0 - 1, T0],
    ['at the anchor (strictly after)', T0, T0 + 15 * MINUTE],
    ['between slots', T0 + 7 * MINUTE, T0 + 15 * MINUTE],
    ['on a slot (strictly after)', T0 + 30 * MINUTE, T0 + 45 * MINUTE],
    ['a millisecond before a slot', T0 + 30 * MINUTE - 1, T0 + 30 * MINUTE],
  ])('next after %s', (_, after, next) => {
    expect(nextFireAfter(every, after)).toBe(next);
  });

  it.each([
    ['at the anchor: no slot before k = 0', T0, null],
    ['before the anchor', T0 - 1, null],
    ['just after the anchor', T0 + 1, T0],
    ['on a slot (strictly before)', T0 + 30 * MINUTE, T0 + 15 * MINUTE],
    ['between slots', T0 + 40 * MINUTE, T0 + 30 * MINUTE],
  ])('previous before %s', (_, before, previous) => {
    expect(previousFireBefore(every, before)).toBe(previous);
  });

  it('keeps its period across a DST change (New York, 2026-03-08)', () => {
    const hourly: Recurrence = { kind: 'every', everyMs: HOUR, anchorMs: Date.parse('2026-03-08T05:00:00Z') };
    const fires = nextFireTimes(hourly, Date.parse('2026-03-08T05:00:00Z'), 4);
    expect(fires.map((ms) => new Date(ms).toISOString())).toEqual([
      '2026-03-08T06:00:00.000Z',
      '2026-03-08T07:00:00.000Z',
      '2026-03-08T08:00:00.000Z',
      '2026-03-08T09:00:00.000Z',
    ]);
  });

  it.each([0, -5, 1.5, Number.NaN])('refuses a period of %d ms', (everyMs) => {
    expect(() => nextFireAfter({ kind: 'every', everyMs, anchorMs: T0 }, T0)).toThrow(RangeError);
  });
});

describe('at', () => {
  const at: Recurrence = { kind: 'at', atMs: T0 };

  it.each([
    [T0 - 1, T0],
    [T0, null],
    [T0 + 1, null],
  ])('next after %i is %s', (after, next) => {
    expect(nextFireAfter(at, after)).toBe(next);
  });

  it.each([
    [T0 + 1, T0],
    [T0, null],
  ])('previous before %i is %s', (before, previous) => {
    expect(previousFireBefore(at, before)).toBe(previous);
  });

  it('has a single slot', () => {
    expect(nextFireTimes(at, 0, 5)).toEqual([T0]);
  });
});

describe('nextFireTimes', () => {
  const daily: Recurrence = { kind: 'cron', cron: parseCron('0 9 * * *'), timezone: 'UTC', dst: DEFAULT_DST_POLICY };

  it('returns count instants, strictly increasing, strictly after the start', () => {
    const fires = nextFireTimes(daily, Date.parse('2026-03-01T09:00:00Z'), 3);
    expect(fires).toEqual([Date.parse('2026-03-02T09:00:00Z'), Date.parse('2026-03-03T09:00:00Z'), Date.parse('2026-03-04T09:00:00Z')]);
  });

  it('returns nothing for count 0', () => {
    expect(nextFireTimes(daily, T0, 0)).toEqual([]);
  });

  it('stops at the search horizon', () => {
    const never: Recurrence = { kind: 'cron', cron: parseCron('0 0 30 2 *'), timezone: 'Europe/Berlin', dst: DEFAULT_DST_POLICY };
    expect(nextFireTimes(never, T0, 3)).toEqual([]);
    expect(previousFireBefore(never, T0)).toBeNull();
  });

  it('refuses an unknown zone', () => {
    const rec: Recurrence = { kind: 'cron', cron: parseCron('0 9 * * *'), timezone: 'Mars/Base', dst: DEFAULT_DST_POLICY };
    expect(() => nextFireAfter(rec, T0)).toThrow(/unknown time zone 'Mars\/Base'/);
  });

  it.each(['* * * * * *', '0 0 29 2 1'])('finds 100 fires of %s in Europe/Berlin in well under 50 ms', (expr) => {
    const rec: Recurrence = { kind: 'cron', cron: parseCron(expr), timezone: 'Europe/Berlin', dst: DEFAULT_DST_POLICY };
    nextFireTimes(rec, T0, 1); // one-time costs: Intl's zone data, JIT
    expect(fastestMs(() => nextFireTimes(rec, T0, 100))).toBeLessThan(50);
    expect(nextFireTimes(rec, T0, 100)).toHaveLength(100);
  });

  it('resolves a yearly expression far from now quickly', () => {
    const rec: Recurrence = { kind: 'cron', cron: parseCron('0 0 1 1 *'), timezone: 'America/New_York', dst: DEFAULT_DST_POLICY };
    nextFireAfter(rec, T0);
    expect(
      fastestMs(() => {
        for (let year = 0; year < 100; year++) nextFireAfter(rec, Date.UTC(2030 + year, 5, 1));
      }),
    ).toBeLessThan(50);
  });
});

/**
 * The search in nextFireAfter / previousFireBefore against the definition applied by brute force:
 * every wall minute of a window, matched with cronMatches, mapped with instantsForWallTime and
 * shiftGapWallTime, the policy applied. Checks the walk's bounds near transitions (where wall
 * order and instant order differ), from a start every 7 minutes across two days.
 */
describe('search agrees with a brute-force walk near transitions', () => {
  const TRANSITIONS = [
    ['America/New_York', '2026-03-08T07:00:00Z'],
    ['America/New_York', '2026-11-01T06:00:00Z'],
    ['Australia/Lord_Howe', '2026-04-04T15:00:00Z'],
    ['Australia/Lord_Howe', '2026-10-03T15:30:00Z'],
    ['Antarctica/Troll', '2026-03-29T01:00:00Z'],
    ['Antarctica/Troll', '2026-10-25T01:00:00Z'],
    ['America/Santiago', '2026-04-05T03:00:00Z'],
    ['Pacific/Chatham', '2026-09-26T14:00:00Z'],
    ['Pacific/Apia', '2011-12-30T10:00:00Z'],
  ] as const;
  const CRONS = ['*/15 * * * *', '0 * * * *', '30 1 * * *', '45 0-3 * * *', '0 0 * * *', '0 0 31 12 *'];
  const POLICIES: DstPolicy[] = DST_GAP_POLICIES.flatMap((gap) => DST_OVERLAP_POLICIES.map((overlap) => ({ gap, overlap })));

  const WINDOW_DAYS = 8;

  /** The local midnight WINDOW_DAYS / 2 days before the transition: the walk covers WINDOW_DAYS local days from it. */
  function windowStartLocalMs(zone: string, transitionMs: number): number {
    const first = toWallTime(zone, transitionMs - (WINDOW_DAYS / 2) * DAY);
    return Date.UTC(first.year, first.month - 1, first.day);
  }

  /** The instants of each matching wall time in the window ([] in a gap, with the shifted instant). */
  function matchingWallTimes(zone: string, expr: string, firstLocalMs: number): { instants: number[]; shifted: number | null }[] {
    const cron = parseCron(expr);
    const matches: { instants: number[]; shifted: number | null }[] = [];
    for (let local = firstLocalMs; local < firstLocalMs + WINDOW_DAYS * DAY; local += MINUTE) {
      const d = new Date(local);
      const wall = { year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate(), hour: d.getUTCHours(), minute: d.getUTCMinutes(), second: 0 };
      if (!cronMatches(cron, wall)) continue;
      const instants = instantsForWallTime(zone, wall);
      matches.push({ instants, shifted: instants.length === 0 ? shiftGapWallTime(zone, wall) : null });
    }
    return matches;
  }

  function firesUnder(matches: { instants: number[]; shifted: number | null }[], dst: ResolvedDstPolicy): number[] {
    const fires = new Set<number>();
    for (const { instants, shifted } of matches) {
      if (shifted !== null) {
        if (dst.gap === 'shift') fires.add(shifted);
      } else if (dst.overlap === 'both' || instants.length === 1) {
        instants.forEach((i) => fires.add(i));
      } else {
        fires.add(dst.overlap === 'first' ? instants[0]! : instants[instants.length - 1]!);
      }
    }
    return [...fires].sort((a, b) => a - b);
  }

  describe.each(TRANSITIONS)('%s at %s', (zone, at) => {
    const transitionMs = Date.parse(at);
    const firstLocalMs = windowStartLocalMs(zone, transitionMs);
    // A fire is its wall time minus an offset within ±18 h, so fires of wall times outside the window lie outside this range.
    const fromMs = firstLocalMs + 18 * HOUR;
    const toMs = firstLocalMs + WINDOW_DAYS * DAY - 18 * HOUR;

    it.each(CRONS)('%s under every policy', (expr) => {
      const matches = matchingWallTimes(zone, expr, firstLocalMs);
      for (const dst of POLICIES) {
        // `auto` is checked against literal instants in dst-auto.spec.ts; here it only needs its resolution.
        const fires = firesUnder(matches, resolveDstPolicy(parseCron(expr), dst));
        const rec: Recurrence = { kind: 'cron', cron: parseCron(expr), timezone: zone, dst };
        for (let start = transitionMs - DAY; start <= transitionMs + DAY; start += 7 * MINUTE) {
          const when = `${new Date(start).toISOString()} with ${JSON.stringify(dst)}`;
          const next = nextFireAfter(rec, start);
          const expectedNext = fires.find((f) => f > start && f <= toMs);
          if (expectedNext !== undefined) expect(next, `next after ${when}`).toBe(expectedNext);
          else expect(next === null || next > toMs, `next after ${when} lies beyond the window`).toBe(true);
          const previous = previousFireBefore(rec, start);
          const expectedPrevious = fires.findLast((f) => f < start && f >= fromMs);
          if (expectedPrevious !== undefined) expect(previous, `previous before ${when}`).toBe(expectedPrevious);
          else expect(previous === null || previous < fromMs, `previous before ${when} lies before the window`).toBe(true);
        }
      }
    });
  });
});
