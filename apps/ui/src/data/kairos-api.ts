/**
 * Everything the dashboard asks the API, in one typed place: REST /v1 for reads and actions,
 * /auth for the browser session (an HttpOnly cookie plus the XSRF-TOKEN cookie echoed on writes),
 * and the GraphQL subscription for live runs.
 */
import { createClient, type Client } from 'graphql-ws';
import type {
  Calendar,
  CalendarDates,
  Cluster,
  JsonValue,
  KairosEvent,
  Page,
  Preview,
  Queue,
  Run,
  RunBulkRequest,
  RunBulkResult,
  RunEvent,
  RunStats,
  RunWithAttempts,
  Schedule,
  ScheduleVersion,
  Sensor,
  SensorTick,
  SignalResult,
  Subscription,
  SubscriptionDelivery,
  SubscriptionTestResult,
  Tick,
  Version,
  WhoAmI,
  Worker,
} from './wire/index.js';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly field: string | null,
  ) {
    super(message);
  }
}

function csrfToken(): string | undefined {
  const pair = document.cookie.split(';').map((c) => c.trim()).find((c) => c.startsWith('XSRF-TOKEN='));
  return pair === undefined ? undefined : decodeURIComponent(pair.slice('XSRF-TOKEN='.length));
}

async function call<T>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (method !== 'GET') {
    headers['content-type'] = 'application/json';
    const token = csrfToken();
    if (token !== undefined) headers['x-csrf-token'] = token;
  }
  const response = await fetch(path, {
    method,
    headers,
    credentials: 'same-origin',
    // Without a body, an empty object; a null body (a signal's) is sent as null.
    body: method === 'GET' ? undefined : JSON.stringify(body === undefined ? {} : body),
  });
  if (response.status === 204) return undefined as T;
  const data = (await response.json().catch(() => null)) as Record<string, unknown> | null;
  if (!response.ok) {
    throw new ApiError(response.status, String(data?.code ?? 'HTTP_' + response.status), String(data?.message ?? response.statusText), (data?.field as string | null) ?? null);
  }
  return data as T;
}

function query(params: Record<string, string | number | undefined>): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) if (value !== undefined && value !== '') search.set(key, String(value));
  const text = search.toString();
  return text === '' ? '' : `?${text}`;
}

export interface ScheduleQuery {
  limit: number;
  cursor?: string;
  status?: string;
  name?: string;
  label?: string;
}

export const kairosApi = {
  whoami: () => call<WhoAmI>('GET', '/v1/whoami'),
  login: (apiKey: string) => call<{ csrfToken: string; expiresAt: string }>('POST', '/auth/login', { apiKey }),
  logout: () => call<void>('POST', '/auth/logout'),

  schedules: (q: ScheduleQuery) => call<Page<Schedule>>('GET', `/v1/schedules${query({ ...q })}`),
  schedule: (id: string) => call<Schedule>('GET', `/v1/schedules/${encodeURIComponent(id)}`),
  preview: (id: string, count: number) => call<Preview>('GET', `/v1/schedules/${encodeURIComponent(id)}/preview${query({ count })}`),
  ticks: (id: string, limit: number) => call<Page<Tick>>('GET', `/v1/schedules/${encodeURIComponent(id)}/ticks${query({ limit })}`),
  versions: (id: string, limit: number) => call<Page<ScheduleVersion>>('GET', `/v1/schedules/${encodeURIComponent(id)}/versions${query({ limit })}`),
  /** The outcome of each schedule's newest tick, by schedule id (schedules without ticks are absent). */
  lastTicks: async (scheduleIds: string[]): Promise<Record<string, string>> => {
    if (scheduleIds.length === 0) return {};
    const page = await call<{ items: (Tick & { scheduleId: string })[] }>('GET', `/v1/ticks/latest${query({ scheduleIds: scheduleIds.join(',') })}`);
    return Object.fromEntries(page.items.map((t) => [t.scheduleId, t.outcome]));
  },
  createSchedule: (definition: Record<string, unknown>) => call<Schedule>('POST', '/v1/schedules', definition),
  editSchedule: (id: string, changes: Record<string, unknown>) => call<Schedule>('PATCH', `/v1/schedules/${encodeURIComponent(id)}`, changes),
  deleteSchedule: (id: string) => call<void>('DELETE', `/v1/schedules/${encodeURIComponent(id)}`),
  pause: (id: string) => call<Schedule>('POST', `/v1/schedules/${encodeURIComponent(id)}/pause`),
  resume: (id: string) => call<Schedule>('POST', `/v1/schedules/${encodeURIComponent(id)}/resume`),
  trigger: (id: string) => call<Run>('POST', `/v1/schedules/${encodeURIComponent(id)}/trigger`),
  backfill: (id: string, from: string, to: string) =>
    call<{ slots: number; created: number; alreadyTicked: number }>('POST', `/v1/schedules/${encodeURIComponent(id)}/backfill`, { from, to }),

  runs: (q: { scheduleId?: string; state?: string; limit: number; cursor?: string }) => call<Page<Run>>('GET', `/v1/runs${query({ ...q })}`),
  run: (id: string) => call<RunWithAttempts>('GET', `/v1/runs/${encodeURIComponent(id)}`),
  runEvents: (id: string) => call<{ items: RunEvent[] }>('GET', `/v1/runs/${encodeURIComponent(id)}/events`).then((r) => r.items),
  cancelRun: (id: string) => call<Run>('POST', `/v1/runs/${encodeURIComponent(id)}/cancel`),
  retryRun: (id: string) => call<Run>('POST', `/v1/runs/${encodeURIComponent(id)}/retry`),
  /** Cancels or retries every run the filter matches; `dryRun` counts and samples them and changes nothing. */
  bulkRuns: (request: RunBulkRequest) => call<RunBulkResult>('POST', '/v1/runs/bulk', request),
  /** Sends signal `name` with `body` to the run: delivered when it waits for it, else kept until it asks. */
  signalRun: (id: string, name: string, body: JsonValue) =>
    call<SignalResult>('POST', `/v1/runs/${encodeURIComponent(id)}/signals/${encodeURIComponent(name)}`, body),
  /** Pins the run to another version of the code (null: any); a run waiting for its version is released when a live worker serves the new one. */
  moveRunVersion: (id: string, version: string | null) => call<Run>('POST', `/v1/runs/${encodeURIComponent(id)}/version`, { version }),

  deadLetters: (q: { limit: number; cursor?: string }) => call<Page<Run>>('GET', `/v1/dead-letters${query({ ...q })}`),
  republish: (id: string) => call<Run>('POST', `/v1/dead-letters/${encodeURIComponent(id)}/republish`),

  cluster: () => call<Cluster>('GET', '/v1/cluster'),
  /** The registered workers, or null where this API has no /v1/workers route yet. */
  workers: async (): Promise<Worker[] | null> => {
    try {
      return (await call<Page<Worker>>('GET', '/v1/workers')).items;
    } catch (error) {
      if (error instanceof ApiError && error.status === 404) return null;
      throw error;
    }
  },
  /** The namespace's queues with their limits and counts, or null where this API has no /v1/queues route yet. */
  queues: async (): Promise<Queue[] | null> => {
    try {
      return (await call<Page<Queue>>('GET', '/v1/queues')).items;
    } catch (error) {
      if (error instanceof ApiError && error.status === 404) return null;
      throw error;
    }
  },
  queue: (name: string) => call<Queue>('GET', `/v1/queues/${encodeURIComponent(name)}`),
  /** Per queue and version, the live workers, active runs and runs waiting for their version; null where this API has no /v1/versions route yet. */
  codeVersions: async (): Promise<Version[] | null> => {
    try {
      return (await call<{ items: Version[] }>('GET', '/v1/versions')).items;
    } catch (error) {
      if (error instanceof ApiError && error.status === 404) return null;
      throw error;
    }
  },
  /** The runs that ended in a window by bucket (default: the last 24 hours by the hour), or null where this API has no /v1/stats/runs route yet. */
  runStats: async (q: { scheduleId?: string; queue?: string; since?: string; until?: string; bucket?: '1m' | '1h' | '1d' } = {}): Promise<RunStats | null> => {
    try {
      return await call<RunStats>('GET', `/v1/stats/runs${query({ ...q })}`);
    } catch (error) {
      if (error instanceof ApiError && error.status === 404) return null;
      throw error;
    }
  },

  /** The namespace's events, newest first; `name` keeps those of one name. */
  events: (q: { limit: number; cursor?: string; name?: string }) => call<Page<KairosEvent>>('GET', `/v1/events${query({ ...q })}`),
  event: (id: string) => call<KairosEvent>('GET', `/v1/events/${encodeURIComponent(id)}`),

  calendars: (q: { limit: number; cursor?: string }) => call<Page<Calendar>>('GET', `/v1/calendars${query({ ...q })}`),
  calendar: (name: string) => call<Calendar>('GET', `/v1/calendars/${encodeURIComponent(name)}`),
  /** The dates the calendar excludes from `from` to `to` (YYYY-MM-DD, inclusive); without them, from today for twelve months. */
  calendarDates: (name: string, range: { from?: string; to?: string } = {}) =>
    call<CalendarDates>('GET', `/v1/calendars/${encodeURIComponent(name)}/dates${query({ ...range })}`),

  sensors: (q: { limit: number; cursor?: string }) => call<Page<Sensor>>('GET', `/v1/sensors${query({ ...q })}`),
  sensor: (id: string) => call<Sensor>('GET', `/v1/sensors/${encodeURIComponent(id)}`),
  /** The sensor's newest evaluations, newest first. */
  sensorTicks: (id: string, limit: number) => call<Page<SensorTick>>('GET', `/v1/sensors/${encodeURIComponent(id)}/ticks${query({ limit })}`),
  pauseSensor: (id: string) => call<Sensor>('POST', `/v1/sensors/${encodeURIComponent(id)}/pause`),
  resumeSensor: (id: string) => call<Sensor>('POST', `/v1/sensors/${encodeURIComponent(id)}/resume`),

  subscriptions: (q: { limit: number; cursor?: string }) => call<Page<Subscription>>('GET', `/v1/subscriptions${query({ ...q })}`),
  subscription: (id: string) => call<Subscription>('GET', `/v1/subscriptions/${encodeURIComponent(id)}`),
  /** The subscription's newest deliveries, newest first. */
  deliveries: (id: string, limit: number) => call<Page<SubscriptionDelivery>>('GET', `/v1/subscriptions/${encodeURIComponent(id)}/deliveries${query({ limit })}`),
  pauseSubscription: (id: string) => call<Subscription>('POST', `/v1/subscriptions/${encodeURIComponent(id)}/pause`),
  /** Resumes a paused subscription, or enables a disabled one again. */
  resumeSubscription: (id: string) => call<Subscription>('POST', `/v1/subscriptions/${encodeURIComponent(id)}/resume`),
  /** Writes a `ping` for the subscription, delivered like any event (409 unless it is active). */
  testSubscription: (id: string) => call<SubscriptionTestResult>('POST', `/v1/subscriptions/${encodeURIComponent(id)}/test`),
};

let live: Client | null = null;

function liveClient(): Client {
  const scheme = location.protocol === 'https:' ? 'wss' : 'ws';
  live ??= createClient({ url: `${scheme}://${location.host}/graphql`, lazy: true, retryAttempts: Infinity });
  return live;
}

const RUN_FIELDS = 'id scheduleId origin scheduledFor state attempt maxAttempts reasonCode reasonText createdAt startedAt finishedAt leaseEpoch';

/** Each run of the schedule as it is created or changes state; returns the unsubscribe. */
export function followScheduleRuns(scheduleId: string, onRun: (run: Run) => void): () => void {
  return liveClient().subscribe<{ scheduleRuns: Run }>(
    { query: `subscription($id: ID!) { scheduleRuns(scheduleId: $id) { ${RUN_FIELDS} } }`, variables: { id: scheduleId } },
    {
      next: (message) => {
        if (message.data) onRun(message.data.scheduleRuns);
      },
      error: () => undefined,
      complete: () => undefined,
    },
  );
}

/** The run's events as they are recorded; returns the unsubscribe. */
export function followRunEvents(runId: string, onEvent: (event: RunEvent) => void): () => void {
  return liveClient().subscribe<{ runEvents: RunEvent }>(
    { query: 'subscription($id: ID!) { runEvents(runId: $id) { id at kind fromState toState leaseEpoch actor reasonCode detail } }', variables: { id: runId } },
    {
      next: (message) => {
        if (message.data) onEvent(message.data.runEvents);
      },
      error: () => undefined,
      complete: () => undefined,
    },
  );
}
