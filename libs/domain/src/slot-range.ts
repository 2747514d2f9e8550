/**
 * Walking a schedule's slots: every question of the form "which slots lie in this range" (preview,
 * backfill, the tick's due slots) is answered here, within the schedule's bounds.
 */
import { nextSlotWithinBounds, type ScheduleSpec } from './schedule-spec.js';
import { isExclusionMarker, previousFireBefore, type Recurrence } from './time/index.js';

export interface SlotRange {
  /** Slots strictly after this instant. */
  afterMs: number;
  /** Slots at or before this instant; omitted for no end but the schedule's own. */
  untilMs?: number;
  /** The most slots to return. */
  limit: number;
  /**
   * Which end of the range to keep when it holds more than `limit` slots. `newest` walks back from
   * `untilMs` (which it needs), so a range far longer than `limit` costs only `limit` steps.
   */
  keep: 'oldest' | 'newest';
}

export interface SlotsInRange {
  /** The slots kept, ascending. */
  slots: number[];
  /** True when the range holds more slots than were kept. */
  more: boolean;
}

/**
 * The slots of a schedule in (afterMs, untilMs], ascending, at most `limit` of them. Slots before
 * startAt do not exist and a slot after endAt ends the schedule, as nextSlotWithinBounds says.
 */
export function slotsInRange(spec: ScheduleSpec, rec: Recurrence, range: SlotRange): SlotsInRange {
  const untilMs = range.untilMs ?? Infinity;
  if (range.keep === 'oldest') {
    const slots: number[] = [];
    let slot = nextSlotWithinBounds(spec, rec, range.afterMs);
    while (slot !== null && slot <= untilMs && slots.length < range.limit) {
      slots.push(slot);
      slot = nextSlotWithinBounds(spec, rec, slot);
    }
    return { slots, more: slot !== null && slot <= untilMs };
  }
  if (range.untilMs === undefined) throw new RangeError('keeping the newest slots needs the end of the range');
  const lowest = spec.startAtMs !== null ? Math.max(range.afterMs + 1, spec.startAtMs) : range.afterMs + 1;
  // Walk back from the newest slot that can be in range: never step through the slots past endAt.
  const highest = spec.endAtMs !== null ? Math.min(untilMs, spec.endAtMs) : untilMs;
  const newestFirst: number[] = [];
  let slot = previousFireBefore(rec, highest + 1);
  while (slot !== null && slot >= lowest && newestFirst.length < range.limit) {
    newestFirst.push(slot);
    slot = previousFireBefore(rec, slot);
  }
  return { slots: newestFirst.reverse(), more: slot !== null && slot >= lowest };
}

/** The fires of a schedule after `afterMs` (and at or before `untilMs`), oldest first, apart from the dates its calendar excludes. */
export interface FiresInRange extends SlotsInRange {
  /** The slots marking each date a calendar's `skip` excludes in the range walked (see isExclusionMarker). */
  excluded: number[];
}

/** How many excluded dates one walk passes over at most, beyond the fires it lists: about ten years. */
const MAX_EXCLUDED_WALKED = 3_660;

/** Walks slots as slotsInRange does, keeping the oldest, with the markers of excluded dates apart. */
export function firesInRange(spec: ScheduleSpec, rec: Recurrence, range: Omit<SlotRange, 'keep'>): FiresInRange {
  const untilMs = range.untilMs ?? Infinity;
  const slots: number[] = [];
  const excluded: number[] = [];
  let slot = nextSlotWithinBounds(spec, rec, range.afterMs);
  while (slot !== null && slot <= untilMs && slots.length < range.limit && excluded.length < MAX_EXCLUDED_WALKED) {
    if (isExclusionMarker(rec, slot)) excluded.push(slot);
    else slots.push(slot);
    slot = nextSlotWithinBounds(spec, rec, slot);
  }
  return { slots, excluded, more: slot !== null && slot <= untilMs };
}
