/**
 * Cron expressions in the Vixie dialect, extended with a leading seconds field, names, `L` and
 * `#`. Expressions match wall times; mapping wall times to instants is the recurrence's job.
 */
import {
  SECOND_MS,
  assertValidWallTime,
  daysInMonth,
  localMsOf,
  wallTimeOfLocalMs,
  weekdayOf,
  type WallTime,
} from './wall-clock.js';

export type CronField = 'expression' | 'second' | 'minute' | 'hour' | 'dayOfMonth' | 'month' | 'dayOfWeek';

const FIELD_LABELS: Record<CronField, string> = {
  expression: 'expression',
  second: 'second',
  minute: 'minute',
  hour: 'hour',
  dayOfMonth: 'day-of-month',
  month: 'month',
  dayOfWeek: 'day-of-week',
};

/** A cron expression Kairos cannot read; `field` names the part at fault, the message says why. */
export class CronSyntaxError extends Error {
  override readonly name = 'CronSyntaxError';

  constructor(
    readonly field: CronField,
    detail: string,
  ) {
    super(field === 'expression' ? detail : `${FIELD_LABELS[field]} field: ${detail}`);
  }
}

interface DayOfMonthRule {
  /** Vixie: the field starts with `*` (or is `?`), so day-of-month and day-of-week must both match. */
  readonly starred: boolean;
  readonly days: ReadonlySet<number>;
  /** Days counted back from the month's last day: 0 for `L`, n for `L-n`. */
  readonly daysBeforeMonthEnd: readonly number[];
}

interface DayOfWeekRule {
  /** Vixie: the field starts with `*` (or is `?`), so day-of-month and day-of-week must both match. */
  readonly starred: boolean;
  /** 0 = Sunday ... 6 = Saturday. */
  readonly weekdays: ReadonlySet<number>;
  /** `5L`: the last Friday of the month. */
  readonly lastWeekdaysOfMonth: ReadonlySet<number>;
  /** `5#3`: the third Friday of the month. */
  readonly nthWeekdaysOfMonth: readonly { readonly weekday: number; readonly nth: number }[];
}

/** The parsed fields of an expression; read only by this module. Value lists are sorted ascending. */
export interface CronFields {
  readonly seconds: readonly number[];
  readonly minutes: readonly number[];
  readonly hours: readonly number[];
  readonly months: readonly number[];
  readonly dayOfMonth: DayOfMonthRule;
  readonly dayOfWeek: DayOfWeekRule;
}

export interface CronExpression {
  readonly source: string;
  /** True for 6-field expressions; 5-field expressions and macros fire at second 0. */
  readonly hasSeconds: boolean;
  /**
   * Vixie: the minute or the hour field (after macro expansion) starts with `*`, so the
   * expression names times of real elapsed time rather than fixed times of day; the `auto` DST
   * policy reads this.
   */
  readonly followsRealTime: boolean;
  readonly fields: CronFields;
}

const MACROS: Readonly<Record<string, string>> = {
  '@yearly': '0 0 1 1 *',
  '@annually': '0 0 1 1 *',
  '@monthly': '0 0 1 * *',
  '@weekly': '0 0 * * 0',
  '@daily': '0 0 * * *',
  '@midnight': '0 0 * * *',
  '@hourly': '0 * * * *',
};

interface FieldSpec {
  readonly field: CronField;
  readonly min: number;
  readonly max: number;
  /** Names for min, min+1, ... */
  readonly names?: readonly string[];
}

const SECOND: FieldSpec = { field: 'second', min: 0, max: 59 };
const MINUTE: FieldSpec = { field: 'minute', min: 0, max: 59 };
const HOUR: FieldSpec = { field: 'hour', min: 0, max: 23 };
const DAY_OF_MONTH: FieldSpec = { field: 'dayOfMonth', min: 1, max: 31 };
const MONTH: FieldSpec = {
  field: 'month',
  min: 1,
  max: 12,
  names: ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'],
};
/** 0 and 7 are both Sunday. `*` and open-ended steps (`1/2`) stop at 6 so Sunday is not counted twice. */
const DAY_OF_WEEK: FieldSpec = { field: 'dayOfWeek', min: 0, max: 7, names: ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'] };
const LAST_WEEKDAY = 6;

/**
 * Parses a 5-field (minute hour day-of-month month day-of-week) or 6-field (seconds first)
 * expression, or a macro (@yearly @annually @monthly @weekly @daily @midnight @hourly).
 * Throws CronSyntaxError naming the field at fault.
 */
export function parseCron(expr: string): CronExpression {
  const source = expr.trim();
  const parts = expandMacro(source).split(/\s+/);
  if (parts.length !== 5 && parts.length !== 6) {
    throw new CronSyntaxError(
      'expression',
      `cron expression '${source}' has ${source === '' ? 0 : parts.length} fields; expected 5 (minute hour day-of-month month day-of-week) or 6 (second minute hour day-of-month month day-of-week)`,
    );
  }
  const hasSeconds = parts.length === 6;
  const [second = '', minute = '', hour = '', dayOfMonth = '', month = '', dayOfWeek = ''] = hasSeconds ? parts : ['0', ...parts];
  return {
    source,
    hasSeconds,
    followsRealTime: minute.startsWith('*') || hour.startsWith('*'),
    fields: {
      seconds: parseValueField(SECOND, second),
      minutes: parseValueField(MINUTE, minute),
      hours: parseValueField(HOUR, hour),
      months: parseValueField(MONTH, month),
      dayOfMonth: parseDayOfMonth(dayOfMonth),
      dayOfWeek: parseDayOfWeek(dayOfWeek),
    },
  };
}

function expandMacro(source: string): string {
  if (!source.startsWith('@')) return source;
  const macro = source.toLowerCase();
  const expansion = MACROS[macro];
  if (expansion !== undefined) return expansion;
  if (macro.startsWith('@every')) {
    throw new CronSyntaxError('expression', `'${source}' is not a cron expression; use an interval ("every": "15m") for a fixed period`);
  }
  throw new CronSyntaxError('expression', `unknown macro '${source}'; supported: ${Object.keys(MACROS).join(' ')}`);
}

function syntaxError(spec: FieldSpec, detail: string): CronSyntaxError {
  return new CronSyntaxError(spec.field, detail);
}

/** A plain field: values, ranges, steps and lists. Returns the sorted distinct values. */
function parseValueField(spec: FieldSpec, text: string): number[] {
  const values = new Set<number>();
  for (const item of text.split(',')) {
    for (const value of parseItem(spec, item)) values.add(value);
  }
  return [...values].sort((a, b) => a - b);
}

/** One list item: `*`, `a`, `a-b`, each optionally with `/step` (`a/n` means a through the maximum). */
function parseItem(spec: FieldSpec, item: string): number[] {
  const [rangeText = '', stepText, ...extra] = item.split('/');
  if (extra.length > 0) throw syntaxError(spec, `'${item}' has more than one '/'`);
  const step = stepText === undefined ? 1 : parseStep(spec, item, stepText);
  const openEndedMax = spec === DAY_OF_WEEK ? LAST_WEEKDAY : spec.max;
  let low: number;
  let high: number;
  if (rangeText === '*') {
    [low, high] = [spec.min, openEndedMax];
  } else {
    const [lowText = '', highText, ...more] = rangeText.split('-');
    if (more.length > 0) throw syntaxError(spec, `'${item}' is not a value, a range 'a-b' or a step`);
    low = parseValue(spec, item, lowText);
    high = highText !== undefined ? parseValue(spec, item, highText) : stepText !== undefined ? Math.max(low, openEndedMax) : low;
    if (low > high) {
      throw syntaxError(spec, `'${item}' is a reversed range (${low} > ${high}); write the smaller value first, or split a range that wraps around into a list`);
    }
  }
  const values: number[] = [];
  for (let value = low; value <= high; value += step) values.push(value);
  return values;
}

function parseStep(spec: FieldSpec, item: string, stepText: string): number {
  if (/^-\d+$/.test(stepText)) throw syntaxError(spec, `'${item}' has a negative step`);
  if (!/^\d+$/.test(stepText)) throw syntaxError(spec, `'${item}' has step '${stepText}', which is not a whole number`);
  const step = Number(stepText);
  if (step === 0) throw syntaxError(spec, `'${item}' has a zero step`);
  return step;
}

function parseValue(spec: FieldSpec, item: string, token: string): number {
  if (token === '') {
    throw syntaxError(spec, item.startsWith('-') ? `'${item}' is negative` : `'${item}' is missing a value`);
  }
  if (/^\d+$/.test(token)) {
    const value = Number(token);
    if (value < spec.min || value > spec.max) throw syntaxError(spec, `${value} is out of range ${spec.min}-${spec.max}`);
    return value;
  }
  const nameIndex = spec.names?.indexOf(token.toUpperCase()) ?? -1;
  if (nameIndex >= 0) return spec.min + nameIndex;
  if (token === '?') throw syntaxError(spec, `'?' is allowed only as the whole day-of-month or day-of-week field`);
  const names = spec.names === undefined ? '' : ` or a name ${spec.names[0]}-${spec.names[spec.names.length - 1]}`;
  throw syntaxError(spec, `'${token}' is not a number${names}`);
}

function parseDayOfMonth(text: string): DayOfMonthRule {
  if (text === '?') return { starred: true, days: new Set(parseItem(DAY_OF_MONTH, '*')), daysBeforeMonthEnd: [] };
  const days = new Set<number>();
  const daysBeforeMonthEnd: number[] = [];
  for (const item of text.split(',')) {
    const fromEnd = /^L(?:-(\d+))?$/i.exec(item);
    if (fromEnd !== null) {
      const back = Number(fromEnd[1] ?? 0);
      if (back > 30) throw syntaxError(DAY_OF_MONTH, `'${item}' counts back ${back} days; 'L-n' allows n from 1 to 30`);
      daysBeforeMonthEnd.push(back);
    } else if (/W/i.test(item)) {
      throw syntaxError(DAY_OF_MONTH, `'${item}': the nearest-weekday form 'W' is not supported`);
    } else {
      for (const day of parseItem(DAY_OF_MONTH, item)) days.add(day);
    }
  }
  return { starred: text.startsWith('*'), days, daysBeforeMonthEnd };
}

function parseDayOfWeek(text: string): DayOfWeekRule {
  const starred = text === '?' || text.startsWith('*');
  const weekdays = new Set<number>();
  const lastWeekdaysOfMonth = new Set<number>();
  const nthWeekdaysOfMonth: { weekday: number; nth: number }[] = [];
  for (const item of text === '?' ? ['*'] : text.split(',')) {
    const last = /^(\w+)L$/i.exec(item);
    const nth = /^(\w+)#(\w*)$/.exec(item);
    if (item.toUpperCase() === 'L') {
      throw syntaxError(DAY_OF_WEEK, `'L' needs a weekday before it, e.g. '5L' or 'FRIL' for the last Friday of the month`);
    } else if (last?.[1] !== undefined) {
      lastWeekdaysOfMonth.add(parseValue(DAY_OF_WEEK, item, last[1]) % 7);
    } else if (nth?.[1] !== undefined) {
      const occurrence = nth[2] ?? '';
      if (!/^[1-5]$/.test(occurrence)) {
        throw syntaxError(DAY_OF_WEEK, `'${item}': the occurrence after '#' must be 1-5 (e.g. '1#2' for the second Monday)`);
      }
      nthWeekdaysOfMonth.push({ weekday: parseValue(DAY_OF_WEEK, item, nth[1]) % 7, nth: Number(occurrence) });
    } else {
      for (const weekday of parseItem(DAY_OF_WEEK, item)) weekdays.add(weekday % 7);
    }
  }
  return { starred, weekdays, lastWeekdaysOfMonth, nthWeekdaysOfMonth };
}

/** Whether the wall time matches every field (Vixie OR rule when day-of-month and day-of-week are both restricted). */
export function cronMatches(cron: CronExpression, wall: WallTime): boolean {
  assertValidWallTime(wall);
  const { fields } = cron;
  return (
    fields.seconds.includes(wall.second) &&
    fields.minutes.includes(wall.minute) &&
    fields.hours.includes(wall.hour) &&
    fields.months.includes(wall.month) &&
    dayMatches(fields, wall.day, weekdayOf(wall.year, wall.month, wall.day), daysInMonth(wall.year, wall.month))
  );
}

function dayMatches(fields: CronFields, day: number, weekday: number, monthLength: number): boolean {
  const { dayOfMonth: dom, dayOfWeek: dow } = fields;
  const domMatches = dom.days.has(day) || dom.daysBeforeMonthEnd.some((back) => monthLength - back === day);
  const dowMatches =
    dow.weekdays.has(weekday) ||
    (dow.lastWeekdaysOfMonth.has(weekday) && day + 7 > monthLength) ||
    dow.nthWeekdaysOfMonth.some((n) => n.weekday === weekday && Math.ceil(day / 7) === n.nth);
  return dom.starred || dow.starred ? domMatches && dowMatches : domMatches || dowMatches;
}

function firstMatchingDayFrom(fields: CronFields, year: number, month: number, fromDay: number): number | undefined {
  const monthLength = daysInMonth(year, month);
  const firstWeekday = weekdayOf(year, month, 1);
  for (let day = fromDay; day <= monthLength; day++) {
    if (dayMatches(fields, day, (firstWeekday + day - 1) % 7, monthLength)) return day;
  }
  return undefined;
}

function lastMatchingDayUpTo(fields: CronFields, year: number, month: number, toDay: number): number | undefined {
  const monthLength = daysInMonth(year, month);
  const firstWeekday = weekdayOf(year, month, 1);
  for (let day = Math.min(toDay, monthLength); day >= 1; day--) {
    if (dayMatches(fields, day, (firstWeekday + day - 1) % 7, monthLength)) return day;
  }
  return undefined;
}

function firstAtLeast(sorted: readonly number[], value: number): number | undefined {
  return sorted.find((v) => v >= value);
}

function lastAtMost(sorted: readonly number[], value: number): number | undefined {
  return sorted.findLast((v) => v <= value);
}

/**
 * The earliest wall time, as local ms on a whole second, at or after `fromLocalMs` that the
 * expression matches, or null when there is none up to `untilLocalMs`. Skips whole months,
 * days, hours and minutes that cannot match, so a sparse expression costs a few dozen steps.
 */
export function nextMatchingLocalMs(cron: CronExpression, fromLocalMs: number, untilLocalMs: number): number | null {
  const { fields } = cron;
  let { year, month, day, hour, minute, second } = wallTimeOfLocalMs(Math.ceil(fromLocalMs / SECOND_MS) * SECOND_MS);
  const lastYear = wallTimeOfLocalMs(untilLocalMs).year;
  // A unit that runs past its end (month 13, day 32, hour 24, ...) finds no match and carries.
  while (year <= lastYear) {
    const nextMonth = firstAtLeast(fields.months, month);
    if (nextMonth === undefined) {
      [year, month, day, hour, minute, second] = [year + 1, 1, 1, 0, 0, 0];
      continue;
    }
    if (nextMonth !== month) [month, day, hour, minute, second] = [nextMonth, 1, 0, 0, 0];
    const nextDay = firstMatchingDayFrom(fields, year, month, day);
    if (nextDay === undefined) {
      [month, day, hour, minute, second] = [month + 1, 1, 0, 0, 0];
      continue;
    }
    if (nextDay !== day) [day, hour, minute, second] = [nextDay, 0, 0, 0];
    const nextHour = firstAtLeast(fields.hours, hour);
    if (nextHour === undefined) {
      [day, hour, minute, second] = [day + 1, 0, 0, 0];
      continue;
    }
    if (nextHour !== hour) [hour, minute, second] = [nextHour, 0, 0];
    const nextMinute = firstAtLeast(fields.minutes, minute);
    if (nextMinute === undefined) {
      [hour, minute, second] = [hour + 1, 0, 0];
      continue;
    }
    if (nextMinute !== minute) [minute, second] = [nextMinute, 0];
    const nextSecond = firstAtLeast(fields.seconds, second);
    if (nextSecond === undefined) {
      [minute, second] = [minute + 1, 0];
      continue;
    }
    const localMs = localMsOf(year, month, day, hour, minute, nextSecond);
    return localMs <= untilLocalMs ? localMs : null;
  }
  return null;
}

/**
 * The latest wall time, as local ms on a whole second, at or before `fromLocalMs` that the
 * expression matches, or null when there is none down to `untilLocalMs`. Mirror of nextMatchingLocalMs.
 */
export function previousMatchingLocalMs(cron: CronExpression, fromLocalMs: number, untilLocalMs: number): number | null {
  const { fields } = cron;
  let { year, month, day, hour, minute, second } = wallTimeOfLocalMs(Math.floor(fromLocalMs / SECOND_MS) * SECOND_MS);
  const firstYear = wallTimeOfLocalMs(untilLocalMs).year;
  // A unit that runs below its start (month 0, day 0, hour -1, ...) finds no match and borrows;
  // day 31 stands for "the month's last day".
  while (year >= firstYear) {
    const previousMonth = lastAtMost(fields.months, month);
    if (previousMonth === undefined) {
      [year, month, day, hour, minute, second] = [year - 1, 12, 31, 23, 59, 59];
      continue;
    }
    if (previousMonth !== month) [month, day, hour, minute, second] = [previousMonth, 31, 23, 59, 59];
    const previousDay = lastMatchingDayUpTo(fields, year, month, day);
    if (previousDay === undefined) {
      [month, day, hour, minute, second] = [month - 1, 31, 23, 59, 59];
      continue;
    }
    if (previousDay !== day) [day, hour, minute, second] = [previousDay, 23, 59, 59];
    const previousHour = lastAtMost(fields.hours, hour);
    if (previousHour === undefined) {
      [day, hour, minute, second] = [day - 1, 23, 59, 59];
      continue;
    }
    if (previousHour !== hour) [hour, minute, second] = [previousHour, 59, 59];
    const previousMinute = lastAtMost(fields.minutes, minute);
    if (previousMinute === undefined) {
      [hour, minute, second] = [hour - 1, 59, 59];
      continue;
    }
    if (previousMinute !== minute) [minute, second] = [previousMinute, 59];
    const previousSecond = lastAtMost(fields.seconds, second);
    if (previousSecond === undefined) {
      [minute, second] = [minute - 1, 59];
      continue;
    }
    const localMs = localMsOf(year, month, day, hour, minute, previousSecond);
    return localMs >= untilLocalMs ? localMs : null;
  }
  return null;
}
