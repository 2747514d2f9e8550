/** IANA time zones: validation, offsets, and the mapping between instants and wall times. */
import { offsetTimelineOf } from './offset-timeline.js';
import {
  MINUTE_MS,
  SECOND_MS,
  assertValidWallTime,
  formatWallTime,
  localMsOfWallTime,
  wallTimeOfLocalMs,
  type WallTime,
} from './wall-clock.js';

export type { WallTime } from './wall-clock.js';

/**
 * True for every IANA zone name Intl knows, canonical or link ("UTC", "Europe/Berlin",
 * "US/Eastern"); false for "", unknown names, and UTC-offset strings such as "+05:00".
 */
export function isValidTimeZone(zone: string): boolean {
  try {
    offsetTimelineOf(zone);
    return true;
  } catch {
    return false;
  }
}

/**
 * The zone's offset at the instant in minutes east of UTC (New York in winter: -300). Local mean
 * times before standard time can have offsets with seconds, which show as fractions of a minute.
 */
export function zoneOffsetMinutes(zone: string, instantMs: number): number {
  assertInstant(instantMs);
  return offsetTimelineOf(zone).offsetAt(instantMs) / MINUTE_MS;
}

/** The wall time a clock in the zone shows at the instant, to the second. */
export function toWallTime(zone: string, instantMs: number): WallTime {
  assertInstant(instantMs);
  const localMs = instantMs + offsetTimelineOf(zone).offsetAt(instantMs);
  return wallTimeOfLocalMs(Math.floor(localMs / SECOND_MS) * SECOND_MS);
}

/** Every instant whose wall time in the zone equals `wall`, ascending: [] in a DST gap, 1 normally, 2 in a fall-back overlap. */
export function instantsForWallTime(zone: string, wall: WallTime): number[] {
  assertValidWallTime(wall);
  return offsetTimelineOf(zone).instantsAtLocalMs(localMsOfWallTime(wall));
}

/**
 * RFC 5545 "shift" resolution of a wall time inside a gap: the wall time read with the offset in
 * force before the transition (02:30 New York on 2026-03-08 -> 07:30Z = 03:30 EDT). The result
 * lies after the transition, later by the same amount the clock jumped. Throws a RangeError when
 * the wall time is not inside a gap.
 */
export function shiftGapWallTime(zone: string, wall: WallTime): number {
  assertValidWallTime(wall);
  const localMs = localMsOfWallTime(wall);
  const transition = offsetTimelineOf(zone).gapTransitionAt(localMs);
  if (transition === undefined) {
    throw new RangeError(`${formatWallTime(wall)} exists in ${zone}; only a wall time skipped by a DST gap can be shifted`);
  }
  return localMs - transition.offsetBeforeMs;
}

function assertInstant(instantMs: number): void {
  if (!Number.isFinite(instantMs)) throw new RangeError(`instant ${instantMs} is not a finite number of milliseconds`);
}
