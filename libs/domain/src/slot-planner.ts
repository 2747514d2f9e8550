/**
 * Slot planning: which slots of one schedule are due now, which of them fire and which are
 * recorded as missed, and where the cursor moves. Pure: the scheduler's tick calls it inside the
 * transaction that writes the outcome, with the database clock as `nowMs`.
 *
 * A slot is "on time" when it came due while a scheduler was leading and the schedule was active
 * (at or after `catchupBoundaryMs`); on-time slots always fire, however late the tick is. Slots
 * before the boundary fell due during an outage or a pause, and the catch-up policy decides them.
 */
import { createHash } from 'node:crypto';
import type { CalendarDefinition } from './calendars.js';
import type { ReasonCode } from './reason-codes.js';
import { nextSlotWithinBounds, recurrenceOf, type ScheduleSpec } from './schedule-spec.js';
import { slotsInRange } from './slot-range.js';
import { isExclusionMarker, isoDateOfDay, localDayOf } from './time/index.js';

/** How many of the newest due slots one evaluation records; older ones are explained by the outage record. */
export const MAX_SLOTS_PER_EVALUATION = 1_000;

export interface PlanInput {
  scheduleId: string;
  spec: ScheduleSpec;
  /** The anchor of an `every` schedule without startAt: its creation instant. */
  anchorMs: number;
  /** The earliest slot not evaluated yet (the schedule's next_fire_at). */
  cursorMs: number;
  nowMs: number;
  /** Slots before this instant fell due while nobody was firing them (outage or pause). */
  catchupBoundaryMs: number;
  /** The calendars the spec's calendar rule names. */
  calendars?: readonly CalendarDefinition[];
  /** When the schedule was last planned from: made, resumed or redefined (see recurrenceOf). */
  plannedFromMs?: number;
}

export type SlotDecision =
  | { slotMs: number; fire: true; availableAtMs: number; catchup: boolean }
  | { slotMs: number; fire: false; reason: ReasonCode; reasonText: string };

export interface SlotPlan {
  /** Due slots in ascending order, each with its decision. */
  slots: SlotDecision[];
  /** Due slots older than the newest MAX_SLOTS_PER_EVALUATION that were passed over without a tick. */
  unrecordedSlots: boolean;
  /** The new cursor: the first slot after now, or null when the schedule has nothing left. */
  nextFireAtMs: number | null;
  /**
   * True when the schedule has no slot left: endAt passed or a one-shot fired. maxRuns is not
   * decided here: it counts runs actually created, which overlap decides when the rows are written
   * (see materializeSlots).
   */
  completed: boolean;
}

export function planSlots(input: PlanInput): SlotPlan {
  const { spec, nowMs } = input;
  const rec = recurrenceOf(spec, input.anchorMs, input.calendars, input.plannedFromMs);
  // The due slots are those in [cursor, now]; past the newest MAX_SLOTS_PER_EVALUATION, the outage record speaks for them.
  const { slots: due, more: unrecorded } = slotsInRange(spec, rec, {
    afterMs: input.cursorMs - 1,
    untilMs: nowMs,
    limit: MAX_SLOTS_PER_EVALUATION,
    keep: 'newest',
  });

  const decisions = new Map<number, SlotDecision>();
  // A date the calendar excludes is recorded once, at its first slot, whenever it is evaluated.
  for (const slotMs of rec.kind === 'calendar' ? due.filter((s) => isExclusionMarker(rec, s)) : []) {
    const date = isoDateOfDay(localDayOf(spec.timezone, slotMs));
    decisions.set(slotMs, { slotMs, fire: false, reason: 'CALENDAR_EXCLUDED', reasonText: `${date} (${spec.timezone}) is excluded by the schedule's calendar; no slot of that date fires` });
  }
  const fireable = decisions.size === 0 ? due : due.filter((s) => !decisions.has(s));
  const onTime = fireable.filter((s) => s >= input.catchupBoundaryMs);
  const late = fireable.filter((s) => s < input.catchupBoundaryMs);
  for (const slotMs of onTime) {
    decisions.set(slotMs, { slotMs, fire: true, availableAtMs: slotMs + jitterOffset(input.scheduleId, slotMs, spec.jitterMs), catchup: false });
  }
  decideLate(input, late, onTime.length > 0, decisions);

  const slots = due.map((slotMs) => decisions.get(slotMs)!);
  const nextFireAtMs = nextSlotWithinBounds(spec, rec, nowMs);
  return { slots, unrecordedSlots: unrecorded, nextFireAtMs, completed: nextFireAtMs === null };
}

export interface LookaheadOptions {
  /** How far past `nowMs` slots are planned, so their runs exist (as delayed jobs) before they are due. */
  lookaheadMs: number;
  /** The overlap policy is `allow`: runs never wait for, skip or replace each other. */
  overlapAllows: boolean;
  /** The schedule has queued or running runs. */
  hasActive: boolean;
}

/**
 * Plans the slots due by `nowMs` and those due within the lookahead after it. An overlap decision
 * other than `allow` depends on which runs are still active when the slot comes due, which nobody
 * knows ahead of time; so such a schedule gets at most one slot ahead, and only while it has no
 * active run and no due slot fires now. Its later slots are planned when they come due (or once
 * the run it has ended), against the runs active then.
 */
export function planWithLookahead(input: PlanInput, opts: LookaheadOptions): SlotPlan {
  const horizonMs = input.nowMs + opts.lookaheadMs;
  if (opts.overlapAllows) return planSlots({ ...input, nowMs: horizonMs });
  const due = planSlots(input);
  const next = due.nextFireAtMs;
  if (opts.hasActive || next === null || next > horizonMs || due.slots.some((s) => s.fire)) return due;
  const ahead = planSlots({ ...input, cursorMs: next, nowMs: next });
  return { slots: [...due.slots, ...ahead.slots], unrecordedSlots: due.unrecordedSlots, nextFireAtMs: ahead.nextFireAtMs, completed: ahead.completed };
}

function decideLate(input: PlanInput, late: number[], anyOnTime: boolean, out: Map<number, SlotDecision>): void {
  const { catchup, jitterMs } = input.spec;
  const why = 'the slot fell due while no scheduler was firing it or the schedule was paused';
  const inWindow = (s: number): boolean => catchup.windowMs === null || input.nowMs - s <= catchup.windowMs;
  const candidates: number[] = [];
  for (const slotMs of late) {
    if (!inWindow(slotMs)) {
      out.set(slotMs, { slotMs, fire: false, reason: 'CATCHUP_WINDOW_MISSED', reasonText: `${why}; it is older than the catch-up window` });
    } else {
      candidates.push(slotMs);
    }
  }
  let firing: number[];
  switch (catchup.mode) {
    case 'none':
      firing = [];
      break;
    case 'latest':
      firing = anyOnTime ? [] : candidates.slice(-1);
      break;
    case 'all':
      firing = catchup.limit === null ? candidates : candidates.slice(-catchup.limit);
      break;
  }
  const fired = new Set(firing);
  for (const slotMs of candidates) {
    if (fired.has(slotMs)) {
      out.set(slotMs, { slotMs, fire: true, availableAtMs: slotMs + jitterOffset(input.scheduleId, slotMs, jitterMs), catchup: true });
    } else if (catchup.mode === 'none') {
      out.set(slotMs, { slotMs, fire: false, reason: 'CATCHUP_NONE', reasonText: `${why}; catch-up mode is none` });
    } else if (catchup.mode === 'latest') {
      out.set(slotMs, { slotMs, fire: false, reason: 'CATCHUP_SUPERSEDED', reasonText: `${why}; catch-up mode latest fires only the newest` });
    } else {
      out.set(slotMs, { slotMs, fire: false, reason: 'CATCHUP_LIMIT_EXCEEDED', reasonText: `${why}; more slots were missed than catch-up limit ${catchup.limit}` });
    }
  }
}

/** Deterministic jitter: the same schedule and slot always get the same offset in [0, jitterMs). */
export function jitterOffset(scheduleId: string, slotMs: number, jitterMs: number): number {
  if (jitterMs <= 0) return 0;
  const digest = createHash('sha256').update(`${scheduleId}:${slotMs}`).digest();
  return Math.floor((digest.readUInt32BE(0) / 2 ** 32) * jitterMs);
}
