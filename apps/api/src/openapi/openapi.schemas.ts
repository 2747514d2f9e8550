/**
 * components.schemas of the OpenAPI document: the REST wire shapes as the views in schedules/ and
 * runs/ write them and as the domain readers accept them. Every closed set and limit is read
 * from the domain, so a new run state or error code reaches the document without an edit here;
 * test/api/openapi.spec.ts validates real responses against these schemas.
 */
import {
  ATTEMPT_OUTCOMES,
  BACKOFF_TYPES,
  CATCHUP_MODES,
  DEFAULT_CATCHUP,
  DEFAULT_DST_POLICY,
  DEFAULT_HTTP_TIMEOUT_MS,
  DEFAULT_RETRY_POLICY,
  DEFAULT_RUN_TIMEOUT_MS,
  DST_GAP_POLICIES,
  DST_OVERLAP_POLICIES,
  ERROR_CODES,
  DEFAULT_QUEUE,
  HANDLER_NAME_PATTERN,
  HANDLER_NAMES,
  HTTP_METHODS,
  MAX_ATTEMPTS_LIMIT,
  MAX_CATCHUP_LIMIT,
  MAX_PAYLOAD_BYTES,
  MAX_PREVIEW_COUNT,
  MIN_EVERY_MS,
  QUEUE_NAME_PATTERN,
  OVERLAP_POLICIES,
  REASON_CODES,
  RUN_EVENT_KINDS,
  RUN_ORIGINS,
  RUN_STATES,
  SCHEDULE_STATUSES,
  TICK_ORIGINS,
  TICK_OUTCOMES,
  formatDuration,
} from '@kairos/domain';
import type { SchemaObject } from './openapi.types.js';

export const SCHEMA_NAMES = [
  'ErrorCode',
  'Error',
  'ReasonCode',
  'RunState',
  'RunOrigin',
  'RunEventKind',
  'ScheduleStatus',
  'TickOutcome',
  'TickOrigin',
  'OverlapPolicy',
  'CatchupMode',
  'BackoffType',
  'HttpMethod',
  'HandlerName',
  'DstGapPolicy',
  'DstOverlapPolicy',
  'AttemptOutcome',
  'Duration',
  'DurationInput',
  'Instant',
  'InstantInput',
  'JsonValue',
  'Labels',
  'HandlerTarget',
  'HttpTarget',
  'HttpTargetInput',
  'Target',
  'TargetInput',
  'RetryPolicy',
  'RetryPolicyInput',
  'DstPolicy',
  'DstPolicyInput',
  'CatchupPolicy',
  'CatchupPolicyInput',
  'ScheduleCreate',
  'ScheduleCreateCron',
  'ScheduleCreateEvery',
  'ScheduleCreateAt',
  'ScheduleCreateIn',
  'SchedulePatch',
  'Schedule',
  'SchedulePage',
  'ScheduleTrigger',
  'BackfillRequest',
  'BackfillResult',
  'Preview',
  'CronPreviewRequest',
  'CronPreviewOfCron',
  'CronPreviewOfEvery',
  'Tick',
  'TickPage',
  'RunCreate',
  'Run',
  'RunCreated',
  'RunDetail',
  'Attempt',
  'RunPage',
  'RunEvent',
  'RunEventList',
  'SigningSecret',
  'RotatedSigningSecret',
  'Worker',
  'WorkerPage',
] as const;

export type SchemaName = (typeof SCHEMA_NAMES)[number];

export function ref(name: SchemaName): SchemaObject {
  return { $ref: `#/components/schemas/${name}` };
}

/** The schema, or JSON null. */
export function nullable(schema: SchemaObject): SchemaObject {
  if (schema.$ref !== undefined) return { anyOf: [schema, { type: 'null' }] };
  if (schema.type === undefined) return schema;
  const types = Array.isArray(schema.type) ? schema.type : [schema.type];
  return {
    ...schema,
    type: [...types, 'null'],
    ...(schema.enum ? { enum: [...schema.enum, null] } : {}),
  };
}

function enumOf(values: readonly string[], description: string): SchemaObject {
  return { type: 'string', enum: [...values], description };
}

/** A closed object: every property listed, `required` naming those always present. */
function object(properties: Record<string, SchemaObject>, required: readonly string[] = Object.keys(properties), description?: string): SchemaObject {
  return { type: 'object', ...(description ? { description } : {}), properties, required: [...required], additionalProperties: false };
}

function page(item: SchemaName, description: string): SchemaObject {
  return object(
    {
      items: { type: 'array', items: ref(item) },
      nextCursor: { ...nullable({ type: 'string' }), description: 'Pass as `cursor` to read the next page; null on the last page.' },
    },
    undefined,
    description,
  );
}

const uuid: SchemaObject = { type: 'string', format: 'uuid' };
const count: SchemaObject = { type: 'integer', minimum: 0 };
const text = (maxLength: number, description?: string): SchemaObject => ({ type: 'string', minLength: 1, maxLength, ...(description ? { description } : {}) });

/**
 * A request field the server fills in when it is absent. The default is stated in the description
 * rather than as the `default` keyword: generators (openapi-typescript among them) type a property
 * that has a `default` as always present, which would make the field required in request types.
 */
function defaulted(schema: SchemaObject, value: string | number | boolean): SchemaObject {
  const said = `Default: ${JSON.stringify(value)}.`;
  return { ...schema, description: schema.description ? `${schema.description} ${said}` : said };
}

// ---- What a schedule or run declares (request bodies) ----

const dstInput: SchemaObject = object(
  {
    gap: defaulted(ref('DstGapPolicy'), DEFAULT_DST_POLICY.gap),
    overlap: defaulted(ref('DstOverlapPolicy'), DEFAULT_DST_POLICY.overlap),
  },
  [],
  'How cron wall times that do not exist (gap) or occur twice (overlap) on DST change days fire. Default auto: Vixie cron\'s rule, decided by the expression.',
);

const catchupInput: SchemaObject = object(
  {
    mode: defaulted(ref('CatchupMode'), DEFAULT_CATCHUP.mode),
    window: { ...nullable(ref('DurationInput')), description: 'Missed slots older than this are recorded as missed, not fired. Absent or null: no window.' },
    limit: { ...nullable({ type: 'integer', minimum: 1, maximum: MAX_CATCHUP_LIMIT }), description: 'At most this many missed slots fire (the newest). Absent or null: no limit.' },
  },
  [],
  'What to fire for slots that passed while the scheduler was down or the schedule was paused.',
);

const retryInput: SchemaObject = object(
  {
    maxAttempts: defaulted({ type: 'integer', minimum: 1, maximum: MAX_ATTEMPTS_LIMIT }, DEFAULT_RETRY_POLICY.maxAttempts),
    backoff: object(
      {
        type: defaulted(ref('BackoffType'), DEFAULT_RETRY_POLICY.backoff.type),
        base: defaulted({ ...ref('DurationInput'), description: 'At most 24h.' }, formatDuration(DEFAULT_RETRY_POLICY.backoff.baseMs)),
        max: defaulted({ ...ref('DurationInput'), description: 'At least `base`, at most 7d.' }, formatDuration(DEFAULT_RETRY_POLICY.backoff.maxMs)),
        jitter: defaulted({ type: 'number', minimum: 0, maximum: 1, description: 'Fraction of each delay randomised away.' }, DEFAULT_RETRY_POLICY.backoff.jitter),
      },
      [],
    ),
  },
  [],
  'How failed attempts are retried. Absent or null: the defaults.',
);

const payloadInput: SchemaObject = {
  ...ref('JsonValue'),
  description: `Any JSON value, passed to the target verbatim; at most ${MAX_PAYLOAD_BYTES} bytes serialized (PAYLOAD_TOO_LARGE otherwise).`,
};

/** The definition fields a schedule body may carry; POST, PUT by name and PATCH share them. */
const definitionInput: Record<string, SchemaObject> = {
  name: {
    type: 'string',
    minLength: 1,
    maxLength: 200,
    pattern: '^[A-Za-z0-9][A-Za-z0-9._:-]*$',
    description: 'Unique per namespace. Defaults to the schedule id.',
  },
  cron: {
    ...text(256),
    description: '5 fields (minute precision) or 6 (leading seconds), @yearly @monthly @weekly @daily @hourly, ranges, steps, lists, names, L and #.',
    examples: ['30 2 * * *'],
  },
  every: { ...ref('DurationInput'), description: `A fixed interval, at least ${MIN_EVERY_MS} ms, anchored at startAt (default: creation).` },
  at: { ...ref('InstantInput'), description: 'A one-shot timer at this instant.' },
  in: { ...ref('DurationInput'), description: 'A one-shot timer this long after the request; stored (and returned) as `at`.' },
  timezone: defaulted(text(64, 'An IANA zone name; cron fields match the wall clock of this zone.'), 'UTC'),
  dst: ref('DstPolicyInput'),
  catchup: ref('CatchupPolicyInput'),
  overlap: defaulted(ref('OverlapPolicy'), 'skip'),
  target: ref('TargetInput'),
  payload: payloadInput,
  retry: nullable(ref('RetryPolicyInput')),
  timeout: defaulted({ ...ref('DurationInput'), description: 'Of each attempt; at most 24h.' }, formatDuration(DEFAULT_RUN_TIMEOUT_MS)),
  startAt: { ...nullable(ref('InstantInput')), description: 'No slot before this instant.' },
  endAt: { ...nullable(ref('InstantInput')), description: 'No slot after this instant; must be later than startAt.' },
  maxRuns: { ...nullable({ type: 'integer', minimum: 1 }), description: 'The schedule completes after this many fires.' },
  jitter: defaulted({ ...ref('DurationInput'), description: 'At most 24h; deterministic per slot (a hash of schedule id and slot).' }, '0s'),
  labels: ref('Labels'),
};

/**
 * The body that says when with `timing`: a full object declaring every field, `timing` required
 * and the other ways of saying when allowed only as null. Exactly one such variant matches a
 * body, and generators turn the oneOf of them into a plain union of object types (a oneOf of
 * bare `required` lists reads to them as objects without properties).
 */
function timedBody(
  fields: Record<string, SchemaObject>,
  timing: string,
  timings: readonly string[],
  required: readonly string[],
  description: string,
): SchemaObject {
  const properties: Record<string, SchemaObject> = {};
  for (const [key, schema] of Object.entries(fields)) {
    if (key === timing || !timings.includes(key)) properties[key] = schema;
    else properties[key] = { type: 'null', description: `Only one of ${timings.join(', ')}.` };
  }
  return object(properties, [timing, ...required], description);
}

const SCHEDULE_TIMINGS = ['cron', 'every', 'at', 'in'] as const;
const PREVIEW_TIMINGS = ['cron', 'every'] as const;

const scheduleCreateFields: Record<string, SchemaObject> = {
  ...definitionInput,
  paused: defaulted({ type: 'boolean', description: 'Create the schedule paused.' }, false),
  idempotencyKey: {
    ...nullable(text(200)),
    description: 'A repeated key in the namespace returns the existing schedule with `deduped: true` (status 200) instead of creating another.',
  },
};

const scheduleCreate = (timing: (typeof SCHEDULE_TIMINGS)[number]): SchemaObject =>
  timedBody(scheduleCreateFields, timing, SCHEDULE_TIMINGS, ['target'], `A schedule definition that fires by \`${timing}\`.`);

const cronPreviewFields: Record<string, SchemaObject> = {
  cron: definitionInput.cron!,
  every: definitionInput.every!,
  timezone: definitionInput.timezone!,
  dst: definitionInput.dst!,
  startAt: definitionInput.startAt!,
  after: { ...nullable(ref('InstantInput')), description: 'List fire instants after this one. Default: now.' },
  count: defaulted(nullable({ type: 'integer', minimum: 1, maximum: MAX_PREVIEW_COUNT }), 10),
};

const cronPreview = (timing: (typeof PREVIEW_TIMINGS)[number]): SchemaObject =>
  timedBody(cronPreviewFields, timing, PREVIEW_TIMINGS, [], `A preview of a \`${timing}\` spec.`);

// ---- The schemas ----

export const SCHEMAS: Record<SchemaName, SchemaObject> = {
  ErrorCode: enumOf([...ERROR_CODES, 'INTERNAL'], 'A stable, machine-readable error code. INTERNAL is an unexpected failure (500).'),
  Error: object(
    {
      code: ref('ErrorCode'),
      message: { type: 'string', description: 'What was wrong and what to do about it.' },
      field: { ...nullable({ type: 'string' }), description: 'The offending field as a dotted path (`target.name`), or null.' },
    },
    undefined,
    'Every error the REST API answers with.',
  ),
  ReasonCode: enumOf(Object.keys(REASON_CODES), 'The one closed catalogue of reasons carried by terminal runs, ticks and run events.'),
  RunState: enumOf(RUN_STATES, 'queued and running are active; the rest are terminal.'),
  RunOrigin: enumOf(RUN_ORIGINS, 'What created the run.'),
  RunEventKind: enumOf(RUN_EVENT_KINDS, 'What a run event records.'),
  ScheduleStatus: enumOf(SCHEDULE_STATUSES, 'deleted schedules are never returned.'),
  TickOutcome: enumOf(TICK_OUTCOMES, 'What became of an evaluated slot.'),
  TickOrigin: enumOf(TICK_ORIGINS, 'Who evaluated the slot: the scheduler or a backfill request.'),
  OverlapPolicy: enumOf(OVERLAP_POLICIES, 'What to do when a slot comes due while an earlier run of the schedule is still active.'),
  CatchupMode: enumOf(CATCHUP_MODES, 'none skips missed slots, latest fires the most recent once, all fires every one.'),
  BackoffType: enumOf(BACKOFF_TYPES, 'How the delay between attempts grows.'),
  HttpMethod: enumOf(HTTP_METHODS, 'The method of an HTTP target.'),
  HandlerName: {
    type: 'string',
    pattern: HANDLER_NAME_PATTERN.source,
    description: `A handler's name: built in (${HANDLER_NAMES.join(', ')}, on the default queue) or registered by a worker on the target's queue; any other name is refused with UNKNOWN_HANDLER.`,
  },
  DstGapPolicy: enumOf(
    DST_GAP_POLICIES,
    'shift fires a nonexistent wall time at the instant it names with the pre-transition offset; skip drops it; auto (the default) is skip when the minute or hour field starts with *, else shift.',
  ),
  DstOverlapPolicy: enumOf(
    DST_OVERLAP_POLICIES,
    'Which occurrence of a repeated wall time fires; auto (the default) is both when the minute or hour field starts with *, else first.',
  ),
  AttemptOutcome: enumOf(ATTEMPT_OUTCOMES, 'How one execution attempt ended.'),

  Duration: {
    type: 'string',
    pattern: '^(\\d+d)?(\\d+h)?(\\d+m)?(\\d+s)?(\\d+ms)?$',
    minLength: 2,
    description: 'A duration as Kairos writes it: units d, h, m, s, ms from largest to smallest ("90s" is written "1m30s").',
    examples: ['1m30s', '5m', '1h'],
  },
  DurationInput: {
    description: 'A duration: whole numbers with units d, h, m, s, ms from largest to smallest ("90s", "15m", "1h30m", "500ms"), or integer milliseconds. At most 100 years.',
    oneOf: [
      { type: 'string', pattern: '^\\s*(\\d+d)?(\\d+h)?(\\d+m)?(\\d+s)?(\\d+ms)?\\s*$', minLength: 2 },
      { type: 'integer', minimum: 0 },
    ],
    examples: ['90s', '15m', '1h30m', 60000],
  },
  Instant: { type: 'string', format: 'date-time', description: 'An instant in UTC, ISO 8601 with Z; milliseconds only when there are some.', examples: ['2026-12-01T01:30:00Z'] },
  InstantInput: {
    type: 'string',
    format: 'date-time',
    description: 'An ISO 8601 instant with an offset ("Z" or "+02:00"); a local time without one is refused as ambiguous.',
    examples: ['2026-12-01T09:00:00Z'],
  },
  JsonValue: { description: 'Any JSON value, null included.', examples: [{ any: 'json' }] },
  Labels: {
    type: 'object',
    additionalProperties: { type: 'string', maxLength: 256 },
    maxProperties: 64,
    description: 'Free-form string labels; filter schedules with `?label=key:value`.',
    examples: [{ team: 'billing' }],
  },

  HandlerTarget: object(
    {
      type: { const: 'handler' },
      name: ref('HandlerName'),
      queue: defaulted({ type: 'string', pattern: QUEUE_NAME_PATTERN.source, description: 'The queue whose workers run the handler.' }, DEFAULT_QUEUE),
    },
    ['type', 'name'],
    'A handler registered by a worker on a queue.',
  ),
  HttpTarget: object(
    {
      type: { const: 'http' },
      url: { type: 'string', format: 'uri' },
      method: ref('HttpMethod'),
      headers: { type: 'object', additionalProperties: { type: 'string' } },
      timeout: ref('Duration'),
    },
    undefined,
    'An HTTP webhook, with its defaults filled in.',
  ),
  HttpTargetInput: object(
    {
      type: { const: 'http' },
      url: { type: 'string', format: 'uri', maxLength: 2048, description: 'http or https, without credentials (send those in headers).' },
      method: defaulted(ref('HttpMethod'), 'POST'),
      headers: {
        type: 'object',
        propertyNames: { pattern: "^[!#$%&'*+\\-.^_`|~0-9A-Za-z]+$" },
        additionalProperties: { type: 'string', maxLength: 4096, pattern: '^[^\\r\\n\\u0000]*$' },
        maxProperties: 50,
        description:
          'Sent with every request. Names are RFC 9110 tokens; values hold no CR, LF or NUL. Host, Content-Length, Transfer-Encoding, Connection, Upgrade, TE, Trailer, Keep-Alive, Proxy-* and the Kairos-Signature and Idempotency-Key that Kairos sets are refused (INVALID_TARGET).',
      },
      timeout: defaulted(ref('DurationInput'), formatDuration(DEFAULT_HTTP_TIMEOUT_MS)),
    },
    ['type', 'url'],
    'An HTTP webhook. The body carries run id, schedule id, slot, attempt and payload; the request is signed (HMAC-SHA256).',
  ),
  Target: { oneOf: [ref('HandlerTarget'), ref('HttpTarget')], description: 'What a run executes.' },
  TargetInput: {
    oneOf: [ref('HandlerTarget'), ref('HttpTargetInput')],
    description: 'What a run executes: { "type": "handler", "name": "echo" } or { "type": "http", "url": "https://..." }.',
  },
  RetryPolicy: object(
    {
      maxAttempts: { type: 'integer', minimum: 1 },
      backoff: object({ type: ref('BackoffType'), base: ref('Duration'), max: ref('Duration'), jitter: { type: 'number', minimum: 0, maximum: 1 } }),
    },
    undefined,
    'How failed attempts are retried, with defaults filled in.',
  ),
  RetryPolicyInput: retryInput,
  DstPolicy: object(
    {
      gap: ref('DstGapPolicy'),
      overlap: ref('DstOverlapPolicy'),
      resolved: {
        ...nullable(
          object({
            gap: { type: 'string', enum: DST_GAP_POLICIES.filter((p) => p !== 'auto') },
            overlap: { type: 'string', enum: DST_OVERLAP_POLICIES.filter((p) => p !== 'auto') },
          }),
        ),
        description: 'The policy fire instants are computed with, auto decided for the cron expression; null for every and at, which DST does not touch.',
      },
      description: { type: 'string', description: 'What the policy means for the expression, e.g. "gap auto (skip), overlap auto (both): ...".' },
    },
    undefined,
    'The DST policy as declared (auto stays auto) and what it resolves to.',
  ),
  DstPolicyInput: dstInput,
  CatchupPolicy: object({ mode: ref('CatchupMode'), window: nullable(ref('Duration')), limit: nullable({ type: 'integer', minimum: 1 }) }),
  CatchupPolicyInput: catchupInput,

  ScheduleCreate: {
    description:
      'A schedule definition (POST /v1/schedules, PUT /v1/schedules/by-name/{name}). Exactly one of cron, every, at or in; unknown fields are refused (UNKNOWN_FIELD). Null counts as absent for every optional field.',
    oneOf: [ref('ScheduleCreateCron'), ref('ScheduleCreateEvery'), ref('ScheduleCreateAt'), ref('ScheduleCreateIn')],
  },
  ScheduleCreateCron: scheduleCreate('cron'),
  ScheduleCreateEvery: scheduleCreate('every'),
  ScheduleCreateAt: scheduleCreate('at'),
  ScheduleCreateIn: scheduleCreate('in'),
  SchedulePatch: {
    type: 'object',
    description:
      'Fields replacing the stored ones; the rest stay. A new cron, every, at or in replaces the old timing, but only the timing field the schedule already has (or in) is accepted: a cron schedule refuses `every` and `at` with UNKNOWN_FIELD. `paused` pauses or resumes. idempotencyKey cannot be changed.',
    properties: { ...definitionInput, paused: { type: 'boolean' } },
    additionalProperties: false,
  },
  Schedule: object(
    {
      id: uuid,
      name: { type: 'string' },
      cron: nullable({ type: 'string' }),
      every: nullable(ref('Duration')),
      at: nullable(ref('Instant')),
      timezone: { type: 'string' },
      dst: ref('DstPolicy'),
      catchup: ref('CatchupPolicy'),
      overlap: ref('OverlapPolicy'),
      target: ref('Target'),
      payload: ref('JsonValue'),
      retry: ref('RetryPolicy'),
      timeout: ref('Duration'),
      startAt: nullable(ref('Instant')),
      endAt: nullable(ref('Instant')),
      maxRuns: nullable({ type: 'integer', minimum: 1 }),
      jitter: ref('Duration'),
      paused: { type: 'boolean', description: 'Whether status is paused.' },
      idempotencyKey: nullable({ type: 'string' }),
      labels: ref('Labels'),
      status: ref('ScheduleStatus'),
      nextFireAt: { ...nullable(ref('Instant')), description: 'The next slot; null once the schedule has nothing left to fire.' },
      lastFireAt: nullable(ref('Instant')),
      fireCount: count,
      createdAt: ref('Instant'),
      updatedAt: ref('Instant'),
      deduped: { type: 'boolean', description: 'True when a create with a repeated idempotencyKey returned this existing schedule.' },
    },
    undefined,
    'A schedule: its definition with defaults filled in (one of cron, every or at is set), and its cursor.',
  ),
  SchedulePage: page('Schedule', 'A page of schedules, newest first.'),
  ScheduleTrigger: object(
    {
      overlap: { ...ref('OverlapPolicy'), description: "Overrides the schedule's overlap policy for this run." },
      payload: { ...payloadInput, description: "Replaces the schedule's payload for this run." },
    },
    [],
    'Optional: run the schedule now, outside its slots.',
  ),
  BackfillRequest: object(
    {
      from: { ...ref('InstantInput'), description: 'The first instant of the range.' },
      to: { ...ref('InstantInput'), description: 'The last instant of the range; not in the future, not before from.' },
      overlap: defaulted({ ...ref('OverlapPolicy'), description: 'Backfilled runs queue behind each other unless this says otherwise.' }, 'buffer_all'),
    },
    ['from', 'to'],
  ),
  BackfillResult: object(
    {
      slots: { ...count, description: 'Slots of the schedule inside the range.' },
      created: { ...count, description: 'Runs created now.' },
      alreadyTicked: { ...count, description: 'Slots that already had a tick (fired, skipped or backfilled before) and were left alone.' },
      runs: { type: 'array', items: ref('Run') },
    },
    undefined,
    'What a backfill created. Repeating a backfill over the same range creates nothing new.',
  ),
  Preview: object(
    { fireTimes: { type: 'array', items: ref('Instant') }, dst: ref('DstPolicy') },
    undefined,
    'The next fire instants, in UTC, and the DST policy they were computed with.',
  ),
  CronPreviewRequest: {
    description: 'An ad-hoc spec to preview, validated as a schedule would be. Exactly one of cron or every.',
    oneOf: [ref('CronPreviewOfCron'), ref('CronPreviewOfEvery')],
  },
  CronPreviewOfCron: cronPreview('cron'),
  CronPreviewOfEvery: cronPreview('every'),
  Tick: object(
    {
      scheduledFor: { ...ref('Instant'), description: 'The slot.' },
      outcome: ref('TickOutcome'),
      reasonCode: ref('ReasonCode'),
      reasonText: nullable({ type: 'string' }),
      runId: { ...nullable(uuid), description: 'The run the slot created, if any.' },
      origin: ref('TickOrigin'),
      createdAt: ref('Instant'),
    },
    undefined,
    'One evaluated slot of a schedule and what came of it.',
  ),
  TickPage: page('Tick', 'A page of ticks, newest slot first.'),

  RunCreate: object(
    {
      target: ref('TargetInput'),
      payload: payloadInput,
      retry: nullable(ref('RetryPolicyInput')),
      timeout: definitionInput.timeout!,
      availableAt: { ...nullable(ref('InstantInput')), description: 'When the run becomes due; an instant in the past means now. Default: now.' },
      idempotencyKey: {
        ...nullable(text(200)),
        description: 'A repeated key in the namespace returns the first run with `deduped: true` (status 200).',
      },
    },
    ['target'],
    'An ad-hoc run of a target, now or at availableAt.',
  ),
  Run: object(runProperties(), undefined, 'One execution of a target, with its retries.'),
  RunCreated: object(
    { ...runProperties(), deduped: { type: 'boolean', description: 'True when a repeated idempotencyKey returned this existing run.' } },
    undefined,
    'The run POST /v1/runs created (or found by idempotency key).',
  ),
  RunDetail: object(
    { ...runProperties(), attempts: { type: 'array', items: ref('Attempt'), description: 'Each execution attempt, read from the run events.' } },
    Object.keys(runProperties()),
    'A run as GET /v1/runs/{id} returns it.',
  ),
  Attempt: {
    type: 'object',
    description: 'One execution attempt: a claim at a new lease epoch and the event that ended it.',
    properties: {
      attempt: { type: 'integer', minimum: 1 },
      leaseEpoch: { type: 'integer' },
      worker: { type: 'string' },
      startedAt: ref('Instant'),
      finishedAt: nullable(ref('Instant')),
      outcome: { ...nullable(ref('AttemptOutcome')), description: 'Null while the attempt is executing.' },
      reasonCode: nullable(ref('ReasonCode')),
      error: nullable({ type: 'object' }),
      response: { ...nullable({ type: 'object' }), description: 'What an HTTP target answered.' },
    },
    required: ['attempt', 'leaseEpoch', 'worker', 'startedAt', 'finishedAt', 'outcome'],
  },
  RunPage: page('Run', 'A page of runs, newest first.'),
  Worker: object(
    {
      id: { type: 'string', description: 'The worker process, as it signs its leases.' },
      queue: { type: 'string', pattern: QUEUE_NAME_PATTERN.source },
      handlers: { type: 'array', items: ref('HandlerName'), description: 'The handlers it registered, sorted.' },
      version: { type: 'string' },
      startedAt: ref('Instant'),
      lastSeenAt: { ...ref('Instant'), description: 'Its last heartbeat.' },
    },
    undefined,
    'A worker that registered with the cluster; kept after it stops.',
  ),
  WorkerPage: page('Worker', 'A page of workers, by id.'),
  RunEvent: object(
    {
      id: { type: 'integer', description: 'Increases with every event written.' },
      at: ref('Instant'),
      kind: ref('RunEventKind'),
      fromState: nullable(ref('RunState')),
      toState: nullable(ref('RunState')),
      leaseEpoch: nullable({ type: 'integer' }),
      actor: { type: 'string', description: 'Who caused the transition: api, scheduler, a worker id, ...' },
      reasonCode: nullable(ref('ReasonCode')),
      detail: { type: 'object', description: 'Event-specific detail (errors, HTTP responses, attempt numbers).' },
    },
    undefined,
    'One transition of a run, appended in the same transaction as the transition.',
  ),
  RunEventList: object({ items: { type: 'array', items: ref('RunEvent') } }, undefined, "A run's whole event history, oldest first (not paginated)."),
  SigningSecret: object(
    { secret: { type: 'string', minLength: 32, description: 'The HMAC-SHA256 key of the v1 signatures in Kairos-Signature.' } },
    ['secret'],
    "The namespace's webhook signing secret.",
  ),
  RotatedSigningSecret: object(
    {
      secret: { type: 'string', minLength: 32, description: 'The new secret; deliveries are signed with it from now on.' },
      previousValidUntil: { ...ref('Instant'), description: 'Until then deliveries carry a second v1 signature, made with the previous secret.' },
    },
    ['secret', 'previousValidUntil'],
    'A rotated signing secret.',
  ),
};

function runProperties(): Record<string, SchemaObject> {
  return {
    id: uuid,
    scheduleId: { ...nullable(uuid), description: 'Null for an ad-hoc run.' },
    origin: ref('RunOrigin'),
    sourceRunId: { ...nullable(uuid), description: 'The run a retry or republish re-runs.' },
    scheduledFor: { ...ref('Instant'), description: 'The slot (for an ad-hoc run: when it was due).' },
    availableAt: { ...nullable(ref('Instant')), description: 'When the run may start; null while it waits behind an earlier run of its schedule.' },
    deferReason: { ...nullable({ type: 'string' }), description: 'Why availableAt is later than the slot.' },
    state: ref('RunState'),
    attempt: { ...count, description: 'Attempts started so far.' },
    maxAttempts: { type: 'integer', minimum: 1 },
    target: ref('Target'),
    retry: ref('RetryPolicy'),
    payload: ref('JsonValue'),
    result: { ...ref('JsonValue'), description: 'What the target returned, once succeeded.' },
    error: { ...nullable({ type: 'object' }), description: 'The last failure, if any.' },
    reasonCode: { ...nullable(ref('ReasonCode')), description: 'Set once the run is terminal.' },
    reasonText: nullable({ type: 'string' }),
    crashCount: { ...count, description: 'Executors that died holding the run.' },
    cancelRequestedAt: nullable(ref('Instant')),
    idempotencyKey: nullable({ type: 'string' }),
    createdAt: ref('Instant'),
    startedAt: nullable(ref('Instant')),
    finishedAt: nullable(ref('Instant')),
    leaseEpoch: { type: 'integer', minimum: 0, description: 'Rises with every claim and every reap; verdicts are fenced by it.' },
  };
}
