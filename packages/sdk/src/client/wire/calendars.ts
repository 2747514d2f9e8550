/** Calendars: named sets of local dates (their own, and public holidays) the schedules that name them do not fire on. */
import type { Instant } from './shared.js';

/** Public holidays of a country (ISO 3166-1 alpha-2, e.g. "DE"), and of its state ("BY") and region, computed for each year a slot falls in. */
export interface HolidaySource {
  country: string;
  state?: string | null;
  region?: string | null;
}
/** A calendar's fields but its name (PUT /v1/calendars/:name): explicit dates, public holidays, or both. */
export interface CalendarFields {
  /** Local dates written YYYY-MM-DD, read in each schedule's own timezone. */
  dates?: string[] | null;
  holidays?: HolidaySource | null;
  /** At most 500 characters. */
  description?: string | null;
}
/** POST /v1/calendars. */
export interface CalendarInput extends CalendarFields {
  /** Unique per namespace; schedules name it in calendar.exclude. */
  name: string;
}
/** A calendar: the local dates it excludes from the schedules that name it. */
export interface Calendar {
  name: string;
  /** Its own dates, ascending. */
  dates: string[];
  holidays: { country: string; state: string | null; region: string | null } | null;
  description: string | null;
  /** How many schedules name it; it cannot be deleted while any does (409 CALENDAR_IN_USE). */
  schedules: number;
  createdAt: Instant;
  updatedAt: Instant;
}
/** One date a calendar excludes. */
export interface CalendarDate {
  /** YYYY-MM-DD. */
  date: string;
  /** The public holiday's name; null for a date the calendar lists itself. */
  holiday: string | null;
}
/** The dates a calendar excludes between from and to (inclusive), ascending. */
export interface CalendarDates {
  from: string;
  to: string;
  items: CalendarDate[];
}
