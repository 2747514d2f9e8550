/**
 * Calendars: named sets of local dates a schedule keeps clear of, from explicit dates and from the
 * public holidays of a country (and its state and region) that `date-holidays` computes for each
 * year a slot falls in, never a list fixed in advance. A schedule's `calendar` names the ones it
 * excludes, and may exclude Saturdays and Sundays too.
 */
import { createRequire } from 'node:module';
import type Holidays from 'date-holidays';
import { ValidationError } from './errors.js';
import { dayOfIsoDate, isoDateOfDay, weekdayOfDay, type DayExclusion, type OnExcluded } from './time/index.js';

/** Where a calendar's holidays come from. */
export interface HolidaySource {
  country: string;
  state: string | null;
  region: string | null;
}

/** A calendar as stored: its own dates (YYYY-MM-DD) and the holidays it takes. */
export interface CalendarDefinition {
  name: string;
  dates: readonly string[];
  holidays: HolidaySource | null;
}

/** What a schedule says of calendars. */
export interface CalendarRule {
  /** The names of the namespace's calendars whose dates hold no slot. */
  exclude: string[];
  /** Saturdays and Sundays hold no slot either. */
  weekdaysOnly: boolean;
  onExcluded: OnExcluded;
}

export const MAX_CALENDAR_DATES = 10_000;
export const MAX_CALENDARS_PER_SCHEDULE = 16;
export const ISO_DATE = /^\d{4}-\d{2}-\d{2}$/;

/** True for a YYYY-MM-DD that names a real date. */
export function isIsoDate(text: string): boolean {
  return ISO_DATE.test(text) && isoDateOfDay(dayOfIsoDate(text)) === text;
}

/**
 * date-holidays, loaded on first use: its data (some 200 countries) stays out of every bundle that
 * takes this library but computes no holiday, such as the SDK's.
 */
let holidaysClass: typeof Holidays | undefined;
function loadHolidays(): typeof Holidays {
  return (holidaysClass ??= createRequire(import.meta.url)('date-holidays') as typeof Holidays);
}

/**
 * A holiday source date-holidays knows: its country, its state of that country, its region of that
 * state. Codes are matched case-insensitively and returned as the data spells them.
 */
export function checkHolidaySource(source: HolidaySource, field: string): HolidaySource {
  const holidayData = new (loadHolidays())();
  const countries = holidayData.getCountries('en');
  const country = Object.keys(countries).find((code) => code.toLowerCase() === source.country.toLowerCase());
  if (country === undefined) {
    throw new ValidationError('UNKNOWN_COUNTRY', `${field}.country`, `no holidays are known for country "${source.country}"; use an ISO 3166-1 alpha-2 code such as "DE" or "US"`);
  }
  if (source.state === null) {
    if (source.region !== null) throw new ValidationError('VALIDATION_FAILED', `${field}.region`, 'a region needs its state: give "state" too');
    return { country, state: null, region: null };
  }
  const states = holidayData.getStates(country, 'en') ?? {};
  const state = Object.keys(states).find((code) => code.toLowerCase() === source.state!.toLowerCase());
  if (state === undefined) {
    const known = Object.keys(states);
    throw new ValidationError(
      'VALIDATION_FAILED',
      `${field}.state`,
      known.length === 0 ? `country ${country} has no states with holidays of their own; drop "state"` : `country ${country} has no state "${source.state}"; use one of ${known.join(', ')}`,
    );
  }
  if (source.region === null) return { country, state, region: null };
  const regions = holidayData.getRegions(country, state, 'en') ?? {};
  const region = Object.keys(regions).find((code) => code.toLowerCase() === source.region!.toLowerCase());
  if (region === undefined) {
    const known = Object.keys(regions);
    throw new ValidationError(
      'VALIDATION_FAILED',
      `${field}.region`,
      known.length === 0 ? `state ${country}-${state} has no regions with holidays of their own; drop "region"` : `state ${country}-${state} has no region "${source.region}"; use one of ${known.join(', ')}`,
    );
  }
  return { country, state, region };
}

/** A public holiday of a source. */
export interface Holiday {
  date: string;
  name: string;
}

const holidaysByYear = new Map<string, readonly Holiday[]>();
const MAX_REMEMBERED_YEARS = 4_096;

/** The public holidays of a source in a year, in date order (computed once per source and year). */
export function publicHolidays(source: HolidaySource, year: number): readonly Holiday[] {
  const key = `${source.country}/${source.state ?? ''}/${source.region ?? ''}/${year}`;
  let holidays = holidaysByYear.get(key);
  if (holidays === undefined) {
    const Computed = loadHolidays();
    const calendar =
      source.state === null
        ? new Computed(source.country, { types: ['public'] })
        : source.region === null
          ? new Computed(source.country, source.state, { types: ['public'] })
          : new Computed(source.country, source.state, source.region, { types: ['public'] });
    const found = calendar.getHolidays(year, 'en');
    holidays = (Array.isArray(found) ? found : []).map((h) => ({ date: h.date.slice(0, 10), name: h.name }));
    if (holidaysByYear.size >= MAX_REMEMBERED_YEARS) holidaysByYear.clear();
    holidaysByYear.set(key, holidays);
  }
  return holidays;
}

/** One excluded date of a calendar, with why. */
export interface ExcludedDate {
  date: string;
  /** The holiday's name, or null for a date the calendar lists itself. */
  holiday: string | null;
}

/** The dates a calendar excludes in [fromDate, toDate] (YYYY-MM-DD, inclusive), in order. */
export function excludedDatesBetween(calendar: CalendarDefinition, fromDate: string, toDate: string): ExcludedDate[] {
  const found = new Map<string, ExcludedDate>();
  for (const date of calendar.dates) {
    if (date >= fromDate && date <= toDate) found.set(date, { date, holiday: null });
  }
  if (calendar.holidays !== null) {
    for (let year = Number(fromDate.slice(0, 4)); year <= Number(toDate.slice(0, 4)); year++) {
      for (const h of publicHolidays(calendar.holidays, year)) {
        if (h.date >= fromDate && h.date <= toDate && !found.has(h.date)) found.set(h.date, { date: h.date, holiday: h.name });
      }
    }
  }
  return [...found.values()].sort((a, b) => (a.date < b.date ? -1 : 1));
}

/**
 * Which local dates a schedule's rule excludes, given the calendars it names. A calendar the rule
 * names but `calendars` lacks (deleted under it) excludes nothing.
 */
export function dayExclusionOf(rule: CalendarRule, calendars: readonly CalendarDefinition[]): DayExclusion {
  const named = calendars.filter((c) => rule.exclude.includes(c.name));
  const dates = new Set<number>();
  for (const c of named) for (const date of c.dates) dates.add(dayOfIsoDate(date));
  const sources = named.flatMap((c) => (c.holidays === null ? [] : [c.holidays]));
  const holidayYears = new Map<number, Set<number>>();
  const holidaysOf = (year: number): Set<number> => {
    let days = holidayYears.get(year);
    if (days === undefined) {
      days = new Set(sources.flatMap((s) => publicHolidays(s, year).map((h) => dayOfIsoDate(h.date))));
      holidayYears.set(year, days);
    }
    return days;
  };
  return (day) => {
    if (rule.weekdaysOnly) {
      const weekday = weekdayOfDay(day);
      if (weekday === 0 || weekday === 6) return true;
    }
    if (dates.has(day)) return true;
    return sources.length > 0 && holidaysOf(Number(isoDateOfDay(day).slice(0, 4))).has(day);
  };
}
