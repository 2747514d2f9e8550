import { describe, expect, it } from 'vitest';
import type { ReasonCode } from './reason-codes.js';
import type { CatchupPolicy, ScheduleSpec } from './schedule-spec.js';
import type { DstPolicy } from './time/index.js';
import { MAX_SLOTS_PER_EVALUATION, jitterOffset, planSlots, planWithLookahead, type PlanInput, type SlotDecision } from './slot-planner.js';

/** Instants on 2026-03-01 (UTC): "00:07" or "00:10:30". */
const t = (clock: string): number => Date.parse(`2026-03-01T${clock.length === 5 ? `${clock}:00` : clock}Z`);
const MINUTE = 60_000;

function spec(overrides: Partial<ScheduleSpec> = {}): ScheduleSpec {
  return {
    name: null,
    timing: { kind: 'every', everyMs: MINUTE },
    timezone: 'UTC',
    dst: { gap: 'shift', overlap: 'first' },
    catchup: { mode: 'latest', windowMs: null, limit: null },
    overlap: 'skip',
    target: { type: 'handler', name: 'noop', queue: 'default' },
    payload: null,
    retry: { maxAttempts: 3, backoff: { type: 'exponential', baseMs: 60_000, maxMs: 3_600_000, jitter: 0.1 } },
    timeoutMs: 300_000,
    concurrency: null,
    priority: 3,
    fairness: null,
    startAtMs: null,
    endAtMs: null,
    maxRuns: null,
    jitterMs: 0,
    labels: {},
    expect: null,
    calendar: null,
    flow: null,
    ...overrides,
  };
}

/** A one-minute `every` schedule created at 00:00, cursor at its first slot 00:01, no outage. */
function plan(overrides: Partial<PlanInput>) {
  return planSlots({
    scheduleId: 'sched-a',
    spec: spec(),
    anchorMs: t('00:00'),
    cursorMs: t('00:01'),
    nowMs: t('00:00'),
    catchupBoundaryMs: t('00:00'),
    ...overrides,
  });
}

/** "HH:MM[:SS] fire" (on time), "HH:MM catchup" (late, fired) or "HH:MM REASON" (not fired). */
function describeSlot(d: SlotDecision): string {
  const iso = new Date(d.slotMs).toISOString();
  const clock = iso.slice(17, 19) === '00' ? iso.slice(11, 16) : iso.slice(11, 19);
  const day = iso.slice(0, 10) === '2026-03-01' ? '' : `${iso.slice(0, 10)} `;
  if (!d.fire) return `${day}${clock} ${d.reason}`;
  return `${day}${clock} ${d.catchup ? 'catchup' : 'fire'}`;
}
const summary = (slots: readonly SlotDecision[]): string[] => slots.map(describeSlot);

/** Minutes from..to of 2026-03-01 00:xx, each with the same outcome: a shorthand for the tables. */
function minutes(from: number, to: number, outcome: 'fire' | 'catchup' | ReasonCode): string[] {
  const out: string[] = [];
  for (let m = from; m <= to; m++) out.push(`00:${String(m).padStart(2, '0')} ${outcome}`);
  return out;
}

describe('planSlots: on-time slots', () => {
  it.each<[string, { cursor: string; now: string }, string[], string | null]>([
    ['nothing due yet', { cursor: '00:01', now: '00:00:59' }, [], '00:01'],
    ['a slot exactly at now is due; the cursor moves strictly past now', { cursor: '00:01', now: '00:01' }, ['00:01 fire'], '00:02'],
    ['a tick 1 ms before the slot leaves it', { cursor: '00:01', now: '00:00:59.999' }, [], '00:01'],
    ['several slots due after a slow tick all fire', { cursor: '00:01', now: '00:03:30' }, ['00:01 fire', '00:02 fire', '00:03 fire'], '00:04'],
    ['the cursor is the lower bound: earlier slots are not re-planned', { cursor: '00:03', now: '00:05' }, ['00:03 fire', '00:04 fire', '00:05 fire'], '00:06'],
  ])('%s', (_name, { cursor, now }, expected, next) => {
    const p = plan({ cursorMs: t(cursor), nowMs: t(now) });
    expect(summary(p.slots)).toEqual(expected);
    expect(p.nextFireAtMs).toBe(next === null ? null : t(next));
    expect(p.completed).toBe(false);
    expect(p.unrecordedSlots).toBe(false);
  });

  it('gives a fired slot without jitter an availableAt equal to its slot', () => {
    const p = plan({ nowMs: t('00:02') });
    expect(p.slots).toEqual([
      { slotMs: t('00:01'), fire: true, availableAtMs: t('00:01'), catchup: false },
      { slotMs: t('00:02'), fire: true, availableAtMs: t('00:02'), catchup: false },
    ]);
  });

  it('fires on-time slots whatever the catch-up policy says, however late the tick', () => {
    const p = plan({ spec: spec({ catchup: { mode: 'none', windowMs: 1, limit: 1 } }), nowMs: t('00:05:30') });
    expect(summary(p.slots)).toEqual(minutes(1, 5, 'fire'));
  });
});

describe('planSlots: catch-up of slots before the boundary', () => {
  const policy = (mode: CatchupPolicy['mode'], windowMs: number | null = null, limit: number | null = null): CatchupPolicy => ({
    mode,
    windowMs,
    limit,
  });

  // Scheduler back at 00:08 after an outage; the tick runs at 00:10:30. Slots 00:01-00:07 are
  // late, 00:08-00:10 on time.
  describe('with on-time slots in the same evaluation (boundary 00:08, now 00:10:30)', () => {
    it.each<[string, CatchupPolicy, string[]]>([
      ['none: every late slot is missed', policy('none'), [...minutes(1, 7, 'CATCHUP_NONE'), ...minutes(8, 10, 'fire')]],
      [
        'latest: an on-time slot fires, so no late slot does',
        policy('latest'),
        [...minutes(1, 7, 'CATCHUP_SUPERSEDED'), ...minutes(8, 10, 'fire')],
      ],
      ['all: every late slot fires too', policy('all'), [...minutes(1, 7, 'catchup'), ...minutes(8, 10, 'fire')]],
      [
        'all, limit 3: the newest three late slots fire',
        policy('all', null, 3),
        [...minutes(1, 4, 'CATCHUP_LIMIT_EXCEEDED'), ...minutes(5, 7, 'catchup'), ...minutes(8, 10, 'fire')],
      ],
      [
        'all, limit larger than the late slots: all fire',
        policy('all', null, 100),
        [...minutes(1, 7, 'catchup'), ...minutes(8, 10, 'fire')],
      ],
      [
        'none, window 4m: slots before 00:06:30 are window-missed, the rest none',
        policy('none', 4 * MINUTE),
        [...minutes(1, 6, 'CATCHUP_WINDOW_MISSED'), '00:07 CATCHUP_NONE', ...minutes(8, 10, 'fire')],
      ],
      [
        'latest, window 4m',
        policy('latest', 4 * MINUTE),
        [...minutes(1, 6, 'CATCHUP_WINDOW_MISSED'), '00:07 CATCHUP_SUPERSEDED', ...minutes(8, 10, 'fire')],
      ],
      [
        'all, window 4m: only the late slot inside the window fires',
        policy('all', 4 * MINUTE),
        [...minutes(1, 6, 'CATCHUP_WINDOW_MISSED'), '00:07 catchup', ...minutes(8, 10, 'fire')],
      ],
      [
        'all, window 1m: the window never drops an on-time slot',
        policy('all', MINUTE),
        [...minutes(1, 7, 'CATCHUP_WINDOW_MISSED'), ...minutes(8, 10, 'fire')],
      ],
    ])('%s', (_name, catchup, expected) => {
      const p = plan({ spec: spec({ catchup }), nowMs: t('00:10:30'), catchupBoundaryMs: t('00:08') });
      expect(summary(p.slots)).toEqual(expected);
      expect(p.nextFireAtMs).toBe(t('00:11'));
      expect(p.completed).toBe(false);
    });
  });

  // The scheduler took over at 00:10:30 and evaluates at once: every due slot is late.
  describe('with no on-time slot (boundary = now = 00:10:30)', () => {
    it.each<[string, CatchupPolicy, string[]]>([
      ['none: nothing fires', policy('none'), minutes(1, 10, 'CATCHUP_NONE')],
      ['latest: only the newest late slot fires', policy('latest'), [...minutes(1, 9, 'CATCHUP_SUPERSEDED'), '00:10 catchup']],
      ['latest ignores limit', policy('latest', null, 5), [...minutes(1, 9, 'CATCHUP_SUPERSEDED'), '00:10 catchup']],
      ['all: every late slot fires', policy('all'), minutes(1, 10, 'catchup')],
      ['all, limit 3: the newest three', policy('all', null, 3), [...minutes(1, 7, 'CATCHUP_LIMIT_EXCEEDED'), ...minutes(8, 10, 'catchup')]],
      ['all, limit 1', policy('all', null, 1), [...minutes(1, 9, 'CATCHUP_LIMIT_EXCEEDED'), '00:10 catchup']],
      ['none, window 4m', policy('none', 4 * MINUTE), [...minutes(1, 6, 'CATCHUP_WINDOW_MISSED'), ...minutes(7, 10, 'CATCHUP_NONE')]],
      [
        'latest, window 4m',
        policy('latest', 4 * MINUTE),
        [...minutes(1, 6, 'CATCHUP_WINDOW_MISSED'), ...minutes(7, 9, 'CATCHUP_SUPERSEDED'), '00:10 catchup'],
      ],
      [
        'all, window 4m, limit 2: the window applies first, then the limit',
        policy('all', 4 * MINUTE, 2),
        [...minutes(1, 6, 'CATCHUP_WINDOW_MISSED'), ...minutes(7, 8, 'CATCHUP_LIMIT_EXCEEDED'), ...minutes(9, 10, 'catchup')],
      ],
      [
        'a slot exactly one window old is inside it (window 3m30s: 00:07 is in)',
        policy('all', 3 * MINUTE + 30_000),
        [...minutes(1, 6, 'CATCHUP_WINDOW_MISSED'), ...minutes(7, 10, 'catchup')],
      ],
      [
        'one millisecond less and it is out',
        policy('all', 3 * MINUTE + 29_999),
        [...minutes(1, 7, 'CATCHUP_WINDOW_MISSED'), ...minutes(8, 10, 'catchup')],
      ],
      ['latest, window shorter than the newest slot\'s age: nothing fires', policy('latest', 29_000), minutes(1, 10, 'CATCHUP_WINDOW_MISSED')],
    ])('%s', (_name, catchup, expected) => {
      const p = plan({ spec: spec({ catchup }), nowMs: t('00:10:30'), catchupBoundaryMs: t('00:10:30') });
      expect(summary(p.slots)).toEqual(expected);
      expect(p.nextFireAtMs).toBe(t('00:11'));
      expect(p.completed).toBe(false);
    });
  });

  it('a slot exactly at the boundary is on time', () => {
    const p = plan({ spec: spec({ catchup: policy('none') }), nowMs: t('00:03'), catchupBoundaryMs: t('00:02') });
    expect(summary(p.slots)).toEqual(['00:01 CATCHUP_NONE', '00:02 fire', '00:03 fire']);
  });

  it('explains each missed slot in words', () => {
    const p = plan({ spec: spec({ catchup: policy('all', 4 * MINUTE, 1) }), nowMs: t('00:10:30'), catchupBoundaryMs: t('00:10:30') });
    const missed = p.slots.filter((s): s is Extract<SlotDecision, { fire: false }> => !s.fire);
    expect(missed.find((s) => s.reason === 'CATCHUP_WINDOW_MISSED')!.reasonText).toMatch(/older than the catch-up window/);
    expect(missed.find((s) => s.reason === 'CATCHUP_LIMIT_EXCEEDED')!.reasonText).toMatch(/catch-up limit 1/);
  });

  it('fires a late slot at its own slot time, not at now', () => {
    const p = plan({ spec: spec({ catchup: policy('latest') }), nowMs: t('00:10:30'), catchupBoundaryMs: t('00:10:30') });
    expect(p.slots.at(-1)).toEqual({ slotMs: t('00:10'), fire: true, availableAtMs: t('00:10'), catchup: true });
  });
});

describe('planSlots: maxRuns is left to the writer', () => {
  it('plans every due slot whatever maxRuns says: overlap, decided later, may skip some of them', () => {
    const p = plan({ spec: spec({ maxRuns: 2 }), nowMs: t('00:05') });
    expect(summary(p.slots)).toEqual(minutes(1, 5, 'fire'));
    expect(p.completed).toBe(false);
    expect(p.nextFireAtMs).toBe(t('00:06'));
  });
});

describe('planSlots: endAt', () => {
  it.each<[string, { endAt: string; now: string }, string[], boolean, string | null]>([
    ['a slot at endAt is due; later ones are not', { endAt: '00:03', now: '00:05:30' }, minutes(1, 3, 'fire'), true, null],
    ['slots up to now while endAt is ahead', { endAt: '00:03:30', now: '00:02:10' }, minutes(1, 2, 'fire'), false, '00:03'],
    ['the next slot lies past endAt: completes now', { endAt: '00:03:30', now: '00:03:10' }, minutes(1, 3, 'fire'), true, null],
    ['the next slot is exactly endAt: still pending', { endAt: '00:03', now: '00:02:10' }, minutes(1, 2, 'fire'), false, '00:03'],
    ['endAt passed before the cursor: nothing due, completes', { endAt: '00:00:30', now: '00:05' }, [], true, null],
  ])('%s', (_name, { endAt, now }, expected, completed, next) => {
    const p = plan({ spec: spec({ endAtMs: t(endAt) }), nowMs: t(now) });
    expect(summary(p.slots)).toEqual(expected);
    expect(p.completed).toBe(completed);
    expect(p.nextFireAtMs).toBe(next === null ? null : t(next));
  });
});

describe('planSlots: startAt', () => {
  it('anchors an every schedule at startAt, not at its creation', () => {
    const p = plan({ spec: spec({ startAtMs: t('00:02:30') }), anchorMs: t('00:00'), cursorMs: t('00:00'), nowMs: t('00:04') });
    expect(summary(p.slots)).toEqual(['00:02:30 fire', '00:03:30 fire']);
    expect(p.nextFireAtMs).toBe(t('00:04:30'));
  });

  it('does not fire cron slots before startAt, even when the cursor is earlier', () => {
    const p = plan({
      spec: spec({ timing: { kind: 'cron', cron: '0 * * * *' }, startAtMs: t('02:30') }),
      cursorMs: t('00:00'),
      nowMs: t('04:10'),
    });
    expect(summary(p.slots)).toEqual(['03:00 fire', '04:00 fire']);
    expect(p.nextFireAtMs).toBe(t('05:00'));
  });

  it('before startAt nothing is due and the cursor waits for the first slot at or after it', () => {
    const p = plan({
      spec: spec({ timing: { kind: 'cron', cron: '0 * * * *' }, startAtMs: t('02:30') }),
      cursorMs: t('01:00'),
      nowMs: t('01:10'),
    });
    expect(p.slots).toEqual([]);
    expect(p.nextFireAtMs).toBe(t('03:00'));
    expect(p.completed).toBe(false);
  });

  it('a cron slot exactly at startAt exists', () => {
    const p = plan({
      spec: spec({ timing: { kind: 'cron', cron: '0 * * * *' }, startAtMs: t('03:00') }),
      cursorMs: t('00:00'),
      nowMs: t('03:00'),
    });
    expect(summary(p.slots)).toEqual(['03:00 fire']);
  });
});

describe('planSlots: one-shot at', () => {
  const at = spec({ timing: { kind: 'at', atMs: t('00:05') } });
  it.each<[string, { now: string; boundary: string; catchup?: CatchupPolicy }, string[], boolean, string | null]>([
    ['not due yet', { now: '00:04:59', boundary: '00:00' }, [], false, '00:05'],
    ['fires and completes', { now: '00:05', boundary: '00:00' }, ['00:05 fire'], true, null],
    ['fired late by a slow tick: on time, completes', { now: '00:09', boundary: '00:00' }, ['00:05 fire'], true, null],
    ['due during an outage, catch-up latest: fires late', { now: '00:09', boundary: '00:08' }, ['00:05 catchup'], true, null],
    [
      'due during an outage, catch-up none: missed, completes',
      { now: '00:09', boundary: '00:08', catchup: { mode: 'none', windowMs: null, limit: null } },
      ['00:05 CATCHUP_NONE'],
      true,
      null,
    ],
    [
      'due during an outage, older than the window: missed',
      { now: '00:09', boundary: '00:08', catchup: { mode: 'all', windowMs: MINUTE, limit: null } },
      ['00:05 CATCHUP_WINDOW_MISSED'],
      true,
      null,
    ],
  ])('%s', (_name, c, expected, completed, next) => {
    const p = plan({
      spec: c.catchup ? { ...at, catchup: c.catchup } : at,
      cursorMs: t('00:05'),
      nowMs: t(c.now),
      catchupBoundaryMs: t(c.boundary),
    });
    expect(summary(p.slots)).toEqual(expected);
    expect(p.completed).toBe(completed);
    expect(p.nextFireAtMs).toBe(next === null ? null : t(next));
  });
});

describe('planSlots: cron schedules', () => {
  const hourly = spec({ timing: { kind: 'cron', cron: '0 * * * *' } });

  it.each<[string, { cursor: string; now: string; boundary: string; catchup?: CatchupPolicy }, string[], string]>([
    ['every hour on time', { cursor: '01:00', now: '03:59:59', boundary: '00:00' }, ['01:00 fire', '02:00 fire', '03:00 fire'], '04:00'],
    ['latest after an outage ending 02:30', { cursor: '01:00', now: '03:10', boundary: '02:30' }, ['01:00 CATCHUP_SUPERSEDED', '02:00 CATCHUP_SUPERSEDED', '03:00 fire'], '04:00'],
    ['latest with every slot late', { cursor: '01:00', now: '03:10', boundary: '03:10' }, ['01:00 CATCHUP_SUPERSEDED', '02:00 CATCHUP_SUPERSEDED', '03:00 catchup'], '04:00'],
    [
      'all with a 90m window',
      { cursor: '01:00', now: '03:10', boundary: '03:10', catchup: { mode: 'all', windowMs: 90 * MINUTE, limit: null } },
      ['01:00 CATCHUP_WINDOW_MISSED', '02:00 catchup', '03:00 catchup'],
      '04:00',
    ],
    ['across midnight', { cursor: '23:00', now: '2026-03-02T00:30:00', boundary: '00:00' }, ['23:00 fire', '2026-03-02 00:00 fire'], '2026-03-02T01:00:00'],
  ])('%s', (_name, c, expected, next) => {
    const p = plan({
      spec: c.catchup ? { ...hourly, catchup: c.catchup } : hourly,
      cursorMs: t(c.cursor),
      nowMs: c.now.startsWith('2026') ? Date.parse(`${c.now}Z`) : t(c.now),
      catchupBoundaryMs: t(c.boundary),
    });
    expect(summary(p.slots)).toEqual(expected);
    expect(p.nextFireAtMs).toBe(next.startsWith('2026') ? Date.parse(`${next}Z`) : t(next));
  });

  it('reads the wall clock of the schedule zone (02:30 in Berlin is 01:30Z in winter)', () => {
    const p = plan({
      spec: spec({ timing: { kind: 'cron', cron: '30 2 * * *' }, timezone: 'Europe/Berlin' }),
      cursorMs: t('00:00'),
      nowMs: t('12:00'),
    });
    expect(summary(p.slots)).toEqual(['01:30 fire']);
    expect(p.nextFireAtMs).toBe(Date.parse('2026-03-02T01:30:00Z'));
  });
});

describe('planSlots: the per-evaluation cap', () => {
  const everySecond = spec({ timing: { kind: 'every', everyMs: 1_000 } });

  it('records only the newest MAX_SLOTS_PER_EVALUATION slots and flags the rest', () => {
    expect(MAX_SLOTS_PER_EVALUATION).toBe(1_000);
    // Slots 00:00:00 .. 00:16:40 (1001 of them) are due.
    const p = plan({ spec: everySecond, cursorMs: t('00:00'), nowMs: t('00:16:40') });
    expect(p.slots).toHaveLength(1_000);
    expect(p.slots[0]!.slotMs).toBe(t('00:00:01'));
    expect(p.slots.at(-1)!.slotMs).toBe(t('00:16:40'));
    expect(p.unrecordedSlots).toBe(true);
    expect(p.nextFireAtMs).toBe(t('00:16:41'));
  });

  it('does not flag exactly MAX_SLOTS_PER_EVALUATION due slots', () => {
    const p = plan({ spec: everySecond, cursorMs: t('00:00:01'), nowMs: t('00:16:40') });
    expect(p.slots).toHaveLength(1_000);
    expect(p.slots[0]!.slotMs).toBe(t('00:00:01'));
    expect(p.unrecordedSlots).toBe(false);
  });

  it('applies catch-up to the recorded slots only', () => {
    const p = plan({
      spec: { ...everySecond, catchup: { mode: 'latest', windowMs: null, limit: null } },
      cursorMs: t('00:00'),
      nowMs: t('00:30'),
      catchupBoundaryMs: t('00:30:00.500'),
    });
    expect(p.unrecordedSlots).toBe(true);
    expect(p.slots).toHaveLength(1_000);
    expect(p.slots[0]!.slotMs).toBe(t('00:13:21'));
    expect(p.slots.filter((s) => s.fire).map((s) => s.slotMs)).toEqual([t('00:30')]);
  });
});

describe('planSlots: jitter', () => {
  it('delays each fired slot by a deterministic offset in [0, jitter)', () => {
    const jittered = spec({ jitterMs: 30_000 });
    const first = plan({ spec: jittered, nowMs: t('00:02') });
    // Pinned: the offset is part of the schedule's observable timetable and must not change
    // between releases (sha256 of "sched-a:<slot ms>", first 32 bits scaled to the jitter).
    expect(first.slots).toEqual([
      { slotMs: t('00:01'), fire: true, availableAtMs: t('00:01') + 29_721, catchup: false },
      { slotMs: t('00:02'), fire: true, availableAtMs: t('00:02') + 2_776, catchup: false },
    ]);
    expect(plan({ spec: jittered, nowMs: t('00:02') })).toEqual(first);
    // The cursor moves over slots, not over jittered instants.
    expect(first.nextFireAtMs).toBe(t('00:03'));
  });

  it('jitters late slots that fire as well', () => {
    const p = plan({ spec: spec({ jitterMs: 30_000, catchup: { mode: 'all', windowMs: null, limit: null } }), nowMs: t('00:02'), catchupBoundaryMs: t('00:05') });
    expect(p.slots.map((s) => (s.fire ? [s.availableAtMs - s.slotMs, s.catchup] : null))).toEqual([
      [29_721, true],
      [2_776, true],
    ]);
  });

  it.each<[string, number, number, number]>([
    ['sched-a', t('00:01'), 30_000, 29_721],
    ['sched-a', t('00:02'), 30_000, 2_776],
    ['sched-b', t('00:01'), 30_000, 27_991],
    ['sched-a', t('00:01'), 3_600_000, 3_566_630],
    ['sched-a', t('00:01'), 1, 0],
    ['sched-a', t('00:01'), 0, 0],
    ['sched-a', t('00:01'), -5, 0],
  ])('jitterOffset(%s, %i, %i) = %i', (id, slot, jitter, expected) => {
    expect(jitterOffset(id, slot, jitter)).toBe(expected);
  });

  it('stays within [0, jitter) and spreads over the range across many slots', () => {
    const offsets: number[] = [];
    for (let i = 0; i < 2_000; i++) offsets.push(jitterOffset('sched-a', t('00:00') + i * MINUTE, 10_000));
    expect(Math.min(...offsets)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...offsets)).toBeLessThan(10_000);
    expect(Math.min(...offsets)).toBeLessThan(500);
    expect(Math.max(...offsets)).toBeGreaterThan(9_500);
    expect(offsets.every((o) => Number.isInteger(o))).toBe(true);
    const mean = offsets.reduce((a, b) => a + b, 0) / offsets.length;
    expect(mean).toBeGreaterThan(4_500);
    expect(mean).toBeLessThan(5_500);
  });
});

describe('planSlots: a long-ended schedule', () => {
  it('does not step through the slots after endAt', () => {
    const everySecond = spec({ timing: { kind: 'every', everyMs: 1_000 }, endAtMs: t('00:00:10') });
    const started = performance.now();
    const p = plan({ spec: everySecond, cursorMs: t('00:00:01'), nowMs: t('00:00') + 365 * 86_400_000, catchupBoundaryMs: t('00:00') });
    expect(performance.now() - started).toBeLessThan(200);
    expect(p.slots).toHaveLength(10);
    expect(p.completed).toBe(true);
  });
});

describe('planSlots: DST policies', () => {
  const at = (iso: string): number => Date.parse(iso);
  const planCron = (cron: string, dst: DstPolicy, cursor: string, now: string) =>
    planSlots({
      scheduleId: 'sched-a',
      spec: spec({ timing: { kind: 'cron', cron }, timezone: 'Europe/Berlin', dst }),
      anchorMs: at('2027-01-01T00:00:00Z'),
      cursorMs: at(cursor),
      nowMs: at(now),
      catchupBoundaryMs: at(cursor),
    });

  // Berlin 2027: 02:00-02:59 is missing on 28 March (clocks jump at 01:00Z) and repeated on
  // 31 October (02:00 is 00:00Z in summer time, then 01:00Z in winter time).
  it.each<[string, string, DstPolicy, [string, string], string[], string]>([
    [
      'auto: an hourly cron follows real time through the repeated hour',
      '0 * * * *',
      { gap: 'auto', overlap: 'auto' },
      ['2027-10-30T23:30:00Z', '2027-10-31T02:30:00Z'],
      ['2027-10-31T00:00:00.000Z', '2027-10-31T01:00:00.000Z', '2027-10-31T02:00:00.000Z'],
      '2027-10-31T03:00:00Z',
    ],
    [
      'first: each wall time once',
      '0 * * * *',
      { gap: 'shift', overlap: 'first' },
      ['2027-10-30T23:30:00Z', '2027-10-31T02:30:00Z'],
      ['2027-10-31T00:00:00.000Z', '2027-10-31T02:00:00.000Z'],
      '2027-10-31T03:00:00Z',
    ],
    [
      'last',
      '0 * * * *',
      { gap: 'shift', overlap: 'last' },
      ['2027-10-30T23:30:00Z', '2027-10-31T02:30:00Z'],
      ['2027-10-31T01:00:00.000Z', '2027-10-31T02:00:00.000Z'],
      '2027-10-31T03:00:00Z',
    ],
    [
      'auto: a fixed time in the repeated hour fires once, at its first instant',
      '30 2 * * *',
      { gap: 'auto', overlap: 'auto' },
      ['2027-10-30T23:30:00Z', '2027-10-31T02:30:00Z'],
      ['2027-10-31T00:30:00.000Z'],
      '2027-11-01T01:30:00Z',
    ],
    [
      'auto: a fixed time in the gap is shifted past it',
      '30 2 * * *',
      { gap: 'auto', overlap: 'auto' },
      ['2027-03-28T00:00:00Z', '2027-03-28T02:00:00Z'],
      ['2027-03-28T01:30:00.000Z'],
      '2027-03-29T00:30:00Z',
    ],
    [
      'skip: a fixed time in the gap does not fire',
      '30 2 * * *',
      { gap: 'skip', overlap: 'auto' },
      ['2027-03-28T00:00:00Z', '2027-03-28T02:00:00Z'],
      [],
      '2027-03-29T00:30:00Z',
    ],
  ])('%s', (_name, cron, dst, [cursor, now], expected, next) => {
    const p = planCron(cron, dst, cursor, now);
    expect(p.slots.map((s) => new Date(s.slotMs).toISOString())).toEqual(expected);
    expect(p.slots.every((s) => s.fire && !s.catchup)).toBe(true);
    expect(p.nextFireAtMs).toBe(at(next));
  });
});

describe('planWithLookahead', () => {
  // A one-minute `every` schedule, cursor at 00:01, now 00:00:30 unless the row says otherwise.
  it.each<[string, { now?: string; lookahead: number; allow: boolean; active: boolean }, string[], string | null]>([
    ['no lookahead plans nothing before its slot', { lookahead: 0, allow: true, active: false }, [], '00:01'],
    ['allow plans every slot within the lookahead', { lookahead: 3 * MINUTE, allow: true, active: false }, minutes(1, 3, 'fire'), '00:04'],
    ['allow plans ahead beside active runs', { lookahead: 2 * MINUTE, allow: true, active: true }, minutes(1, 2, 'fire'), '00:03'],
    ['another policy plans one slot ahead when nothing is active', { lookahead: 3 * MINUTE, allow: false, active: false }, ['00:01 fire'], '00:02'],
    ['another policy plans nothing ahead while a run is active', { lookahead: 3 * MINUTE, allow: false, active: true }, [], '00:01'],
    ['a slot beyond the lookahead waits', { lookahead: 20_000, allow: false, active: false }, [], '00:01'],
    ['a due slot that fires keeps the next one from being made ahead', { now: '00:01:30', lookahead: 3 * MINUTE, allow: false, active: false }, ['00:01 fire'], '00:02'],
  ])('%s', (_name, o, expected, next) => {
    const p = planWithLookahead(
      { scheduleId: 'sched-a', spec: spec(), anchorMs: t('00:00'), cursorMs: t('00:01'), nowMs: t(o.now ?? '00:00:30'), catchupBoundaryMs: t('00:00') },
      { lookaheadMs: o.lookahead, overlapAllows: o.allow, hasActive: o.active },
    );
    expect(summary(p.slots)).toEqual(expected);
    expect(p.nextFireAtMs).toBe(next === null ? null : t(next));
  });

  it('a one-shot made ahead completes the plan', () => {
    const p = planWithLookahead(
      { scheduleId: 'sched-a', spec: spec({ timing: { kind: 'at', atMs: t('00:01') } }), anchorMs: t('00:00'), cursorMs: t('00:01'), nowMs: t('00:00:50'), catchupBoundaryMs: t('00:00') },
      { lookaheadMs: 15_000, overlapAllows: false, hasActive: false },
    );
    expect(summary(p.slots)).toEqual(['00:01 fire']);
    expect(p).toMatchObject({ nextFireAtMs: null, completed: true });
  });
});
