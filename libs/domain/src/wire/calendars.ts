/**
 * The wire shapes of calendars, declared once: a calendar's body (POST, PUT by name), a schedule's
 * `calendar` rule, and the views REST and GraphQL answer with.
 */
import { z } from 'zod';
import { checkHolidaySource, isIsoDate, MAX_CALENDAR_DATES, MAX_CALENDARS_PER_SCHEDULE, type CalendarRule, type HolidaySource } from '../calendars.js';
import { ValidationError } from '../errors.js';
import { isObject } from '../json-readers.js';
import { NAME_PATTERN, NAME_PATTERN_HINT } from '../schedule-spec.js';
import { ON_EXCLUDED } from '../time/index.js';
import { checkedBy, closedObject, present, readWire, text, worded } from './read.js';
import { component, defaulted, page } from './registry.js';
import { Instant } from './shared.js';

export const MAX_CALENDAR_DESCRIPTION = 500;

/** A calendar as stored, with its defaults filled in. */
export interface CalendarSpec {
  name: string;
  dates: string[];
  holidays: HolidaySource | null;
  description: string | null;
}

const calendarName = text(200).regex(NAME_PATTERN, worded((field) => `${field} ${NAME_PATTERN_HINT}`));

const isoDate = z
  .string(worded((field) => `${field} must be a date written YYYY-MM-DD, e.g. "2026-12-24"`))
  .check(
    checkedBy((value, field) => {
      if (!isIsoDate(value as string)) throw new ValidationError('INVALID_DATE', field, `${field} must be a real date written YYYY-MM-DD, e.g. "2026-12-24"; got "${String(value)}"`);
    }),
  )
  .meta({ format: 'date' });

const code = (what: string) => text(16).regex(/^[A-Za-z0-9]+$/, worded((field) => `${field} must be a ${what} code of letters and digits`));

const holidays = closedObject({
  country: present(code('country'), (field) => `${field} is required: an ISO 3166-1 alpha-2 country code such as "DE" or "US"`).describe('An ISO 3166-1 alpha-2 code, e.g. "DE".'),
  state: code('state').nullable().optional().describe('A state (or province) of the country, e.g. "BY" for Bavaria; its own holidays are added.'),
  region: code('region').nullable().optional().describe('A region of that state, as the holiday data names it (e.g. "A" for Augsburg in DE-BY); its own holidays are added.'),
}).describe('Public holidays of a country, and of its state and region, computed for each year a slot falls in (the `date-holidays` data).');

const calendarFields = {
  name: present(calendarName, (field) => `${field} is required: the calendar's name, unique in the namespace, e.g. "bavaria"`).describe('Unique per namespace; schedules name it in `calendar.exclude`.'),
  dates: z
    .array(isoDate, worded((field) => `${field} must be an array of dates written YYYY-MM-DD`))
    .max(MAX_CALENDAR_DATES, worded((field) => `${field} lists at most ${MAX_CALENDAR_DATES} dates`))
    .nullable()
    .optional()
    .describe('Local dates (YYYY-MM-DD, read in each schedule\'s own zone) that hold no slot.'),
  holidays: holidays.nullable().optional(),
  description: text(MAX_CALENDAR_DESCRIPTION).nullable().optional().describe(`What the calendar is for; at most ${MAX_CALENDAR_DESCRIPTION} characters.`),
};

export const CalendarCreate = component(
  'CalendarCreate',
  closedObject(calendarFields),
  'A calendar (POST /v1/calendars, PUT /v1/calendars/{name}): explicit `dates`, the public `holidays` of a country (and state and region), or both. Unknown fields are refused (UNKNOWN_FIELD); null counts as absent.',
);

export const CalendarPut = component(
  'CalendarPut',
  closedObject({ ...calendarFields, name: calendarName.nullable().optional().describe('Optional: the path names the calendar; if given, the same name.') }),
  'A calendar (PUT /v1/calendars/{name}): as CalendarCreate, the name coming from the path.',
);

const READ_ORDER = ['name', 'dates', 'holidays', 'description'];

/** A calendar body of POST, or of PUT when `pathName` is given: the body may repeat the path's name but not contradict it. */
export function readCalendarCreate(body: unknown, pathName?: string): CalendarSpec {
  if (pathName !== undefined) readWire(closedObject({ name: calendarName }), { name: pathName });
  const read = pathName === undefined ? readWire(CalendarCreate, body, READ_ORDER) : { ...readWire(CalendarPut, body, READ_ORDER), name: pathName };
  if (pathName !== undefined && isObject(body) && body.name != null && body.name !== pathName) {
    throw new ValidationError('CONFLICTING_FIELDS', 'name', `the body names "${String(body.name)}" but the path names "${pathName}"; drop one`);
  }
  const dates = [...new Set(read.dates ?? [])].sort();
  const source = read.holidays ? checkHolidaySource({ country: read.holidays.country, state: read.holidays.state ?? null, region: read.holidays.region ?? null }, 'holidays') : null;
  if (dates.length === 0 && source === null) {
    throw new ValidationError('MISSING_FIELD', 'dates', 'a calendar needs "dates", "holidays" or both: e.g. "dates": ["2026-12-24"] or "holidays": { "country": "DE", "state": "BY" }');
  }
  return { name: read.name, dates, holidays: source, description: read.description ?? null };
}

/** A schedule's `calendar`. */
export const CalendarRuleInput = component(
  'CalendarRule',
  closedObject({
    exclude: z
      .array(calendarName, worded((field) => `${field} must be an array of calendar names`))
      .max(MAX_CALENDARS_PER_SCHEDULE, worded((field) => `${field} names at most ${MAX_CALENDARS_PER_SCHEDULE} calendars`))
      .nullable()
      .optional()
      .describe("Names of the namespace's calendars: a slot whose local date (in the schedule's zone) one of them lists does not fire on it."),
    weekdaysOnly: defaulted(z.boolean().nullable(), false, 'Saturdays and Sundays (in the schedule\'s zone) are excluded too.'),
    onExcluded: defaulted(
      z.enum(ON_EXCLUDED, worded((field) => `${field} must be one of ${ON_EXCLUDED.join(', ')}`)).nullable(),
      'skip',
      'skip: an excluded date fires nothing (one tick CALENDAR_EXCLUDED records it); previous / next: its slots move to the nearest allowed date before / after it, at the same local time, unless that date has slots of its own.',
    ),
  }).check(
    checkedBy((value, field) => {
      const rule = value as { exclude?: string[] | null; weekdaysOnly?: boolean | null };
      if ((rule.exclude ?? []).length === 0 && rule.weekdaysOnly !== true) {
        throw new ValidationError('MISSING_FIELD', `${field}.exclude`, `${field}.exclude must name at least one calendar (or set weekdaysOnly), e.g. { "exclude": ["bavaria"] }`);
      }
      const seen = new Set<string>();
      for (const [i, name] of (rule.exclude ?? []).entries()) {
        if (seen.has(name)) throw new ValidationError('VALIDATION_FAILED', `${field}.exclude[${i}]`, `${field}.exclude[${i}]: "${name}" is listed twice; list each calendar once`);
        seen.add(name);
      }
    }),
  ),
  "The dates a schedule does not fire on: the calendars it excludes, and weekends if weekdaysOnly; each slot's local date in the schedule's zone is what is tested.",
);

/** A read `calendar` rule with its defaults. */
export function calendarRuleOf(read: z.output<typeof CalendarRuleInput>): CalendarRule {
  return { exclude: read.exclude ?? [], weekdaysOnly: read.weekdaysOnly ?? false, onExcluded: read.onExcluded ?? 'skip' };
}

// ---- Responses ----

export const OnExcludedShape = component(
  'OnExcluded',
  z.enum(ON_EXCLUDED),
  'What becomes of a slot on an excluded date: skip (nothing fires; one tick CALENDAR_EXCLUDED per date), previous or next (it moves to the nearest allowed date before or after, at the same local time).',
);

export const CalendarRuleView = component(
  'CalendarRuleView',
  z.strictObject({ exclude: z.array(z.string()), weekdaysOnly: z.boolean(), onExcluded: OnExcludedShape }),
  'The dates a schedule does not fire on, with its defaults filled in.',
);

export const CalendarView = component(
  'Calendar',
  z.strictObject({
    name: z.string(),
    dates: z.array(z.string().meta({ format: 'date' })).describe('Its own dates, ascending.'),
    holidays: z.strictObject({ country: z.string(), state: z.string().nullable(), region: z.string().nullable() }).nullable(),
    description: z.string().nullable(),
    schedules: z.int().min(0).describe('How many schedules name it; it cannot be deleted while any does.'),
    createdAt: Instant,
    updatedAt: Instant,
  }),
  'A calendar: the local dates it excludes from the schedules that name it.',
);
export const CalendarPage = component('CalendarPage', page(CalendarView, 'A page of calendars, by name.'));

export const CalendarDate = component(
  'CalendarDate',
  z.strictObject({ date: z.string().meta({ format: 'date' }), holiday: z.string().nullable().describe("The public holiday's name; null for a date the calendar lists itself.") }),
  'One date a calendar excludes.',
);
export const CalendarDates = component(
  'CalendarDates',
  z.strictObject({ from: z.string(), to: z.string(), items: z.array(CalendarDate) }),
  'The dates a calendar excludes between from and to (inclusive), ascending.',
);
