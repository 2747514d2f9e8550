/**
 * `kairos events [send|list|get]`: a client of the event routes of the API at KAIROS_URL with
 * KAIROS_API_KEY, like `kairos calendars`. `send NAME [JSON] [--id ID]` sends an event and says
 * what it started; `list` (the default) shows the newest events, of one name with `--name`; `get`
 * shows one. `--json` (or `--output json`) prints what the API answered.
 */
import type { Output } from '../output.js';
import { table } from '../output.js';
import { ApiRequestError, apiRequest, refusalMessage } from './api-request.js';

/** An event as the API answers it. */
interface EventView {
  id: string;
  name: string;
  data: unknown;
  receivedAt: string;
  deduped: boolean;
  runs: string[];
  skipped: { scheduleId: string; reasonCode: string }[];
  resumed: string[];
}

interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

export interface EventsOptions {
  limit: number;
  json: boolean;
  /** `send --id`: the producer's id, so a repeat is deduped. */
  id?: string;
  /** `list --name`: only events of this name. */
  name?: string;
}

const USAGE = 'use: kairos events [list [--name NAME] [--limit N] | send NAME [JSON] [--id ID] | get <id>]';

const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;

/** JSON on one line, cut to `max` characters. */
function brief(value: unknown, max = 60): string {
  const text = JSON.stringify(value) ?? 'null';
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/** What an event started, skipped and resumed, a line each. */
function outcomeLines(e: EventView): string[] {
  return [
    `  started ${plural(e.runs.length, 'run')}${e.runs.length === 0 ? '' : `: ${e.runs.join(', ')}`}`,
    ...(e.skipped.length === 0 ? [] : [`  skipped ${plural(e.skipped.length, 'schedule')}: ${e.skipped.map((s) => `${s.scheduleId} (${s.reasonCode})`).join(', ')}`]),
    ...(e.resumed.length === 0 ? [] : [`  resumed ${plural(e.resumed.length, 'waiting run')}: ${e.resumed.join(', ')}`]),
  ];
}

function eventLines(e: EventView, heading: string): string {
  return [heading, `  received: ${e.receivedAt}`, `  data: ${JSON.stringify(e.data)}`, ...outcomeLines(e)].join('\n');
}

function eventsTable(items: readonly EventView[]): string {
  return table(
    ['received', 'id', 'name', 'runs', 'skipped', 'resumed', 'data'],
    items.map((e) => [e.receivedAt, e.id, e.name, String(e.runs.length), String(e.skipped.length), String(e.resumed.length), brief(e.data)]),
  );
}

/** The event's data from the command line: any JSON value; none is null. */
function readData(text: string | undefined): { data?: unknown } {
  if (text === undefined) return {};
  try {
    return { data: JSON.parse(text) as unknown };
  } catch (error) {
    throw new ApiRequestError(`the event's data must be JSON (quote a string: '"text"'): ${(error as Error).message}`);
  }
}

export async function eventsCommand(out: Output, args: readonly string[], env: Record<string, string | undefined>, opts: EventsOptions): Promise<number> {
  const [action, ...rest] = args;
  const call = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const answer = await apiRequest<T>(env, method, path, body);
    if (!answer.ok) throw new ApiRequestError(refusalMessage(answer));
    return answer.body as T;
  };
  const print = (value: unknown, text: string): void => out.line(opts.json ? JSON.stringify(value, null, 2) : text);
  switch (action) {
    case undefined:
    case 'list': {
      const query = new URLSearchParams({ limit: String(opts.limit), ...(opts.name === undefined ? {} : { name: opts.name }) });
      const page = await call<Page<EventView>>('GET', `/v1/events?${query}`);
      print(page.items, page.items.length === 0 ? `no events${opts.name === undefined ? '' : ` named ${opts.name}`}` : eventsTable(page.items));
      return 0;
    }
    case 'send': {
      const [name, data, extra] = rest;
      if (name === undefined) throw new ApiRequestError(`events send needs an event name: ${USAGE}`);
      if (extra !== undefined) throw new ApiRequestError(`events send takes one JSON argument (quote it): ${USAGE}`);
      const event = await call<EventView>('POST', '/v1/events', { name, ...readData(data), ...(opts.id === undefined ? {} : { id: opts.id }) });
      const heading = event.deduped ? `event ${event.id} (${event.name}) was sent before: the first is answered, nothing started again` : `sent event ${event.id} (${event.name})`;
      print(event, eventLines(event, heading));
      return 0;
    }
    case 'get': {
      const [id] = rest;
      if (id === undefined) throw new ApiRequestError(`events get needs an event id: ${USAGE}`);
      const event = await call<EventView>('GET', `/v1/events/${encodeURIComponent(id)}`);
      print(event, eventLines(event, `event ${event.id} (${event.name})`));
      return 0;
    }
    default:
      throw new ApiRequestError(USAGE);
  }
}
