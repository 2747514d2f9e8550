/**
 * `kairos subscriptions [get|create|pause|resume|delete|test|deliveries]`: a client of the
 * subscription routes of the API at KAIROS_URL with KAIROS_API_KEY, like `kairos sensors`. Without
 * a subcommand it lists the subscriptions, newest first; `--json` (or `--output json`) prints what
 * the API answered.
 */
import type { Output } from '../output.js';
import { table } from '../output.js';
import { ApiRequestError, apiRequest, refusalMessage } from './api-request.js';

/** The parts of a subscription and a delivery the tables and lines show. */
interface Subscription {
  id: string;
  url: string;
  events: string[];
  filter: { scheduleIds: string[]; labels: Record<string, string> };
  format: string;
  description: string | null;
  state: string;
  disabledReason: string | null;
  failingSince: string | null;
}

interface Delivery {
  id: string;
  eventType: string;
  state: string;
  attempts: { statusCode: number | null; error: string | null }[];
  nextAttemptAt: string | null;
}

interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

export interface SubscriptionsOptions {
  limit: number;
  json: boolean;
  /** The fields of `create`. */
  url?: string;
  /** Comma-separated event types. */
  events?: string;
  /** Each `key=value`. */
  labels: string[];
  scheduleIds: string[];
  format?: string;
  description?: string;
  paused: boolean;
}

const USAGE =
  'use: kairos subscriptions [get|pause|resume|delete|test|deliveries <id> | create --url URL --events a,b [--label k=v ...] [--schedule ID ...] [--format json|slack] [--description TEXT] [--paused]]';

const clip = (text: string, width = 40): string => (text.length > width ? `${text.slice(0, width - 1)}…` : text);

/** The filter in a few words: its labels as k=v and how many schedules it names, or `-` when it lets every event through. */
function filterText(s: Subscription): string {
  const parts = Object.entries(s.filter.labels).map(([k, v]) => `${k}=${v}`);
  if (s.filter.scheduleIds.length > 0) parts.push(`${s.filter.scheduleIds.length} schedule${s.filter.scheduleIds.length === 1 ? '' : 's'}`);
  return parts.length === 0 ? '-' : parts.join(' ');
}

function subscriptionsTable(items: readonly Subscription[]): string {
  return table(
    ['id', 'state', 'url', 'events', 'filter', 'format', 'failing since'],
    items.map((s) => [s.id, s.state, s.url, s.events.join(','), filterText(s), s.format, s.failingSince ?? '-']),
  );
}

/** The last attempt's answer: its status, its error, or both; `-` before the first attempt. */
function lastAnswer(d: Delivery): string {
  const last = d.attempts.at(-1);
  if (last === undefined) return '-';
  if (last.error === null) return String(last.statusCode ?? '-');
  return clip(last.statusCode === null ? last.error : `${last.statusCode} ${last.error}`, 60);
}

function deliveriesTable(items: readonly Delivery[]): string {
  return table(
    ['id', 'event type', 'state', 'attempts', 'last status/error'],
    items.map((d) => [d.id, d.eventType, d.state === 'pending' && d.nextAttemptAt ? `pending (next ${d.nextAttemptAt})` : d.state, String(d.attempts.length), lastAnswer(d)]),
  );
}

/** One subscription, field per line. */
function subscriptionLines(s: Subscription): string {
  const filter = [
    ...(s.filter.scheduleIds.length > 0 ? [`schedules ${s.filter.scheduleIds.join(', ')}`] : []),
    ...(Object.keys(s.filter.labels).length > 0 ? [`labels ${Object.entries(s.filter.labels).map(([k, v]) => `${k}=${v}`).join(', ')}`] : []),
  ];
  return [
    `subscription ${s.id}: ${s.state}${s.disabledReason ? ` (${s.disabledReason})` : ''}`,
    `  ${s.format} to ${s.url}`,
    `  events ${s.events.join(', ')}`,
    `  filter: ${filter.length === 0 ? 'none, every event of those types' : filter.join('; ')}`,
    ...(s.failingSince ? [`  failing since ${s.failingSince}`] : []),
    ...(s.description ? [`  description: ${s.description}`] : []),
  ].join('\n');
}

/** The body of POST /v1/subscriptions from the flags; the API checks the values and names the field it refuses. */
function createBody(opts: SubscriptionsOptions): Record<string, unknown> {
  if (opts.url === undefined || opts.events === undefined) throw new ApiRequestError(`subscriptions create needs --url and --events: ${USAGE}`);
  const labels: Record<string, string> = {};
  for (const label of opts.labels) {
    const at = label.indexOf('=');
    if (at < 1) throw new ApiRequestError(`--label must be key=value, such as team=billing; got "${label}"`);
    labels[label.slice(0, at)] = label.slice(at + 1);
  }
  return {
    url: opts.url,
    events: opts.events.split(',').map((e) => e.trim()).filter(Boolean),
    ...(opts.labels.length > 0 || opts.scheduleIds.length > 0 ? { filter: { labels, scheduleIds: opts.scheduleIds } } : {}),
    ...(opts.format === undefined ? {} : { format: opts.format }),
    ...(opts.description === undefined ? {} : { description: opts.description }),
    paused: opts.paused,
  };
}

export async function subscriptionsCommand(out: Output, args: readonly string[], env: Record<string, string | undefined>, opts: SubscriptionsOptions): Promise<number> {
  const [action, id] = args;
  const call = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const answer = await apiRequest<T>(env, method, path, body);
    if (!answer.ok) throw new ApiRequestError(refusalMessage(answer));
    return answer.body as T;
  };
  const print = (value: unknown, text: string): void => out.line(opts.json ? JSON.stringify(value, null, 2) : text);
  if (action === undefined || action === 'list') {
    const page = await call<Page<Subscription>>('GET', `/v1/subscriptions?limit=${opts.limit}`);
    print(page.items, subscriptionsTable(page.items));
    return 0;
  }
  if (action === 'create') {
    const subscription = await call<Subscription>('POST', '/v1/subscriptions', createBody(opts));
    print(subscription, `created subscription ${subscription.id} (${subscription.state}): ${subscription.events.join(', ')} to ${subscription.url}`);
    return 0;
  }
  if (!['get', 'pause', 'resume', 'delete', 'test', 'deliveries'].includes(action)) throw new ApiRequestError(USAGE);
  if (id === undefined) throw new ApiRequestError(`subscriptions ${action} needs a subscription id: ${USAGE}`);
  const path = `/v1/subscriptions/${encodeURIComponent(id)}`;
  switch (action) {
    case 'get': {
      const subscription = await call<Subscription>('GET', path);
      print(subscription, subscriptionLines(subscription));
      return 0;
    }
    case 'deliveries': {
      const page = await call<Page<Delivery>>('GET', `${path}/deliveries?limit=${opts.limit}`);
      print(page.items, deliveriesTable(page.items));
      return 0;
    }
    case 'pause':
    case 'resume': {
      const subscription = await call<Subscription>('POST', `${path}/${action}`);
      print(subscription, `${action === 'pause' ? 'paused' : 'resumed'} subscription ${subscription.id} (${subscription.url})`);
      return 0;
    }
    case 'delete': {
      // The API answers 204 with no body: the JSON says what was deleted.
      await call<null>('DELETE', path);
      print({ id, deleted: true }, `deleted subscription ${id} and its deliveries`);
      return 0;
    }
    default: {
      const sent = await call<{ eventId: string }>('POST', `${path}/test`);
      print(sent, `sent a test event ${sent.eventId} to subscription ${id}: see kairos subscriptions deliveries ${id}`);
      return 0;
    }
  }
}
