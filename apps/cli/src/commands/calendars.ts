/**
 * `kairos calendars [get|put|delete]`: a client of the calendar routes of the API at KAIROS_URL
 * with KAIROS_API_KEY, like `kairos subscriptions`. Without a subcommand it lists the calendars, by
 * name; `get` shows one and the dates it excludes in the next twelve months; `--json` (or
 * `--output json`) prints what the API answered.
 */
import { readFileSync } from 'node:fs';
import { extname } from 'node:path';
import { parse as parseYaml } from 'yaml';
import type { Output } from '../output.js';
import { table } from '../output.js';
import { ApiRequestError, apiRequest, refusalMessage } from './api-request.js';

/** The parts of a calendar and of its dates the tables and lines show. */
interface Calendar {
  name: string;
  dates: string[];
  holidays: { country: string; state: string | null; region: string | null } | null;
  description: string | null;
  schedules: number;
}

interface CalendarDates {
  from: string;
  to: string;
  items: { date: string; holiday: string | null }[];
}

interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

export interface CalendarsOptions {
  limit: number;
  json: boolean;
  /** `put --file`: a calendar body in YAML or JSON. */
  files: string[];
  /** `put --dates`: comma-separated YYYY-MM-DD. */
  dates?: string;
  country?: string;
  state?: string;
  region?: string;
  description?: string;
}

const USAGE = 'use: kairos calendars [get|delete <name> | put <name> --file FILE | put <name> [--dates 2026-12-24,2026-12-31] [--country DE [--state BY [--region A]]] [--description TEXT]]';

const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;

/** Its holidays as country-state-region (`DE-BY`), or `-` without. */
function holidaysText(c: Calendar): string {
  if (c.holidays === null) return '-';
  return [c.holidays.country, c.holidays.state, c.holidays.region].filter((part) => part !== null).join('-');
}

function calendarsTable(items: readonly Calendar[]): string {
  return table(
    ['name', 'dates', 'holidays', 'schedules', 'description'],
    items.map((c) => [c.name, String(c.dates.length), holidaysText(c), String(c.schedules), c.description ?? '-']),
  );
}

/** One calendar, field per line, then the dates it excludes in the range asked. */
function calendarLines(c: Calendar, dates: CalendarDates): string {
  return [
    `calendar ${c.name}: named by ${plural(c.schedules, 'schedule')}`,
    ...(c.description ? [`  description: ${c.description}`] : []),
    `  holidays: ${c.holidays === null ? 'none' : holidaysText(c)}`,
    `  dates: ${c.dates.length === 0 ? 'none' : c.dates.join(', ')}`,
    '',
    `excludes ${plural(dates.items.length, 'date')} from ${dates.from} to ${dates.to}${dates.items.length === 0 ? '' : ':'}`,
    ...(dates.items.length === 0 ? [] : [table(['date', 'holiday'], dates.items.map((d) => [d.date, d.holiday ?? '-']))]),
  ].join('\n');
}

/** The body of PUT /v1/calendars/:name from --file, or from the flags; the API checks the values and names the field it refuses. */
function putBody(opts: CalendarsOptions): unknown {
  const flags = opts.dates !== undefined || opts.country !== undefined || opts.state !== undefined || opts.region !== undefined || opts.description !== undefined;
  if (opts.files.length > 1) throw new ApiRequestError('calendars put reads one --file');
  if (opts.files.length === 1) {
    if (flags) throw new ApiRequestError('calendars put takes --file or the flags (--dates, --country, --state, --region, --description), not both');
    return readBody(opts.files[0]!);
  }
  if (opts.dates === undefined && opts.country === undefined) throw new ApiRequestError(`calendars put needs --file, or --dates, --country or both: ${USAGE}`);
  if (opts.country === undefined && (opts.state !== undefined || opts.region !== undefined)) throw new ApiRequestError('--state and --region need --country, e.g. --country DE --state BY');
  return {
    ...(opts.dates === undefined ? {} : { dates: opts.dates.split(',').map((d) => d.trim()).filter(Boolean) }),
    ...(opts.country === undefined ? {} : { holidays: { country: opts.country, ...(opts.state === undefined ? {} : { state: opts.state }), ...(opts.region === undefined ? {} : { region: opts.region }) } }),
    ...(opts.description === undefined ? {} : { description: opts.description }),
  };
}

/** A calendar body in a YAML or JSON file (by its extension; YAML reads JSON too). */
function readBody(file: string): unknown {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    throw new ApiRequestError(`${file}: no such file`);
  }
  try {
    return extname(file) === '.json' ? JSON.parse(text) : parseYaml(text);
  } catch (error) {
    throw new ApiRequestError(`${file}: not valid ${extname(file) === '.json' ? 'JSON' : 'YAML'}: ${(error as Error).message.split('\n')[0]}`);
  }
}

export async function calendarsCommand(out: Output, args: readonly string[], env: Record<string, string | undefined>, opts: CalendarsOptions): Promise<number> {
  const [action, name] = args;
  const call = async <T>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T }> => {
    const answer = await apiRequest<T>(env, method, path, body);
    if (!answer.ok) throw new ApiRequestError(refusalMessage(answer));
    return { status: answer.status, body: answer.body as T };
  };
  const print = (value: unknown, text: string): void => out.line(opts.json ? JSON.stringify(value, null, 2) : text);
  if (action === undefined || action === 'list') {
    const page = (await call<Page<Calendar>>('GET', `/v1/calendars?limit=${opts.limit}`)).body;
    print(page.items, calendarsTable(page.items));
    return 0;
  }
  if (!['get', 'put', 'delete'].includes(action)) throw new ApiRequestError(USAGE);
  if (name === undefined) throw new ApiRequestError(`calendars ${action} needs a calendar name: ${USAGE}`);
  const path = `/v1/calendars/${encodeURIComponent(name)}`;
  switch (action) {
    case 'get': {
      const calendar = (await call<Calendar>('GET', path)).body;
      // The API's default range: the twelve months from today.
      const dates = (await call<CalendarDates>('GET', `${path}/dates`)).body;
      print({ calendar, dates }, calendarLines(calendar, dates));
      return 0;
    }
    case 'put': {
      const { status, body: calendar } = await call<Calendar>('PUT', path, putBody(opts));
      const what = [...(calendar.dates.length > 0 ? [plural(calendar.dates.length, 'date')] : []), ...(calendar.holidays ? [`holidays ${holidaysText(calendar)}`] : [])].join(', ');
      // 200 is a replacement or no change at all: the line says what the calendar holds either way.
      print(calendar, status === 201 ? `created calendar ${calendar.name}: ${what}` : `calendar ${calendar.name} holds ${what}, named by ${plural(calendar.schedules, 'schedule')}`);
      return 0;
    }
    default: {
      // The API answers 204 with no body: the JSON says what was deleted.
      await call<null>('DELETE', path);
      print({ name, deleted: true }, `deleted calendar ${name}`);
      return 0;
    }
  }
}
