/** Durations as users write them ("90s", "1h30m") and as Kairos displays them. */
import { DAY_MS, HOUR_MS, MINUTE_MS, SECOND_MS } from './wall-clock.js';

/** A duration Kairos cannot read; the message says what is wrong and which forms are accepted. */
export class DurationError extends Error {
  override readonly name = 'DurationError';
}

/** Units from largest to smallest; a duration string names each at most once, in this order. */
const UNITS = [
  { unit: 'd', ms: DAY_MS },
  { unit: 'h', ms: HOUR_MS },
  { unit: 'm', ms: MINUTE_MS },
  { unit: 's', ms: SECOND_MS },
  { unit: 'ms', ms: 1 },
] as const;

/** 100 years of 365.25 days. */
export const MAX_DURATION_MS = 36_525 * DAY_MS;

const ACCEPTED_FORMS =
  "write whole numbers with units d, h, m, s, ms from largest to smallest (e.g. '90s', '15m', '1h30m', '500ms'), or a non-negative integer number of milliseconds";

const COMPONENT = /(\d+)([A-Za-z]+)/y;

/**
 * Milliseconds in a duration: "90s", "15m", "2h", "1h30m", "500ms", "1d", "1h30m15s", or a
 * non-negative integer number of ms. Throws DurationError for negatives, fractions, empty or
 * unit-less strings, unknown or repeated units, NaN, and anything over 100 years.
 */
export function parseDuration(input: string | number): number {
  const ms = typeof input === 'number' ? checkMilliseconds(input) : parseDurationString(input);
  if (ms > MAX_DURATION_MS) {
    throw new DurationError(`duration ${describe(input)} is longer than 100 years`);
  }
  return ms;
}

function checkMilliseconds(ms: number): number {
  if (!Number.isInteger(ms) || ms < 0) {
    throw new DurationError(`duration ${ms} is not a non-negative integer number of milliseconds; ${ACCEPTED_FORMS}`);
  }
  return ms;
}

function parseDurationString(input: string): number {
  const text = input.trim();
  const reject = (why: string): DurationError => new DurationError(`duration ${describe(input)} ${why}; ${ACCEPTED_FORMS}`);
  if (text === '') throw reject('is empty');
  if (text.startsWith('-')) throw reject('is negative');
  if (/^\d+$/.test(text)) throw reject('has no unit');
  if (/\d[.,]\d/.test(text)) throw reject('has a fraction');

  let total = 0;
  let nextUnitIndex = 0;
  COMPONENT.lastIndex = 0;
  let consumed = 0;
  for (let match = COMPONENT.exec(text); match !== null; match = COMPONENT.exec(text)) {
    const [whole, amount = '', unit = ''] = match;
    const unitIndex = UNITS.findIndex((u) => u.unit === unit);
    if (unitIndex === -1) throw reject(`has an unknown unit '${unit}'`);
    if (unitIndex < nextUnitIndex) throw reject(`repeats or misorders unit '${unit}'`);
    total += Number(amount) * UNITS[unitIndex]!.ms;
    nextUnitIndex = unitIndex + 1;
    consumed += whole.length;
  }
  if (consumed !== text.length) throw reject(`cannot be read from '${text.slice(consumed)}'`);
  if (!Number.isSafeInteger(total)) throw reject('is longer than 100 years');
  return total;
}

function describe(input: string | number): string {
  return typeof input === 'string' ? `'${input}'` : String(input);
}

/** The shortest exact duration string for display: 5400000 -> "1h30m", 90000 -> "1m30s", 500 -> "500ms", 0 -> "0s". */
export function formatDuration(ms: number): string {
  if (!Number.isSafeInteger(ms) || ms < 0) {
    throw new RangeError(`cannot format ${ms} as a duration: expected a non-negative integer number of milliseconds`);
  }
  if (ms === 0) return '0s';
  let rest = ms;
  let text = '';
  for (const { unit, ms: unitMs } of UNITS) {
    const amount = Math.floor(rest / unitMs);
    if (amount > 0) text += `${amount}${unit}`;
    rest -= amount * unitMs;
  }
  return text;
}
