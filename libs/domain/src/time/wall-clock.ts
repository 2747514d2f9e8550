/**
 * Wall-clock times without a zone, and "local ms": a wall time's fields read as if they were UTC.
 * Local ms order wall times and make calendar arithmetic exact; they are never instants.
 */

export const SECOND_MS = 1_000;
export const MINUTE_MS = 60 * SECOND_MS;
export const HOUR_MS = 60 * MINUTE_MS;
export const DAY_MS = 24 * HOUR_MS;

/** A calendar date and time of day as a clock on the wall shows it; month is 1-12. */
export interface WallTime {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
}

/** The local ms of a wall time (its fields read as UTC), for any Gregorian year including 0-99. */
export function localMsOf(year: number, month: number, day: number, hour = 0, minute = 0, second = 0): number {
  if (year >= 100) return Date.UTC(year, month - 1, day, hour, minute, second);
  // Date.UTC reads years 0-99 as 1900-1999; setUTCFullYear does not.
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, 0);
  return date.getTime();
}

export function localMsOfWallTime(wall: WallTime): number {
  return localMsOf(wall.year, wall.month, wall.day, wall.hour, wall.minute, wall.second);
}

/** The wall time a local ms names, to the second (milliseconds are dropped). */
export function wallTimeOfLocalMs(localMs: number): WallTime {
  const date = new Date(localMs);
  return {
    year: date.getUTCFullYear(),
    month: date.getUTCMonth() + 1,
    day: date.getUTCDate(),
    hour: date.getUTCHours(),
    minute: date.getUTCMinutes(),
    second: date.getUTCSeconds(),
  };
}

export function isLeapYear(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31] as const;

export function daysInMonth(year: number, month: number): number {
  return month === 2 && isLeapYear(year) ? 29 : (DAYS_IN_MONTH[month - 1] ?? Number.NaN);
}

/** 0 = Sunday ... 6 = Saturday. */
export function weekdayOf(year: number, month: number, day: number): number {
  return new Date(localMsOf(year, month, day)).getUTCDay();
}

/** "2026-03-08T02:30:00", for messages. */
export function formatWallTime(wall: WallTime): string {
  const pad = (n: number, width = 2): string => String(n).padStart(width, '0');
  return `${pad(wall.year, 4)}-${pad(wall.month)}-${pad(wall.day)}T${pad(wall.hour)}:${pad(wall.minute)}:${pad(wall.second)}`;
}

/** Throws a RangeError unless every field is an integer and the fields name a real calendar date and time of day. */
export function assertValidWallTime(wall: WallTime): void {
  const { year, month, day, hour, minute, second } = wall;
  const valid =
    [year, month, day, hour, minute, second].every(Number.isInteger) &&
    month >= 1 &&
    month <= 12 &&
    day >= 1 &&
    day <= daysInMonth(year, month) &&
    hour >= 0 &&
    hour <= 23 &&
    minute >= 0 &&
    minute <= 59 &&
    second >= 0 &&
    second <= 59;
  if (!valid) {
    throw new RangeError(`wall time ${formatWallTime(wall)} is not a valid date and time of day (month 1-12, hour 0-23, minute and second 0-59)`);
  }
}
