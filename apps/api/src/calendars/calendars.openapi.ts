/** The calendar routes of the OpenAPI document. */
import { body, json, operation, param } from '../openapi/openapi.operations.js';
import { queryParameters } from '../openapi/openapi.schemas.js';
import type { PathItemObject } from '../openapi/openapi.types.js';

const CALENDAR_EXAMPLES = {
  holidays: {
    summary: "Bavaria's public holidays, and the office's own closing days",
    value: { name: 'bavaria', holidays: { country: 'DE', state: 'BY' }, dates: ['2026-12-24', '2026-12-31'], description: 'Munich office' },
  },
  dates: {
    summary: 'A freeze: explicit dates only',
    value: { name: 'release-freeze', dates: ['2026-12-21', '2026-12-22', '2026-12-23'] },
  },
};

const REPLANNED =
  'The schedules naming it plan their slots from now on with the new dates, as if they had been redefined: runs made ahead for slots still to come are withdrawn (SCHEDULE_CHANGED) and their cursor moves to the next slot the calendar allows.';

export const CALENDAR_PATHS: Record<string, PathItemObject> = {
  '/v1/calendars': {
    post: operation({
      operationId: 'createCalendar',
      tags: ['calendars'],
      summary: 'Create a calendar',
      description:
        "Stores a named set of local dates: explicit `dates`, the public `holidays` of a country (and state and region, computed for every year a slot falls in), or both. A schedule names it in `calendar.exclude`; each slot's local date in the schedule's own zone is tested against it. 409 CONFLICT when the name is taken.",
      requestBody: body('CalendarCreate', true, CALENDAR_EXAMPLES),
      ok: { 201: json('Calendar', 'Created.') },
      errors: [400, 409, 413],
    }),
    get: operation({
      operationId: 'listCalendars',
      tags: ['calendars'],
      summary: 'List calendars',
      parameters: queryParameters('PageQuery'),
      ok: { 200: json('CalendarPage', 'A page of calendars, by name.') },
      errors: [400],
    }),
  },
  '/v1/calendars/{name}': {
    get: operation({
      operationId: 'getCalendar',
      tags: ['calendars'],
      summary: 'Read a calendar',
      parameters: [param('CalendarName')],
      ok: { 200: json('Calendar', 'The calendar.') },
      errors: [404],
    }),
    put: operation({
      operationId: 'putCalendar',
      tags: ['calendars'],
      summary: 'Create or replace a calendar by name',
      description: `Creates the calendar (201), or replaces its dates, holidays and description (200; unchanged, nothing happens). ${REPLANNED}`,
      parameters: [param('CalendarName')],
      requestBody: body('CalendarPut', true, { holidays: { summary: CALENDAR_EXAMPLES.holidays.summary, value: { holidays: { country: 'DE', state: 'BY' }, dates: ['2026-12-24'] } } }),
      ok: { 200: json('Calendar', 'Replaced.'), 201: json('Calendar', 'Created.') },
      errors: [400, 413],
    }),
    delete: operation({
      operationId: 'deleteCalendar',
      tags: ['calendars'],
      summary: 'Delete a calendar',
      description: '409 CALENDAR_IN_USE while a schedule names it in calendar.exclude; the message names them.',
      parameters: [param('CalendarName')],
      ok: { 204: { description: 'Deleted; no body.' } },
      errors: [404, 409],
    }),
  },
  '/v1/calendars/{name}/dates': {
    get: operation({
      operationId: 'listCalendarDates',
      tags: ['calendars'],
      summary: 'The dates a calendar excludes',
      description: 'Its own dates and its public holidays (with their names) between from and to, inclusive, ascending: by default the twelve months from today.',
      parameters: [param('CalendarName'), ...queryParameters('CalendarDatesQuery')],
      ok: { 200: json('CalendarDates', 'The dates excluded in the range.') },
      errors: [400, 404],
    }),
  },
};
