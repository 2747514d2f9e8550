/**
 * A typed client for the Kairos REST API. Lists are async iterators that follow `nextCursor`
 * page by page; every refusal throws KairosApiError with the API's code, message and field.
 */
import type {
  ApiErrorBody,
  BatchAnswer,
  BatchRefusal,
  BackfillInput,
  BackfillResult,
  Calendar,
  CalendarDates,
  CalendarFields,
  CalendarInput,
  CronPreviewInput,
  DeadLetterFilter,
  Event,
  EventInput,
  EventListFilter,
  Executable,
  Page,
  Preview,
  Run,
  RunCreated,
  RunBulkInput,
  RunBulkResult,
  RunDetail,
  RunEvent,
  RunInput,
  RunListFilter,
  Schedule,
  ScheduleFields,
  ScheduleInput,
  ScheduleListFilter,
  SchedulePatch,
  SignalResult,
  Tick,
  TriggerInput,
  Worker,
  Version,
  Queue,
  QueueLimitsInput,
  Sensor,
  SensorInput,
  SensorPatch,
  SensorTick,
  Subscription,
  SubscriptionDelivery,
  SubscriptionInput,
  SubscriptionPatch,
  SubscriptionTestResult,
  JsonValue,
  ApplyInput,
  ApplyResult,
  ScheduleVersion,
  WorkerCredential,
  IssuedWorkerCredential,
} from './wire/index.js';

export interface KairosClientOptions {
  /** Where the API listens, e.g. http://localhost:3000. */
  baseUrl: string;
  /** An API key (`kairos keys create`); omit it against a server that runs with KAIROS_AUTH=optional. */
  apiKey?: string;
  /** Default fetch; pass another for tests or proxies. */
  fetch?: typeof fetch;
}

export class KairosApiError extends Error {
  constructor(
    /** The HTTP status (0 when the API could not be reached). */
    readonly status: number,
    readonly code: string,
    message: string,
    /** The offending field as a dotted path (`target.name`), or null. */
    readonly field: string | null,
  ) {
    super(message);
    this.name = 'KairosApiError';
  }
}

/** True for the answer of a batch item that was refused (its `error` is the API's code, message and field). */
export function isRefusal<T extends object>(answer: BatchAnswer<T>): answer is BatchRefusal {
  return !('id' in answer);
}

type Query = Record<string, string | number | undefined>;

export class KairosClient {
  private readonly baseUrl: string;
  private readonly fetch: typeof fetch;

  readonly schedules = {
    create: (input: ScheduleInput) => this.request<Schedule>('POST', '/v1/schedules', { body: input }),
    /**
     * Up to 1,000 schedules (one-shot timers, say) in one request. The answers come in the order of
     * `inputs`: the schedule, or `{ error }` for an item refused (nothing of it stored); see isRefusal.
     */
    createMany: async (inputs: ScheduleInput[]) =>
      (await this.request<{ items: BatchAnswer<Schedule>[] }>('POST', '/v1/schedules/batch', { body: { items: inputs } })).items,
    get: (id: string) => this.request<Schedule>('GET', `/v1/schedules/${enc(id)}`),
    /** Every schedule matching the filter, fetched a page at a time. */
    list: (filter: ScheduleListFilter = {}) => this.pages<Schedule>('/v1/schedules', { ...filter }),
    /** PATCH: the given fields replace the stored ones. */
    update: (id: string, patch: SchedulePatch) => this.request<Schedule>('PATCH', `/v1/schedules/${enc(id)}`, { body: patch }),
    /** Creates the schedule of that name, or replaces its definition. */
    put: (name: string, input: Omit<ScheduleFields, 'name'> & Executable) => this.request<Schedule>('PUT', `/v1/schedules/by-name/${enc(name)}`, { body: input }),
    pause: (id: string) => this.request<Schedule>('POST', `/v1/schedules/${enc(id)}/pause`),
    resume: (id: string) => this.request<Schedule>('POST', `/v1/schedules/${enc(id)}/resume`),
    trigger: (id: string, input: TriggerInput = {}) => this.request<Run>('POST', `/v1/schedules/${enc(id)}/trigger`, { body: input }),
    backfill: (id: string, input: BackfillInput) => this.request<BackfillResult>('POST', `/v1/schedules/${enc(id)}/backfill`, { body: input }),
    preview: (id: string, options: { count?: number; after?: string } = {}) =>
      this.request<Preview>('GET', `/v1/schedules/${enc(id)}/preview`, { query: options }),
    ticks: (id: string, options: { limit?: number } = {}) => this.pages<Tick>(`/v1/schedules/${enc(id)}/ticks`, options),
    /** Every version of the schedule's definition, newest first. */
    versions: (id: string, options: { limit?: number } = {}) => this.pages<ScheduleVersion>(`/v1/schedules/${enc(id)}/versions`, options),
    delete: (id: string) => this.request<void>('DELETE', `/v1/schedules/${enc(id)}`),
  };

  readonly runs = {
    create: (input: RunInput) => this.request<RunCreated>('POST', '/v1/runs', { body: input }),
    /** Up to 1,000 runs in one request; the answers come in the order of `inputs` (see schedules.createMany). */
    createMany: async (inputs: RunInput[]) => (await this.request<{ items: BatchAnswer<RunCreated>[] }>('POST', '/v1/runs/batch', { body: { items: inputs } })).items,
    get: (id: string) => this.request<RunDetail>('GET', `/v1/runs/${enc(id)}`),
    list: (filter: RunListFilter = {}) => this.pages<Run>('/v1/runs', { ...filter }),
    /** The run's whole transition history, oldest first. */
    events: async (id: string) => (await this.request<{ items: RunEvent[] }>('GET', `/v1/runs/${enc(id)}/events`)).items,
    /**
     * The run now, then again at each change (its state, progress, steps, checkpoints), ending after
     * the run has ended (GET /v1/runs/:id/stream). Stop early with `break` or `options.signal`.
     */
    stream: (id: string, options: { signal?: AbortSignal } = {}) => this.runStream(id, options.signal),
    cancel: (id: string) => this.request<Run>('POST', `/v1/runs/${enc(id)}/cancel`),
    /** A fresh run (origin retry) of a failed, dead or cancelled run's target and payload. */
    retry: (id: string) => this.request<Run>('POST', `/v1/runs/${enc(id)}/retry`),
    /** Cancels or retries every run `filter` matches, 500 per transaction (`dryRun`: counts and samples them, changes nothing). */
    bulk: (input: RunBulkInput) => this.request<RunBulkResult>('POST', '/v1/runs/bulk', { body: input }),
    /**
     * Sends signal `name` with `body` to the run's ctx.waitForSignal(name): `delivered` when the run
     * waited for it (it resumes now), else kept until the run asks. Each name is sent once per run
     * (again: 409 SIGNAL_ALREADY_DELIVERED); a run that ended answers 409 INVALID_STATE.
     */
    signal: (id: string, name: string, body?: unknown) => this.request<SignalResult>('POST', `/v1/runs/${enc(id)}/signals/${enc(name)}`, { body }),
    /**
     * Moves the run to another version of the code (null: any): only workers of that version (or
     * upgrade "auto" ones) claim it from now on; a run waiting for its version is released when a
     * live worker serves the new one. A run that ended answers 409 INVALID_STATE.
     */
    moveVersion: (id: string, version: string | null) => this.request<Run>('POST', `/v1/runs/${enc(id)}/version`, { body: { version } }),
  };

  readonly deadLetters = {
    list: (filter: DeadLetterFilter = {}) => this.pages<Run>('/v1/dead-letters', { ...filter }),
    republish: (id: string) => this.request<Run>('POST', `/v1/dead-letters/${enc(id)}/republish`),
  };

  readonly workers = {
    list: (options: { limit?: number } = {}) => this.pages<Worker>('/v1/workers', options),
  };

  /** The versions of the code in flight: per queue and version, its live workers, active runs and runs waiting for it. */
  readonly versions = {
    /** By queue, then version; a version with no active runs left may have its last worker stopped. */
    list: async () => (await this.request<{ items: Version[] }>('GET', '/v1/versions')).items,
  };

  /**
   * Sensors: a handler evaluated every `every` with the sensor's cursor, answering the runs to ask
   * for (by run key, each once) and the new cursor. Their runs have origin "sensor".
   */
  readonly sensors = {
    create: (input: SensorInput) => this.request<Sensor>('POST', '/v1/sensors', { body: input }),
    /** Every sensor, newest first, fetched a page at a time. */
    list: (options: { limit?: number } = {}) => this.pages<Sensor>('/v1/sensors', options),
    get: (id: string) => this.request<Sensor>('GET', `/v1/sensors/${enc(id)}`),
    /** PATCH: the given fields replace the stored ones; the cursor stays. */
    update: (id: string, patch: SensorPatch) => this.request<Sensor>('PATCH', `/v1/sensors/${enc(id)}`, { body: patch }),
    /** Deletes the sensor, its ticks and run keys; the runs it made stay. */
    delete: (id: string) => this.request<void>('DELETE', `/v1/sensors/${enc(id)}`),
    pause: (id: string) => this.request<Sensor>('POST', `/v1/sensors/${enc(id)}/pause`),
    /** Resumes a paused sensor; it is evaluated at once. */
    resume: (id: string) => this.request<Sensor>('POST', `/v1/sensors/${enc(id)}/resume`),
    /** Its evaluations, newest first. */
    ticks: (id: string, options: { limit?: number } = {}) => this.pages<SensorTick>(`/v1/sensors/${enc(id)}/ticks`, options),
    /** Sets the cursor (any JSON, null included) and raises its version: an evaluation under way commits nothing. */
    setCursor: (id: string, cursor: JsonValue) => this.request<Sensor>('POST', `/v1/sensors/${enc(id)}/cursor`, { body: { cursor } }),
    /** Restarts from `cursor` (default null); `forgetRunKeys` also forgets the run keys it asked for, so asking again makes new runs. */
    reset: (id: string, options: { cursor?: JsonValue; forgetRunKeys?: boolean } = {}) =>
      this.request<Sensor>('POST', `/v1/sensors/${enc(id)}/reset`, { body: options }),
  };

  /**
   * Subscriptions: webhooks told of the namespace's events of the listed types that match their
   * filter, signed like HTTP targets' deliveries and retried with backoff until they are taken.
   */
  readonly subscriptions = {
    create: (input: SubscriptionInput) => this.request<Subscription>('POST', '/v1/subscriptions', { body: input }),
    /** Every subscription, newest first, fetched a page at a time. */
    list: (options: { limit?: number } = {}) => this.pages<Subscription>('/v1/subscriptions', options),
    get: (id: string) => this.request<Subscription>('GET', `/v1/subscriptions/${enc(id)}`),
    /** PATCH: the given fields replace the stored ones (a new filter replaces the whole filter). */
    update: (id: string, patch: SubscriptionPatch) => this.request<Subscription>('PATCH', `/v1/subscriptions/${enc(id)}`, { body: patch }),
    /** Deletes the subscription and its deliveries. */
    delete: (id: string) => this.request<void>('DELETE', `/v1/subscriptions/${enc(id)}`),
    pause: (id: string) => this.request<Subscription>('POST', `/v1/subscriptions/${enc(id)}/pause`),
    /** Resumes a paused subscription, or a disabled one with its failures forgotten. */
    resume: (id: string) => this.request<Subscription>('POST', `/v1/subscriptions/${enc(id)}/resume`),
    /** Writes a `ping` event for this subscription alone, delivered like any other; 409 INVALID_STATE unless it is active. */
    test: (id: string) => this.request<SubscriptionTestResult>('POST', `/v1/subscriptions/${enc(id)}/test`),
    /** The events delivered to it, or being delivered, newest first, each with its attempts. */
    deliveries: (id: string, options: { limit?: number } = {}) => this.pages<SubscriptionDelivery>(`/v1/subscriptions/${enc(id)}/deliveries`, options),
  };

  /**
   * Calendars: named sets of local dates (explicit dates, public holidays of a country, or both)
   * that schedules exclude in `calendar.exclude`. Changing one re-plans the schedules naming it.
   */
  readonly calendars = {
    create: (input: CalendarInput) => this.request<Calendar>('POST', '/v1/calendars', { body: input }),
    /** Creates the calendar of that name, or replaces its dates, holidays and description. */
    put: (name: string, input: CalendarFields) => this.request<Calendar>('PUT', `/v1/calendars/${enc(name)}`, { body: input }),
    get: (name: string) => this.request<Calendar>('GET', `/v1/calendars/${enc(name)}`),
    /** Every calendar, by name, fetched a page at a time (from `cursor`, a nextCursor of GET /v1/calendars, when given). */
    list: (options: { limit?: number; cursor?: string } = {}) => this.pages<Calendar>('/v1/calendars', options),
    /** 409 CALENDAR_IN_USE while a schedule names it. */
    delete: (name: string) => this.request<void>('DELETE', `/v1/calendars/${enc(name)}`),
    /** The dates it excludes from `from` to `to` (YYYY-MM-DD, inclusive); by default the twelve months from today. */
    dates: (name: string, range: { from?: string; to?: string } = {}) => this.request<CalendarDates>('GET', `/v1/calendars/${enc(name)}/dates`, { query: range }),
  };

  /**
   * Events: what your application says happened. Each starts a run of every schedule whose `on`
   * matches it and resumes the durable functions waiting for it (ctx.waitForEvent), in the
   * transaction that stores it. Runs it starts have origin "event" and the event under `payload.event`.
   */
  readonly events = {
    /**
     * Sends an event; the answer lists the runs it started, the schedules it skipped and the waits it
     * resumed. With `id`, sending it again within the retention window answers the first event with
     * `deduped: true` and starts nothing, so a producer may retry safely.
     */
    send: (name: string, data?: JsonValue, options: { id?: string } = {}) =>
      this.request<Event>('POST', '/v1/events', { body: { name, ...(data === undefined ? {} : { data }), ...(options.id === undefined ? {} : { id: options.id }) } }),
    /** Up to 1,000 events, stored with all they start in one transaction; the answers come in the order of `items` (see schedules.createMany). */
    sendMany: async (items: EventInput[]) => (await this.request<{ items: BatchAnswer<Event>[] }>('POST', '/v1/events/batch', { body: { items } })).items,
    /** Every event (of `name`, when given), newest first, fetched a page at a time (from `cursor`, a nextCursor of GET /v1/events, when given). */
    list: (filter: EventListFilter = {}) => this.pages<Event>('/v1/events', { ...filter }),
    get: (id: string) => this.request<Event>('GET', `/v1/events/${enc(id)}`),
  };

  /** The namespace's queues and their limits: at most maxRunning runs at once, at most rate.max starts per rate.per. */
  readonly queues = {
    /** Every queue with limits, active runs or live workers, by name. */
    list: () => this.pages<Queue>('/v1/queues', {}),
    get: (name: string) => this.request<Queue>('GET', `/v1/queues/${enc(name)}`),
    /** Replaces the queue's limits (a field absent or null lifts its limit); held runs the new limits leave room for start at once. */
    set: (name: string, limits: QueueLimitsInput) => this.request<Queue>('PUT', `/v1/queues/${enc(name)}`, { body: limits }),
  };

  /** Logins for your own workers that may do nothing but serve their queues (admin scope). */
  readonly workerCredentials = {
    grant: (input: { queues: string[] }) => this.request<IssuedWorkerCredential>('POST', '/v1/worker-credentials', { body: input }),
    list: async () => (await this.request<{ items: WorkerCredential[] }>('GET', '/v1/worker-credentials')).items,
    revoke: (role: string) => this.request<void>('DELETE', `/v1/worker-credentials/${enc(role)}`),
  };

  /** Plans a source's declared schedules and, unless `dryRun`, applies the plan in one transaction. */
  apply(input: ApplyInput): Promise<ApplyResult> {
    return this.request<ApplyResult>('POST', '/v1/apply', { body: input });
  }

  readonly cron = {
    preview: (input: CronPreviewInput) => this.request<Preview>('POST', '/v1/cron/preview', { body: input }),
  };

  constructor(private readonly options: KairosClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.fetch = options.fetch ?? globalThis.fetch;
  }

  /** Follows `nextCursor` from `query.cursor` (absent: the first page) until the last page, yielding each item. */
  private async *pages<T>(path: string, query: Query): AsyncGenerator<T, void, undefined> {
    let cursor = query.cursor === undefined ? undefined : String(query.cursor);
    do {
      const page: Page<T> = await this.request<Page<T>>('GET', path, { query: { ...query, cursor } });
      yield* page.items;
      cursor = page.nextCursor ?? undefined;
    } while (cursor !== undefined);
  }

  private async request<T>(method: string, path: string, options: { body?: unknown; query?: Query } = {}): Promise<T> {
    const url = new URL(`${this.baseUrl}${path}`);
    for (const [key, value] of Object.entries(options.query ?? {})) {
      if (value !== undefined) url.searchParams.set(key, String(value));
    }
    const headers: Record<string, string> = { accept: 'application/json' };
    if (this.options.apiKey) headers.authorization = `Bearer ${this.options.apiKey}`;
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    let response: Response;
    try {
      response = await this.fetch(url, { method, headers, body: options.body === undefined ? undefined : JSON.stringify(options.body) });
    } catch (error) {
      throw new KairosApiError(0, 'UNREACHABLE', `cannot reach the Kairos API at ${this.baseUrl}: ${(error as Error).message}`, null);
    }
    const text = await response.text();
    const parsed: unknown = text ? safeJson(text) : undefined;
    if (!response.ok) {
      const body = (parsed ?? {}) as Partial<ApiErrorBody>;
      throw new KairosApiError(response.status, body.code ?? `HTTP_${response.status}`, body.message ?? (text || response.statusText), body.field ?? null);
    }
    return parsed as T;
  }

  /** The `event: run` views of a run's server-sent events, parsed as they arrive. */
  private async *runStream(id: string, signal?: AbortSignal): AsyncGenerator<Run, void, undefined> {
    const headers: Record<string, string> = { accept: 'text/event-stream' };
    if (this.options.apiKey) headers.authorization = `Bearer ${this.options.apiKey}`;
    let response: Response;
    try {
      response = await this.fetch(new URL(`${this.baseUrl}/v1/runs/${enc(id)}/stream`), { headers, signal });
    } catch (error) {
      throw new KairosApiError(0, 'UNREACHABLE', `cannot reach the Kairos API at ${this.baseUrl}: ${(error as Error).message}`, null);
    }
    if (!response.ok || !response.body) {
      const text = await response.text();
      const body = ((text ? safeJson(text) : undefined) ?? {}) as Partial<ApiErrorBody>;
      throw new KairosApiError(response.status, body.code ?? `HTTP_${response.status}`, body.message ?? (text || response.statusText), body.field ?? null);
    }
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = '';
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        buffer += value.replace(/\r\n?/g, '\n');
        for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          let event = 'message';
          const data: string[] = [];
          for (const line of block.split('\n')) {
            if (line.startsWith('event:')) event = line.slice(6).trim();
            else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
          }
          if (event === 'run' && data.length > 0) yield JSON.parse(data.join('\n')) as Run;
        }
      }
    } finally {
      await reader.cancel().catch(() => undefined);
    }
  }
}

const enc = encodeURIComponent;

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return { message: text };
  }
}
