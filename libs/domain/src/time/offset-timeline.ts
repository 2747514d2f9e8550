/**
 * The UTC-offset history of one IANA zone, read lazily from Intl and memoised. Everything else in
 * this folder asks the timeline, so every answer about a zone comes from one model of it.
 */
import { HOUR_MS, MINUTE_MS, SECOND_MS } from './wall-clock.js';

/**
 * A bound on |UTC offset| with room to spare. tzdb's extreme is the local mean time -15:56:08 of
 * Asia/Manila before 1845 (checked with `zdump -v` over every zone); modern offsets are -12..+14.
 */
export const MAX_ZONE_OFFSET_MS = 18 * HOUR_MS;

/**
 * The timeline samples the offset every SAMPLE_STEP_MS and bisects each sample cell whose ends
 * differ. A cell is assumed never to hold two transitions that cancel out: the closest pair of
 * offset changes in all of tzdb is about four days apart (Africa/Freetown, 1939; checked with
 * `zdump -v` over every zone 1850-2040), eight times this step. Several transitions in one cell
 * that do not cancel are still found.
 */
const SAMPLE_STEP_MS = 12 * HOUR_MS;

/** Bounds the memo per zone; a scheduler near "now" adds two samples a day. */
const MAX_MEMOISED_SAMPLES = 200_000;

/** A change of offset: `at` is the first instant (whole second) of the new offset. */
export interface OffsetTransition {
  readonly at: number;
  readonly offsetBeforeMs: number;
  readonly offsetAfterMs: number;
}

export class OffsetTimeline {
  private readonly sampledOffsets = new Map<number, number>();
  private readonly cellTransitions = new Map<number, readonly OffsetTransition[]>();

  constructor(
    readonly zone: string,
    private readonly formatter: Intl.DateTimeFormat,
  ) {}

  /** The offset (ms east of UTC) in force at the instant. */
  offsetAt(instantMs: number): number {
    const cell = Math.floor(instantMs / SAMPLE_STEP_MS);
    let offset = this.sampledOffset(cell);
    for (const transition of this.transitionsInCell(cell)) {
      if (transition.at > instantMs) break;
      offset = transition.offsetAfterMs;
    }
    return offset;
  }

  /** Every transition with fromMs < at <= toMs, ascending. */
  transitionsBetween(fromMs: number, toMs: number): OffsetTransition[] {
    const found: OffsetTransition[] = [];
    // Cell c holds transitions with c*STEP < at <= (c+1)*STEP.
    for (let cell = Math.floor(fromMs / SAMPLE_STEP_MS); cell * SAMPLE_STEP_MS < toMs; cell++) {
      for (const transition of this.transitionsInCell(cell)) {
        if (transition.at > fromMs && transition.at <= toMs) found.push(transition);
      }
    }
    return found;
  }

  /** The smallest and largest offset in force at any instant of [fromMs, toMs]. */
  offsetRange(fromMs: number, toMs: number): { min: number; max: number } {
    let min = this.offsetAt(fromMs);
    let max = min;
    for (const transition of this.transitionsBetween(fromMs, toMs)) {
      min = Math.min(min, transition.offsetAfterMs);
      max = Math.max(max, transition.offsetAfterMs);
    }
    return { min, max };
  }

  /**
   * Every instant whose wall time in this zone is `localMs`, ascending: none in a gap, one
   * normally, two (or more, if tzdb ever folds a wall time more than twice) in an overlap.
   */
  instantsAtLocalMs(localMs: number): number[] {
    const fromMs = localMs - MAX_ZONE_OFFSET_MS;
    const instants: number[] = [];
    // Walk the spans of constant offset that could hold a solution of instant + offset = localMs.
    let spanStart = Number.NEGATIVE_INFINITY;
    let offset = this.offsetAt(fromMs);
    for (const transition of this.transitionsBetween(fromMs, localMs + MAX_ZONE_OFFSET_MS)) {
      const candidate = localMs - offset;
      if (candidate >= spanStart && candidate < transition.at) instants.push(candidate);
      spanStart = transition.at;
      offset = transition.offsetAfterMs;
    }
    const candidate = localMs - offset;
    if (candidate >= spanStart) instants.push(candidate);
    return instants;
  }

  /** The forward transition whose gap (the wall times it skips) contains `localMs`, if any. */
  gapTransitionAt(localMs: number): OffsetTransition | undefined {
    return this.transitionsBetween(localMs - MAX_ZONE_OFFSET_MS, localMs + MAX_ZONE_OFFSET_MS).find(
      (t) => t.offsetAfterMs > t.offsetBeforeMs && localMs >= t.at + t.offsetBeforeMs && localMs < t.at + t.offsetAfterMs,
    );
  }

  private sampledOffset(cell: number): number {
    let offset = this.sampledOffsets.get(cell);
    if (offset === undefined) {
      if (this.sampledOffsets.size >= MAX_MEMOISED_SAMPLES) this.forget();
      offset = this.readOffset(cell * SAMPLE_STEP_MS);
      this.sampledOffsets.set(cell, offset);
    }
    return offset;
  }

  private transitionsInCell(cell: number): readonly OffsetTransition[] {
    let transitions = this.cellTransitions.get(cell);
    if (transitions === undefined) {
      transitions = this.findTransitions(cell);
      this.cellTransitions.set(cell, transitions);
    }
    return transitions;
  }

  /** Bisects the cell to the second for each change of offset between its two samples. */
  private findTransitions(cell: number): OffsetTransition[] {
    const endMs = (cell + 1) * SAMPLE_STEP_MS;
    const endOffset = this.sampledOffset(cell + 1);
    let knownMs = cell * SAMPLE_STEP_MS;
    let knownOffset = this.sampledOffset(cell);
    const transitions: OffsetTransition[] = [];
    while (knownOffset !== endOffset) {
      // Invariant: offset(lo) = knownOffset, offset(hi) = hiOffset != knownOffset.
      let lo = knownMs;
      let hi = endMs;
      let hiOffset = endOffset;
      while (hi - lo > SECOND_MS) {
        const mid = lo + Math.floor((hi - lo) / (2 * SECOND_MS)) * SECOND_MS;
        const midOffset = this.readOffset(mid);
        if (midOffset === knownOffset) {
          lo = mid;
        } else {
          hi = mid;
          hiOffset = midOffset;
        }
      }
      transitions.push({ at: hi, offsetBeforeMs: knownOffset, offsetAfterMs: hiOffset });
      knownMs = hi;
      knownOffset = hiOffset;
    }
    return transitions;
  }

  /** The offset at an instant, from the "GMT+05:45" form Intl gives for the zone. */
  private readOffset(instantMs: number): number {
    const text = this.formatter.format(instantMs);
    const match = LONG_OFFSET.exec(text);
    if (match === null) throw new Error(`cannot read a UTC offset from '${text}' (Intl, time zone ${this.zone})`);
    const [, sign, hours = '0', minutes = '0', seconds = '0'] = match;
    const magnitude = Number(hours) * HOUR_MS + Number(minutes) * MINUTE_MS + Number(seconds) * SECOND_MS;
    return sign === '+' ? magnitude : -magnitude;
  }

  private forget(): void {
    this.sampledOffsets.clear();
    this.cellTransitions.clear();
  }
}

/** CLDR's long localized GMT format, ending the formatted date: "GMT-04:00", "GMT+05:53:28", or "GMT" for zero. */
const LONG_OFFSET = /GMT(?:([+\-\u2212])(\d{2}):(\d{2})(?::(\d{2}))?)?$/;

const timelinesByCanonicalName = new Map<string, OffsetTimeline>();
/** Names as callers spell them ("US/Eastern", "utc"); capped because the spellings come from users. */
const timelinesBySpelling = new Map<string, OffsetTimeline>();
const MAX_REMEMBERED_SPELLINGS = 10_000;

/**
 * The timeline of an IANA zone name Intl accepts (canonical or link, any case: "UTC",
 * "US/Eastern"); links share their canonical zone's timeline. Throws a RangeError for anything
 * else, including UTC-offset strings such as "+05:00", which newer engines accept as zones but
 * which have no DST rules and are not IANA names.
 */
export function offsetTimelineOf(zone: string): OffsetTimeline {
  let timeline = timelinesBySpelling.get(zone);
  if (timeline === undefined) {
    const formatter = formatterFor(zone);
    const canonicalName = formatter.resolvedOptions().timeZone;
    timeline = timelinesByCanonicalName.get(canonicalName) ?? new OffsetTimeline(canonicalName, formatter);
    timelinesByCanonicalName.set(canonicalName, timeline);
    if (timelinesBySpelling.size >= MAX_REMEMBERED_SPELLINGS) timelinesBySpelling.clear();
    timelinesBySpelling.set(zone, timeline);
  }
  return timeline;
}

function formatterFor(zone: string): Intl.DateTimeFormat {
  const unknown = new RangeError(`unknown time zone '${zone}': use an IANA zone name such as 'UTC', 'Europe/Berlin' or 'America/New_York'`);
  if (zone === '' || /^[+\-\u2212]/.test(zone)) throw unknown;
  try {
    return new Intl.DateTimeFormat('en-US', { timeZone: zone, timeZoneName: 'longOffset' });
  } catch {
    throw unknown;
  }
}
