/**
 * A recurrence restricted by a calendar: the local dates (in the schedule's zone) a calendar
 * excludes either hold no fire (`skip`; the date's first slot stays, as a marker the tick records
 * as CALENDAR_EXCLUDED, so a date is explained once however many slots it had) or hand their slots
 * to the nearest allowed date at the same wall time (`previous`, `next`). A moved slot lands only
 * on a date that has no slot of its own, and slots moved onto one instant fire once: no slot fires
 * twice, and no date fires more because of a move.
 *
 * Dates are day numbers: days since 1970-01-01 on the zone's wall clock.
 */
import type { OffsetTimeline } from './offset-timeline.js';
import { DAY_MS } from './wall-clock.js';

export const ON_EXCLUDED = ['skip', 'previous', 'next'] as const;
/** What becomes of a slot on an excluded date. */
export type OnExcluded = (typeof ON_EXCLUDED)[number];

/** True for a local date (a day number) the calendar excludes. */
export type DayExclusion = (day: number) => boolean;

/** The underlying recurrence's walk: the first slot strictly after, the last strictly before. */
export interface SlotWalk {
  next(afterMs: number): number | null;
  previous(beforeMs: number): number | null;
}

export interface CalendarWalkOptions {
  timeline: OffsetTimeline;
  onExcluded: OnExcluded;
  excluded: DayExclusion;
  /**
   * `skip` marks an excluded date at its first slot after this instant: a schedule made, or
   * re-planned, in the middle of an excluded date records that date too.
   */
  originMs: number;
  /** The instants a wall time (ms since the local epoch) fires at on a date a slot moved to, ascending. */
  instantsAtLocalMs(localMs: number): number[];
}

/** How far a slot looks for an allowed date to move to, and how many dates a walk visits at most. */
export const MAX_MOVE_DAYS = 366;
const MAX_VISITED_DAYS = 6 * 366;
/** At most this many slots of one excluded date are moved (a date of minutely slots moves whole). */
const MAX_MOVED_PER_DAY = 1_440;
/** How many dates' moved slots one walk keeps. */
const MAX_REMEMBERED_DAYS = 4_096;

/** The day number of a date written YYYY-MM-DD. */
export function dayOfIsoDate(date: string): number {
  return Math.floor(Date.UTC(Number(date.slice(0, 4)), Number(date.slice(5, 7)) - 1, Number(date.slice(8, 10))) / DAY_MS);
}

/** The YYYY-MM-DD of a day number. */
export function isoDateOfDay(day: number): string {
  return new Date(day * DAY_MS).toISOString().slice(0, 10);
}

/** 0 for Sunday through 6 for Saturday. */
export function weekdayOfDay(day: number): number {
  return (((day + 4) % 7) + 7) % 7;
}

/** Walks the slots of `base` as the calendar allows them. */
export class CalendarWalk implements SlotWalk {
  /** The slots each excluded date hands to its allowed date, ascending, once worked out (see movedFrom). */
  private readonly moved = new Map<number, number[]>();

  constructor(
    private readonly base: SlotWalk,
    private readonly opts: CalendarWalkOptions,
  ) {}

  /** The local date of an instant. */
  dayOf(instantMs: number): number {
    return Math.floor((instantMs + this.opts.timeline.offsetAt(instantMs)) / DAY_MS);
  }

  /** True for a slot the walk yields only to mark an excluded date (skip mode). */
  isExclusionMarker(slotMs: number): boolean {
    return this.opts.onExcluded === 'skip' && this.opts.excluded(this.dayOf(slotMs));
  }

  next(afterMs: number): number | null {
    switch (this.opts.onExcluded) {
      case 'skip':
        return this.nextSkipping(afterMs);
      case 'previous':
        return this.nextMovedBack(afterMs);
      case 'next':
        return this.nextMovedOn(afterMs);
    }
  }

  previous(beforeMs: number): number | null {
    if (this.opts.onExcluded === 'skip') return this.previousSkipping(beforeMs);
    return this.previousBySearch(beforeMs);
  }

  private nextSkipping(afterMs: number): number | null {
    let slot = this.base.next(afterMs);
    for (let visited = 0; slot !== null && visited < MAX_VISITED_DAYS; visited++) {
      const day = this.dayOf(slot);
      if (!this.opts.excluded(day)) return slot;
      // An excluded date yields its first slot, once: past it, the walk goes on after the date.
      if (this.firstSlotOf(day, this.opts.originMs) === slot) return slot;
      slot = this.base.next(Math.max(slot, this.dayStart(day + 1) - 1));
    }
    return null;
  }

  private previousSkipping(beforeMs: number): number | null {
    const slot = this.base.previous(beforeMs);
    if (slot === null) return null;
    const day = this.dayOf(slot);
    return this.opts.excluded(day) ? (this.firstSlotOf(day, this.opts.originMs) ?? slot) : slot;
  }

  /**
   * `previous`: a slot after `afterMs` is either the next slot on an allowed date or a slot moved
   * back from an excluded date before it, which the walk meets on the way there.
   */
  private nextMovedBack(afterMs: number): number | null {
    let best: number | null = null;
    let slot = this.base.next(afterMs);
    for (let visited = 0; slot !== null && visited < MAX_VISITED_DAYS; visited++) {
      const day = this.dayOf(slot);
      if (!this.opts.excluded(day)) return best === null ? slot : Math.min(best, slot);
      // Later excluded dates move to the same allowed date or a later one: past `best`, nothing earlier comes.
      const to = best === null ? null : this.moveTarget(day);
      if (to !== null && this.dayStart(to) > best!) return best;
      best = this.bestMoved(day, afterMs, best);
      slot = this.base.next(Math.max(slot, this.dayStart(day + 1) - 1));
    }
    return best;
  }

  /**
   * `next`: slots moved on to a date after `afterMs` may come from excluded dates just before it,
   * so the walk starts at the first date of the excluded run that ends at the date of `afterMs`.
   */
  private nextMovedOn(afterMs: number): number | null {
    let first = this.dayOf(afterMs);
    for (let back = 0; back < MAX_MOVE_DAYS && this.opts.excluded(first - 1); back++) first--;
    let best: number | null = null;
    let slot = this.base.next(Math.min(afterMs, this.dayStart(first) - 1));
    for (let visited = 0; slot !== null && visited < MAX_VISITED_DAYS; visited++) {
      const day = this.dayOf(slot);
      if (best !== null && this.dayStart(day) > best) break;
      if (!this.opts.excluded(day)) {
        if (slot > afterMs) return best === null ? slot : Math.min(best, slot);
        slot = this.base.next(afterMs);
        continue;
      }
      best = this.bestMoved(day, afterMs, best);
      slot = this.base.next(Math.max(slot, this.dayStart(day + 1) - 1));
    }
    return best;
  }

  /** The earliest of `best` and the slots of excluded `day` moved to their date, after `afterMs`. */
  private bestMoved(day: number, afterMs: number, best: number | null): number | null {
    const moved = this.movedFrom(day);
    // Ascending: the first after `afterMs` is the earliest.
    let lo = 0;
    let hi = moved.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (moved[mid]! > afterMs) hi = mid;
      else lo = mid + 1;
    }
    const first = moved[lo];
    return first === undefined || (best !== null && best <= first) ? best : first;
  }

  /**
   * The slots excluded `day` hands on, ascending: none when no allowed date is near enough or the
   * one it moves to has slots of its own. Worked out once per date: a walk that goes back and forth
   * (previous, the tick's newest slots) asks for the same dates again and again.
   */
  private movedFrom(day: number): number[] {
    let moved = this.moved.get(day);
    if (moved === undefined) {
      const to = this.moveTarget(day);
      moved = to === null || this.firstSlotOf(to) !== null ? [] : [...new Set(this.movedSlots(day, to))].sort((a, b) => a - b);
      if (this.moved.size >= MAX_REMEMBERED_DAYS) this.moved.clear();
      this.moved.set(day, moved);
    }
    return moved;
  }

  /** The nearest allowed date before (previous) or after (next) an excluded one, within MAX_MOVE_DAYS. */
  moveTarget(day: number): number | null {
    const step = this.opts.onExcluded === 'previous' ? -1 : 1;
    for (let k = 1; k <= MAX_MOVE_DAYS; k++) {
      if (!this.opts.excluded(day + k * step)) return day + k * step;
    }
    return null;
  }

  /** The slots of `from` at their wall times on date `to`. */
  private movedSlots(from: number, to: number): number[] {
    const moved: number[] = [];
    let slot = this.base.next(this.dayStart(from) - 1);
    for (let n = 0; slot !== null && n < MAX_MOVED_PER_DAY && this.dayOf(slot) === from; n++) {
      const wallMs = slot + this.opts.timeline.offsetAt(slot) - from * DAY_MS;
      moved.push(...this.opts.instantsAtLocalMs(to * DAY_MS + wallMs));
      slot = this.base.next(slot);
    }
    return moved;
  }

  /**
   * The last slot before `beforeMs`, found with next(): the window behind `beforeMs` widens until
   * it holds a slot, then the largest instant whose next slot still lies before `beforeMs` is
   * bisected for; the slot after it is the answer.
   */
  private previousBySearch(beforeMs: number): number | null {
    const fallsBefore = (fromMs: number): boolean => {
      const slot = this.next(fromMs);
      return slot !== null && slot < beforeMs;
    };
    let width = 1_000;
    while (!fallsBefore(beforeMs - width)) {
      width *= 4;
      if (width > MAX_VISITED_DAYS * DAY_MS) return null;
    }
    let lo = beforeMs - width;
    let hi = beforeMs - 1;
    while (hi - lo > 1) {
      const mid = lo + Math.floor((hi - lo) / 2);
      if (fallsBefore(mid)) lo = mid;
      else hi = mid;
    }
    return this.next(lo);
  }

  /** The first slot of `base` on a date (after `afterMs`), or null when it has none. */
  private firstSlotOf(day: number, afterMs = -Infinity): number | null {
    const slot = this.base.next(Math.max(this.dayStart(day) - 1, afterMs));
    return slot !== null && this.dayOf(slot) === day ? slot : null;
  }

  /** The first instant of a local date (after the gap, when midnight falls in one). */
  private dayStart(day: number): number {
    const midnight = day * DAY_MS;
    const instants = this.opts.timeline.instantsAtLocalMs(midnight);
    if (instants.length > 0) return instants[0]!;
    const gap = this.opts.timeline.gapTransitionAt(midnight);
    return gap === undefined ? midnight - this.opts.timeline.offsetAt(midnight) : gap.at;
  }
}
