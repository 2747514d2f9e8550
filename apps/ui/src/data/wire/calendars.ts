/** Calendars: named sets of local dates the schedules that name them do not fire on, and the dates each excludes. */

/** A named set of local dates the schedules that name it do not fire on: its own dates, and the public holidays of a country (and state and region). */
export interface Calendar {
  name: string;
  /** Ascending. */
  dates: string[];
  holidays: { country: string; state: string | null; region: string | null } | null;
  description: string | null;
  /** How many schedules name it. */
  schedules: number;
  createdAt: string;
  updatedAt: string;
}

/** One date a calendar excludes: a holiday's name, or null for one of its own dates. */
export interface CalendarDate {
  date: string;
  holiday: string | null;
}

/** The dates a calendar excludes between from and to (inclusive), ascending. */
export interface CalendarDates {
  from: string;
  to: string;
  items: CalendarDate[];
}
