/**
 * When a schedule fires: the fire instants of a cron expression on a zone's wall clock (with the
 * DST policy, `auto` resolved per expression, deciding gaps and overlaps), of a fixed interval, or of a one-shot timer.
 */
import { CalendarWalk, type DayExclusion, type OnExcluded } from './calendar.js';
import { nextMatchingLocalMs, previousMatchingLocalMs, type CronExpression } from './cron.js';
import { resolveDstPolicy, resolveFixedTimePolicy, type DstPolicy, type ResolvedDstPolicy } from './dst-policy.js';
import { MAX_ZONE_OFFSET_MS, offsetTimelineOf, type OffsetTimeline } from './offset-timeline.js';
import { DAY_MS, SECOND_MS } from './wall-clock.js';

export type Recurrence =
  | { kind: 'cron'; cron: CronExpression; timezone: string; dst: DstPolicy }
  /** Slots are anchorMs + k*everyMs for k >= 0, whatever the clocks do. */
  | { kind: 'every'; everyMs: number; anchorMs: number }
  /** A single slot. */
  | { kind: 'at'; atMs: number }
  /** The slots of `base` on the dates a calendar allows, on `timezone`'s wall clock (see calendar.ts). */
  | { kind: 'calendar'; base: PlainRecurrence; timezone: string; dst: DstPolicy; onExcluded: OnExcluded; excluded: DayExclusion; originMs: number };

/** A recurrence without a calendar. */
export type PlainRecurrence = Exclude<Recurrence, { kind: 'calendar' }>;
type CalendarRecurrence = Extract<Recurrence, { kind: 'calendar' }>;

type CronRecurrence = Extract<Recurrence, { kind: 'cron' }>;
type EveryRecurrence = Extract<Recurrence, { kind: 'every' }>;

/** How far a cron search looks before answering null, e.g. for "0 0 30 2 *". */
const SEARCH_HORIZON_MS = 5 * 366 * DAY_MS;

/**
 * A fire instant and the wall time that produced it differ by an offset in force within this
 * distance of the instant: the offset at the instant, or for a shifted gap wall time the offset
 * before a transition at most one gap (at most the full offset range) earlier.
 */
const OFFSET_REACH_MS = 2 * MAX_ZONE_OFFSET_MS;

/**
 * The first fire instant (ms since epoch, UTC) strictly after `afterMs`, or null when there is
 * none: a one-shot already past, or a cron expression with no match within about five years.
 */
export function nextFireAfter(rec: Recurrence, afterMs: number): number | null {
  switch (rec.kind) {
    case 'at':
      return rec.atMs > afterMs ? rec.atMs : null;
    case 'every':
      assertPeriod(rec);
      if (afterMs < rec.anchorMs) return rec.anchorMs;
      return rec.anchorMs + (Math.floor((afterMs - rec.anchorMs) / rec.everyMs) + 1) * rec.everyMs;
    case 'cron':
      return nextCronFire(rec, afterMs);
    case 'calendar':
      return calendarWalkOf(rec).next(afterMs);
  }
}

/**
 * The last fire instant strictly before `beforeMs`, or null when there is none: before an
 * interval's anchor, a one-shot not yet due, or a cron expression with no match within about
 * five years. The same set of instants nextFireAfter walks forward.
 */
export function previousFireBefore(rec: Recurrence, beforeMs: number): number | null {
  switch (rec.kind) {
    case 'at':
      return rec.atMs < beforeMs ? rec.atMs : null;
    case 'every':
      assertPeriod(rec);
      if (beforeMs <= rec.anchorMs) return null;
      return rec.anchorMs + (Math.ceil((beforeMs - rec.anchorMs) / rec.everyMs) - 1) * rec.everyMs;
    case 'cron':
      return previousCronFire(rec, beforeMs);
    case 'calendar':
      return calendarWalkOf(rec).previous(beforeMs);
  }
}

/** True for a slot a calendar's `skip` yields only to mark an excluded date: it never fires. */
export function isExclusionMarker(rec: Recurrence, slotMs: number): boolean {
  return rec.kind === 'calendar' && calendarWalkOf(rec).isExclusionMarker(slotMs);
}

/** The local date (days since 1970-01-01 on the wall clock of `timezone`) of an instant. */
export function localDayOf(timezone: string, instantMs: number): number {
  return Math.floor((instantMs + offsetTimelineOf(timezone).offsetAt(instantMs)) / DAY_MS);
}

const calendarWalks = new WeakMap<CalendarRecurrence, CalendarWalk>();

function calendarWalkOf(rec: CalendarRecurrence): CalendarWalk {
  let walk = calendarWalks.get(rec);
  if (walk === undefined) {
    const timeline = offsetTimelineOf(rec.timezone);
    // A moved slot keeps its wall time: a cron's policy decides a gap or an overlap on its new
    // date, and an interval's slot (an instant, not a wall time) moves as a fixed time of day does.
    const dst = rec.base.kind === 'cron' ? resolveDstPolicy(rec.base.cron, rec.dst) : resolveFixedTimePolicy(rec.dst);
    const base = rec.base;
    walk = new CalendarWalk(
      { next: (afterMs) => nextFireAfter(base, afterMs), previous: (beforeMs) => previousFireBefore(base, beforeMs) },
      { timeline, onExcluded: rec.onExcluded, excluded: rec.excluded, originMs: rec.originMs, instantsAtLocalMs: (localMs) => fireInstantsOfWallTime(timeline, localMs, dst) },
    );
    calendarWalks.set(rec, walk);
  }
  return walk;
}

/** Up to `count` successive fire instants strictly after `afterMs`, ascending; fewer when the recurrence ends. */
export function nextFireTimes(rec: Recurrence, afterMs: number, count: number): number[] {
  const fires: number[] = [];
  for (let fire = nextFireAfter(rec, afterMs); fire !== null && fires.length < count; fire = nextFireAfter(rec, fire)) {
    fires.push(fire);
  }
  return fires;
}

function assertPeriod(rec: EveryRecurrence): void {
  if (!Number.isInteger(rec.everyMs) || rec.everyMs <= 0) {
    throw new RangeError(`interval ${rec.everyMs} ms is not a positive integer number of milliseconds`);
  }
}

/**
 * Walks matching wall times upward. Fire instants are not monotonic in wall time near a
 * transition (an overlap repeats wall times; a shifted gap wall time fires after later ones), so
 * the walk starts low enough that no earlier wall time can fire after `afterMs`, and keeps going
 * until no later wall time can fire before the best instant found.
 */
function nextCronFire(rec: CronRecurrence, afterMs: number): number | null {
  const timeline = offsetTimelineOf(rec.timezone);
  const dst = resolveDstPolicy(rec.cron, rec.dst);
  const fromLocalMs = afterMs + timeline.offsetRange(afterMs - OFFSET_REACH_MS, afterMs + OFFSET_REACH_MS).min;
  const untilLocalMs = fromLocalMs + SEARCH_HORIZON_MS;
  let best: number | null = null;
  let lastUsefulLocalMs = untilLocalMs;
  for (
    let localMs = nextMatchingLocalMs(rec.cron, fromLocalMs, untilLocalMs);
    localMs !== null && localMs <= lastUsefulLocalMs;
    localMs = nextMatchingLocalMs(rec.cron, localMs + SECOND_MS, untilLocalMs)
  ) {
    for (const instant of fireInstantsOfWallTime(timeline, localMs, dst)) {
      if (instant > afterMs && (best === null || instant < best)) {
        best = instant;
        lastUsefulLocalMs = best + timeline.offsetRange(best - 2 * OFFSET_REACH_MS, best).max;
      }
    }
  }
  return best;
}

/** Mirror of nextCronFire, walking matching wall times downward. */
function previousCronFire(rec: CronRecurrence, beforeMs: number): number | null {
  const timeline = offsetTimelineOf(rec.timezone);
  const dst = resolveDstPolicy(rec.cron, rec.dst);
  const fromLocalMs = beforeMs + timeline.offsetRange(beforeMs - 2 * OFFSET_REACH_MS, beforeMs).max;
  const untilLocalMs = fromLocalMs - SEARCH_HORIZON_MS;
  let best: number | null = null;
  let firstUsefulLocalMs = untilLocalMs;
  for (
    let localMs = previousMatchingLocalMs(rec.cron, fromLocalMs, untilLocalMs);
    localMs !== null && localMs >= firstUsefulLocalMs;
    localMs = previousMatchingLocalMs(rec.cron, localMs - SECOND_MS, untilLocalMs)
  ) {
    for (const instant of fireInstantsOfWallTime(timeline, localMs, dst)) {
      if (instant < beforeMs && (best === null || instant > best)) {
        best = instant;
        firstUsefulLocalMs = best + timeline.offsetRange(best - OFFSET_REACH_MS, best + OFFSET_REACH_MS).min;
      }
    }
  }
  return best;
}

/** The instants a matching wall time fires at under the resolved DST policy, ascending. */
function fireInstantsOfWallTime(timeline: OffsetTimeline, localMs: number, dst: ResolvedDstPolicy): number[] {
  const instants = timeline.instantsAtLocalMs(localMs);
  if (instants.length === 0) {
    const gap = dst.gap === 'shift' ? timeline.gapTransitionAt(localMs) : undefined;
    return gap === undefined ? [] : [localMs - gap.offsetBeforeMs];
  }
  if (instants.length === 1 || dst.overlap === 'both') return instants;
  return dst.overlap === 'first' ? instants.slice(0, 1) : instants.slice(-1);
}
