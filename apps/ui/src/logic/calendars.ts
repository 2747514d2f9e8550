/**
 * Calendars as the dashboard shows them: where a calendar's holidays come from, what a schedule's
 * calendar rule does to a slot, why it keeps a date clear, and the year strip of a calendar's page
 * (twelve month grids, Monday first, each date it excludes marked with why).
 */
import type { Calendar, CalendarDate, CalendarRule, OnExcluded } from '../data/wire/index.js';

const WEEKDAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
const DAY_MS = 86_400_000;

/** "DE-BY public holidays", as the calendar's codes name its source; null when it takes none. */
export function holidaysInWords(holidays: Calendar['holidays']): string | null {
  if (holidays === null) return null;
  return `${[holidays.country, holidays.state, holidays.region].filter((code) => code !== null).join('-')} public holidays`;
}

export function schedulesInWords(count: number): string {
  return count === 0 ? 'no schedule' : count === 1 ? '1 schedule' : `${count} schedules`;
}

/** What becomes of a slot on a date the rule excludes. */
export const ON_EXCLUDED_WORDS: Record<OnExcluded, string> = {
  skip: 'nothing fires on excluded dates',
  previous: 'slots on excluded dates move to the previous allowed date',
  next: 'slots on excluded dates move to the next allowed date',
};

const dayOf = (date: string): Date => new Date(`${date}T00:00:00Z`);
const isoOf = (day: Date): string => day.toISOString().slice(0, 10);

/** "Wednesday" for 2027-01-06. */
export function weekdayOf(date: string): string {
  return WEEKDAYS[dayOf(date).getUTCDay()]!;
}

/**
 * Why a schedule's rule keeps a local date clear: each calendar it names that lists the date
 * ("Epiphany (bavaria)", "an own date of office"), and the weekend when it fires on weekdays
 * only. `listed` holds the dates each calendar lists around it; when none tells, the rule still did.
 */
export function whyExcluded(date: string, rule: CalendarRule, listed: ReadonlyMap<string, readonly CalendarDate[]>): string {
  const reasons = rule.exclude.flatMap((name) => {
    const found = listed.get(name)?.find((d) => d.date === date);
    if (found === undefined) return [];
    return [found.holiday === null ? `an own date of ${name}` : `${found.holiday} (${name})`];
  });
  const weekday = dayOf(date).getUTCDay();
  if (rule.weekdaysOnly && (weekday === 0 || weekday === 6)) reasons.push('weekend');
  return reasons.length === 0 ? 'a date of its calendars' : reasons.join(', ');
}

/** Today (UTC, as the API counts it) to the last day of the eleventh month after: the twelve months the strip draws. */
export function twelveMonthsFrom(today: string): { from: string; to: string } {
  const start = dayOf(today);
  return { from: today, to: isoOf(new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth() + 12, 0))) };
}

/** One day of a month grid. */
export interface StripDay {
  date: string;
  day: number;
  /** 0 is Monday, 6 Sunday. */
  column: number;
  /** The week of the month it falls in, from 0. */
  row: number;
  /** Before the range listed (earlier this month): drawn faint, never marked. */
  before: boolean;
  today: boolean;
  excluded: CalendarDate | null;
  /** "Wednesday 6 January 2027: Epiphany"; the tooltip of a marked day. */
  words: string;
}

export interface StripMonth {
  /** YYYY-MM. */
  key: string;
  label: string;
  days: StripDay[];
  /** How many of its dates are excluded. */
  excluded: number;
}

/** The twelve months from `from`'s, each laid out in weeks, every date `dates` lists marked. */
export function yearStrip(dates: { from: string; items: readonly CalendarDate[] }): StripMonth[] {
  const byDate = new Map(dates.items.map((d) => [d.date, d]));
  const first = dayOf(dates.from);
  return Array.from({ length: 12 }, (_, i) => {
    const year = first.getUTCFullYear() + Math.floor((first.getUTCMonth() + i) / 12);
    const month = (first.getUTCMonth() + i) % 12;
    const start = Date.UTC(year, month, 1);
    const lead = (new Date(start).getUTCDay() + 6) % 7;
    const length = new Date(Date.UTC(year, month + 1, 0)).getUTCDate();
    const days = Array.from({ length }, (_, d): StripDay => {
      const date = isoOf(new Date(start + d * DAY_MS));
      const before = date < dates.from;
      const excluded = before ? null : (byDate.get(date) ?? null);
      const named = `${weekdayOf(date)} ${d + 1} ${MONTHS[month]} ${year}`;
      return {
        date,
        day: d + 1,
        column: (lead + d) % 7,
        row: Math.floor((lead + d) / 7),
        before,
        today: date === dates.from,
        excluded,
        words: excluded === null ? named : `${named}: ${excluded.holiday ?? "one of the calendar's own dates"}`,
      };
    });
    return { key: `${year}-${String(month + 1).padStart(2, '0')}`, label: `${MONTHS[month]} ${year}`, days, excluded: days.filter((d) => d.excluded !== null).length };
  });
}
