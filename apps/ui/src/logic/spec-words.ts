/** A schedule's timing in words ("every day at 09:00 Europe/Berlin", "runs on each event order.paid"), for lists and headings. */
import type { EventTrigger } from '../data/wire/index.js';
import { triggerInWords } from './events.js';

export interface TimingSpec {
  cron: string | null;
  every: string | null;
  at: string | null;
  /** The events that start it, instead of a timing of the clock. */
  on?: EventTrigger | null;
  timezone: string;
}

const UNIT_WORDS: Record<string, [string, string]> = {
  ms: ['millisecond', 'milliseconds'],
  s: ['second', 'seconds'],
  m: ['minute', 'minutes'],
  h: ['hour', 'hours'],
  d: ['day', 'days'],
};

const WEEKDAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];

export function specInWords(spec: TimingSpec): string {
  if (spec.on != null) return triggerInWords(spec.on);
  if (spec.every !== null) return `every ${durationInWords(spec.every)}`;
  if (spec.at !== null) return `once at ${spec.at.replace('T', ' ').replace(/(\.000)?Z$/, '')} UTC`;
  if (spec.cron !== null) return cronInWords(spec.cron, spec.timezone);
  return 'no timing';
}

/** `15m` → "15 minutes", `1m` → "minute", `1h30m` → "1 hour 30 minutes". */
export function durationInWords(duration: string): string {
  const parts = [...duration.matchAll(/(\d+)(ms|s|m|h|d)/g)];
  if (parts.length === 0 || parts.map((p) => p[0]).join('') !== duration) return duration;
  if (parts.length === 1) {
    const [, n, unit] = parts[0]!;
    const [one, many] = UNIT_WORDS[unit!]!;
    return n === '1' ? one : `${n} ${many}`;
  }
  return parts.map(([, n, unit]) => `${n} ${UNIT_WORDS[unit!]![n === '1' ? 0 : 1]}`).join(' ');
}

function cronInWords(cron: string, timezone: string): string {
  const fields = cron.trim().split(/\s+/);
  const literal = `cron "${cron}" (${timezone})`;
  if (fields.length !== 5) return literal;
  const [minute, hour, dayOfMonth, month, dayOfWeek] = fields as [string, string, string, string, string];
  const isNumber = (f: string) => /^\d+$/.test(f);
  const step = (f: string) => /^\*\/(\d+)$/.exec(f)?.[1];
  const anyDay = dayOfMonth === '*' && month === '*' && dayOfWeek === '*';

  if (anyDay && hour === '*') {
    if (minute === '*') return 'every minute';
    const n = step(minute);
    if (n !== undefined) return `every ${n} minutes`;
    if (isNumber(minute)) return `every hour at minute ${Number(minute)}`;
  }
  if (anyDay && isNumber(minute)) {
    const n = step(hour);
    if (n !== undefined) return `every ${n} hours at minute ${Number(minute)} (${timezone})`;
  }
  if (!isNumber(minute) || !isNumber(hour)) return literal;
  const clock = `${hour.padStart(2, '0')}:${minute.padStart(2, '0')}`;
  const at = `at ${clock} ${timezone}`;
  if (anyDay) return `every day ${at}`;
  if (dayOfMonth === '*' && month === '*') {
    const days = weekdaysInWords(dayOfWeek);
    return days === null ? literal : `every ${days} ${at}`;
  }
  if (isNumber(dayOfMonth) && dayOfWeek === '*') {
    if (month === '*') return `on day ${Number(dayOfMonth)} of every month ${at}`;
    if (isNumber(month) && Number(month) >= 1 && Number(month) <= 12) return `every ${MONTHS[Number(month) - 1]} ${Number(dayOfMonth)} ${at}`;
  }
  return literal;
}

/** `1-5` → "weekday", `0,6` → "Saturday and Sunday", `1` → "Monday"; null when it is not a simple day list. */
function weekdaysInWords(field: string): string | null {
  if (field === '1-5') return 'weekday';
  if (field === '0,6' || field === '6,0' || field === '6,7') return 'Saturday and Sunday';
  const days: string[] = [];
  for (const part of field.split(',')) {
    if (!/^\d$/.test(part) || Number(part) > 7) return null;
    days.push(WEEKDAYS[Number(part) % 7]!);
  }
  if (days.length === 1) return days[0]!;
  return `${days.slice(0, -1).join(', ')} and ${days[days.length - 1]}`;
}
