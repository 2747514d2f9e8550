/** The REST API's request bodies, declared once: what the document shows and what reads them. */
import { z } from 'zod';
import { MAX_PAYLOAD_BYTES } from '../closed-sets.js';
import { DEFAULT_QUEUE, QUEUE_NAME_PATTERN } from '../handlers.js';
import { checkPreviewTiming, DEFAULT_PREVIEW_COUNT, MAX_PREVIEW_COUNT } from '../preview.js';
import { DEFAULT_RETRY_POLICY, DEFAULT_RUN_TIMEOUT_MS, MAX_RUN_TIMEOUT_MS } from '../run-policy.js';
import type { RunCreateRequest } from '../run-spec.js';
import {
  checkBounds,
  checkCron,
  checkFutureFire,
  checkOneTiming,
  checkTimeZone,
  DEFAULT_CATCHUP,
  LABEL_LIMITS,
  MAX_JITTER_MS,
  MIN_EVERY_MS,
  NAME_PATTERN,
  NAME_PATTERN_HINT,
  TIMING_FIELDS,
  type ScheduleCreateRequest,
  type ScheduleSpec,
  type Timing,
} from '../schedule-spec.js';
import { DEFAULT_DST_POLICY, formatDuration } from '../time/index.js';
import { isObject, parseInstant, readPayload, readStringMap } from '../json-readers.js';
import { checkedBy, closedObject, integer, present, readWire, required, screenedBy, text, worded } from './read.js';
import { component, defaulted } from './registry.js';
import { CatchupPolicyInput, ConcurrencyInput, DstPolicyInput, FairnessInput, PriorityInput, durationMs, InstantInput, instantMs, JsonValue, Labels, OverlapPolicy, RetryPolicyInput, retryPolicy, StepsInput, TargetInput } from './shared.js';
import { checkOneExecutable, type Target } from '../steps.js';
import { checkKeysResolve } from '../concurrency.js';
import { checkFairnessResolves, DEFAULT_PRIORITY } from '../priority.js';
import { SensorCreate } from './sensors.js';
import { CalendarCreate, calendarRuleOf, CalendarRuleInput } from './calendars.js';
import { BatchInput, checkEventSchedule, checkNoFlowControl, DebounceInput, EventCreate, EventTrigger, flowControlOf, RateLimitInput, ThrottleInput } from './events.js';
import type { JsonValue as JsonValueType } from '../closed-sets.js';

/** An instant field read as epoch milliseconds; the check before it has already accepted the value. */

const payload = JsonValue.check(checkedBy((value, field) => readPayload({ [field]: value }, field, ''))).describe(
  `Any JSON value, passed to the target verbatim; at most ${MAX_PAYLOAD_BYTES} bytes serialized (PAYLOAD_TOO_LARGE otherwise).`,
);
const timeout = defaulted(durationMs({ minMs: 1, maxMs: MAX_RUN_TIMEOUT_MS }), formatDuration(DEFAULT_RUN_TIMEOUT_MS), 'Of each attempt; at most 24h.');

/** The shortest and the longest deadline a schedule may expect of its runs. */
export const MIN_EXPECT_MS = 1_000;
export const MAX_EXPECT_MS = 30 * 86_400_000;

/** The definition fields a schedule body may carry; POST, PUT by name and PATCH share them. */
const definition = {
  name: text(200)
    .regex(NAME_PATTERN, worded((field) => `${field} ${NAME_PATTERN_HINT}`))
    .describe('Unique per namespace. Defaults to the schedule id.'),
  cron: text(256)
    .check(checkedBy((value, field) => checkCron(value as string, field)))
    .meta({ examples: ['30 2 * * *'] })
    .describe('5 fields (minute precision) or 6 (leading seconds), @yearly @monthly @weekly @daily @hourly, ranges, steps, lists, names, L and #.'),
  every: durationMs({ minMs: MIN_EVERY_MS }).describe(`A fixed interval, at least ${MIN_EVERY_MS} ms, anchored at startAt (default: creation).`),
  at: instantMs(InstantInput.describe('A one-shot timer at this instant.')),
  in: durationMs({ minMs: 1 }).describe('A one-shot timer this long after the request; stored (and returned) as `at`.'),
  on: EventTrigger,
  timezone: defaulted(
    text(64).check(checkedBy((value, field) => checkTimeZone(value as string, field))),
    'UTC',
    'An IANA zone name; cron fields match the wall clock of this zone.',
  ),
  dst: DstPolicyInput,
  catchup: CatchupPolicyInput,
  overlap: defaulted(OverlapPolicy, 'skip'),
  target: TargetInput,
  steps: StepsInput,
  payload,
  retry: RetryPolicyInput.nullable(),
  timeout,
  concurrency: ConcurrencyInput.nullable().describe('A concurrency key over the payload and its limit, given to every run of the schedule. Default: none.'),
  priority: PriorityInput,
  fairness: FairnessInput.nullable().describe('A fairness key over the payload and its weight, given to every run of the schedule. Default: none (the runs share the one key of runs without a key).'),
  startAt: instantMs(InstantInput.describe('No slot before this instant.')).nullable(),
  endAt: instantMs(InstantInput.describe('No slot after this instant; must be later than startAt.')).nullable(),
  maxRuns: integer(1, Number.MAX_SAFE_INTEGER).nullable().describe('The schedule completes after this many fires.'),
  jitter: defaulted(durationMs({ maxMs: MAX_JITTER_MS }), '0s', 'At most 24h; deterministic per slot (a hash of schedule id and slot).'),
  labels: screenedBy((value, field) => readStringMap({ [field]: value }, field, '', LABEL_LIMITS), Labels),
  expect: closedObject({
    succeededWithin: present(
      durationMs({ minMs: MIN_EXPECT_MS, maxMs: MAX_EXPECT_MS }),
      (field) => `${field} is required: how long after each slot its run must have succeeded, e.g. "15m"`,
    ).describe('From 1s to 30d after the slot.'),
  })
    .nullable()
    .describe(
      "What each slot's run must do: a slot whose run has not succeeded within `succeededWithin` after the slot (still queued, running, retrying, dead, or never made) is late: `schedule.late` goes to the subscriptions once for it, and `schedule.recovered` once a later slot succeeds in time. Default: none.",
    ),
  calendar: CalendarRuleInput.nullable().describe('The local dates the schedule does not fire on (calendars it excludes, weekends). Default: none.'),
  debounce: DebounceInput.nullable(),
  throttle: ThrottleInput.nullable(),
  rateLimit: RateLimitInput.nullable(),
  batch: BatchInput.nullable(),
};

type Fields = Record<string, z.ZodType>;

/**
 * The body that says when with `timing` and what it runs with `executable` (target or steps): a
 * closed object declaring every field, those two required and the other ways of saying when and
 * what allowed only as null. Exactly one such variant matches a body, and generators turn the
 * oneOf of them into a plain union of object types (a oneOf of bare `required` lists reads to them
 * as objects without properties).
 */
function timedBody(fields: Fields, timing: string | null, timings: readonly string[], executable: Executable | null, description: string) {
  const shape: Fields = {};
  for (const [key, schema] of Object.entries(fields)) {
    const otherTiming = timings.includes(key) && key !== timing;
    const otherExecutable = executable !== null && EXECUTABLES.includes(key as Executable) && key !== executable;
    const declared = otherTiming
      ? z.null().describe(`Only one of ${timings.join(', ')}.`)
      : otherExecutable
        ? z.null().describe(`Only one of ${EXECUTABLES.join(', ')}.`)
        : schema;
    shape[key] = key === timing || key === executable ? declared : declared.optional();
  }
  return z.strictObject(shape).describe(description);
}

/** What a schedule or run executes: one call, or a graph of steps. */
const EXECUTABLES = ['target', 'steps'] as const;
type Executable = (typeof EXECUTABLES)[number];

const SCHEDULE_TIMINGS = ['cron', 'every', 'at', 'in', 'on'] as const;
const PREVIEW_TIMINGS = ['cron', 'every'] as const;

const scheduleCreateFields = {
  ...definition,
  paused: defaulted(z.boolean(), false, 'Create the schedule paused.'),
  idempotencyKey: text(200)
    .nullable()
    .describe('A repeated key in the namespace returns the existing schedule with `deduped: true` (status 200) instead of creating another.'),
};

const scheduleCreate = (timing: (typeof SCHEDULE_TIMINGS)[number], executable: Executable) =>
  component(
    `ScheduleCreate${timing[0]!.toUpperCase()}${timing.slice(1)}${executable === 'steps' ? 'Steps' : ''}`,
    timedBody(
      scheduleCreateFields,
      timing,
      SCHEDULE_TIMINGS,
      executable,
      executable === 'steps' ? `A schedule definition that fires by \`${timing}\` and runs steps.` : `A schedule definition that fires by \`${timing}\`.`,
    ),
  );

export const ScheduleCreate = component(
  'ScheduleCreate',
  z.xor(EXECUTABLES.flatMap((executable) => SCHEDULE_TIMINGS.map((timing) => scheduleCreate(timing, executable)))),
  'A schedule definition (POST /v1/schedules, PUT /v1/schedules/by-name/{name}). Exactly one of cron, every, at, in or on, and exactly one of target or steps; unknown fields are refused (UNKNOWN_FIELD). Null counts as absent for every optional field.',
);

/** Every field may be absent or null, which is how the readers take a field left out. */
type Absentable<T extends z.ZodRawShape> = { [K in keyof T]: z.ZodOptional<z.ZodNullable<T[K]>> };

function absentable<T extends z.ZodRawShape>(shape: T): Absentable<T> {
  return Object.fromEntries(Object.entries(shape).map(([key, schema]) => [key, (schema as z.ZodType).nullable().optional()])) as unknown as Absentable<T>;
}

/**
 * A schedule body as it is read: the fields of ScheduleCreate in one closed object, said when in
 * exactly one way, with endAt after startAt.
 */
const scheduleBody = screenedBy(
  (value) => {
    // An unknown field is reported first, by the object itself.
    if (isObject(value) && Object.keys(value).every((key) => key in scheduleCreateFields)) {
      checkOneTiming(value);
      checkOneExecutable(value);
    }
  },
  closedObject(absentable(scheduleCreateFields)).check(
    // Read after every field but these two, as the readers did.
    checkedBy(
      (value) => {
        const { startAt, endAt } = value as { startAt?: number | null; endAt?: number | null };
        checkBounds(startAt ?? null, endAt ?? null);
      },
      (payload) => payload.issues.every((issue) => issue.path?.[0] === 'paused' || issue.path?.[0] === 'idempotencyKey'),
    ),
  ),
);

/** The order the readers report a schedule body's faults in; '' is the bounds check. */
const SCHEDULE_READ_ORDER = [...TIMING_FIELDS, 'timezone', 'name', 'dst', 'catchup', 'overlap', 'target', 'steps', 'payload', 'retry', 'timeout', 'concurrency', 'priority', 'fairness', 'startAt', 'endAt', 'maxRuns', 'jitter', 'labels', 'expect', 'calendar', 'debounce', 'throttle', 'rateLimit', 'batch', '', 'paused', 'idempotencyKey'];

/** A POST /v1/schedules (or PUT by-name) body. `nowMs` resolves `in` and checks for a future fire. */
export function readScheduleCreate(body: unknown, nowMs: number): ScheduleCreateRequest {
  const { paused, idempotencyKey, ...read } = readWire(scheduleBody, body, SCHEDULE_READ_ORDER);
  return { spec: specOf(read, nowMs), paused: paused ?? false, idempotencyKey: idempotencyKey ?? null };
}

/** A definition's fields as read; the ones a body leaves out are absent or null. */
type DeclaredSpec = Partial<Omit<z.output<typeof scheduleBody>, 'target' | 'steps' | 'paused' | 'idempotencyKey'>> & { target?: Target | null; steps?: Target | null };

/** The spec a definition declares, with its defaults, checked to fire after `nowMs`. */
function specOf(read: DeclaredSpec, nowMs: number): ScheduleSpec {
  const timing: Timing =
    read.cron != null
      ? { kind: 'cron', cron: read.cron }
      : read.every != null
        ? { kind: 'every', everyMs: read.every }
        : read.at != null
          ? { kind: 'at', atMs: read.at }
          : read.on != null
            ? { kind: 'event', event: read.on.event!, match: (read.on.match ?? {}) as Record<string, JsonValueType> }
            : { kind: 'at', atMs: nowMs + read.in! };
  if (timing.kind === 'event') checkEventSchedule(read);
  else checkNoFlowControl(read);
  const spec: ScheduleSpec = {
    name: read.name ?? null,
    timing,
    timezone: read.timezone ?? 'UTC',
    dst: read.dst ?? DEFAULT_DST_POLICY,
    catchup: read.catchup ?? DEFAULT_CATCHUP,
    // Every event gets its run unless the schedule says otherwise; the clock's slots skip while a run is active.
    overlap: read.overlap ?? (timing.kind === 'event' ? 'allow' : 'skip'),
    // The body was checked to give exactly one of them.
    target: (read.target ?? read.steps)!,
    payload: read.payload ?? null,
    retry: read.retry ?? DEFAULT_RETRY_POLICY,
    timeoutMs: read.timeout ?? DEFAULT_RUN_TIMEOUT_MS,
    concurrency: read.concurrency ?? null,
    priority: read.priority ?? DEFAULT_PRIORITY,
    fairness: read.fairness ?? null,
    startAtMs: read.startAt ?? null,
    endAtMs: read.endAt ?? null,
    maxRuns: read.maxRuns ?? null,
    jitterMs: read.jitter ?? 0,
    labels: read.labels ?? {},
    expect: read.expect ? { succeededWithinMs: read.expect.succeededWithin! } : null,
    calendar: read.calendar ? calendarRuleOf(read.calendar) : null,
    flow: flowControlOf(read),
  };
  // A schedule started by events resolves its keys over each event's payload, when the event arrives.
  if (timing.kind !== 'event') {
    checkKeysResolve(spec);
    checkFairnessResolves(spec);
  }
  checkFutureFire(spec, nowMs, TIMING_FIELDS.find((key) => read[key] != null)!);
  return spec;
}

/**
 * A PATCH body as it is read here: which definition fields it replaces, and `paused`. The fields
 * are read with the stored ones they join, as a whole schedule body.
 */
const schedulePatchBody = closedObject({
  ...(Object.fromEntries(Object.keys(definition).map((key) => [key, z.unknown().optional()])) as Record<keyof typeof definition, z.ZodOptional<z.ZodUnknown>>),
  paused: z.boolean().nullable().optional(),
});

/** A PATCH /v1/schedules/{id} body: the definition fields it gives, and whether to pause or resume (null: neither). */
export function readSchedulePatch(body: unknown): { definition: Record<string, unknown>; paused: boolean | null } {
  const { paused, ...definition } = readWire(schedulePatchBody, body);
  return { definition, paused: paused ?? null };
}

export const SchedulePatch = component(
  'SchedulePatch',
  z.strictObject({ ...definition, paused: z.boolean() }).partial(),
  'Fields replacing the stored ones; the rest stay. A new cron, every, at or in replaces the old timing, but only the timing field the schedule already has (or in) is accepted: a cron schedule refuses `every` and `at` with UNKNOWN_FIELD. `paused` pauses or resumes. idempotencyKey cannot be changed.',
);

export const ScheduleTrigger = component(
  'ScheduleTrigger',
  closedObject({
    overlap: OverlapPolicy.nullish().describe("Overrides the schedule's overlap policy for this run."),
    payload: payload.describe("Replaces the schedule's payload for this run.").optional(),
  }),
  'Optional: run the schedule now, outside its slots.',
);

export const BackfillRequest = component(
  'BackfillRequest',
  closedObject({
    from: instantMs(required(InstantInput.describe('The first instant of the range.'), 'from is required: the first instant of the range')),
    to: instantMs(required(InstantInput.describe('The last instant of the range; not in the future, not before from.'), 'to is required: the last instant of the range')),
    overlap: defaulted(OverlapPolicy.nullable(), 'buffer_all', 'Backfilled runs queue behind each other unless this says otherwise.'),
  }),
);

const previewFields = {
  cron: definition.cron,
  every: definition.every,
  timezone: definition.timezone,
  dst: definition.dst,
  startAt: definition.startAt,
  calendar: definition.calendar,
  after: instantMs(InstantInput.describe('List fire instants after this one. Default: now.')).nullable(),
  count: defaulted(integer(1, MAX_PREVIEW_COUNT).nullable(), DEFAULT_PREVIEW_COUNT),
};

const cronPreview = (timing: (typeof PREVIEW_TIMINGS)[number]) =>
  component(
    `CronPreviewOf${timing[0]!.toUpperCase()}${timing.slice(1)}`,
    timedBody(previewFields, timing, PREVIEW_TIMINGS, null, `A preview of a \`${timing}\` spec.`),
  );

export const CronPreviewRequest = component(
  'CronPreviewRequest',
  z.xor(PREVIEW_TIMINGS.map(cronPreview)),
  'An ad-hoc spec to preview, validated as a schedule would be. Exactly one of cron or every.',
);

/** A preview body as it is read: the fields of CronPreviewRequest in one closed object. */
const previewBody = screenedBy(
  (value) => {
    if (isObject(value) && Object.keys(value).every((key) => key in previewFields)) checkPreviewTiming(value);
  },
  closedObject(absentable(previewFields)).check(
    // Whether cron and every conflict is known from the body alone, so it is asked whatever else is wrong.
    checkedBy(
      (value) => {
        if (isObject(value)) checkOneTiming(value);
      },
      () => true,
    ),
  ),
);

/** The order the readers report a preview body's faults in; '' is the choice of cron or every. */
const PREVIEW_READ_ORDER = ['after', 'count', '', 'cron', 'every', 'timezone', 'dst', 'startAt', 'calendar'];

/** A POST /v1/cron/preview body: the spec to preview, and how many fire instants after which one. */
export function readPreviewRequest(body: unknown, nowMs: number): { spec: ScheduleSpec; afterMs: number; count: number } {
  const { after, count, ...read } = readWire(previewBody, body, PREVIEW_READ_ORDER);
  const afterMs = after ?? nowMs;
  // A preview executes nothing: a placeholder target stands in, as the spec requires one.
  const spec = specOf({ ...read, target: { type: 'handler', name: 'noop', queue: DEFAULT_QUEUE } }, afterMs);
  return { spec, afterMs, count: count ?? DEFAULT_PREVIEW_COUNT };
}

const runCreateFields = {
  target: TargetInput,
  steps: StepsInput,
  payload: payload.optional(),
  retry: RetryPolicyInput.nullable().optional(),
  timeout,
  concurrency: ConcurrencyInput.nullable().optional().describe('A concurrency key over the payload and its limit. Default: none.'),
  priority: PriorityInput,
  fairness: FairnessInput.nullable().optional().describe('A fairness key over the payload and its weight. Default: none (the run shares the one key of runs without a key).'),
  availableAt: InstantInput.nullable()
    .optional()
    .describe('When the run becomes due; an instant in the past means now. Default: now.')
    .transform((value) => (value === undefined || value === null ? null : parseInstant(value, ''))),
  idempotencyKey: text(200)
    .nullable()
    .optional()
    .describe('A repeated key in the namespace returns the first run with `deduped: true` (status 200).'),
};

export const RunCreate = component(
  'RunCreate',
  z.xor([
    component('RunCreateTarget', timedBody(runCreateFields, null, [], 'target', 'An ad-hoc run of a target.')),
    component('RunCreateSteps', timedBody(runCreateFields, null, [], 'steps', 'An ad-hoc run of a graph of steps.')),
  ]),
  'An ad-hoc run of a target, or of a graph of steps, now or at availableAt. Exactly one of target or steps.',
);

/** A run body as it is read: the fields of RunCreate in one closed object, with exactly one of target or steps. */
const runBody = screenedBy(
  (value) => {
    if (isObject(value) && Object.keys(value).every((key) => key in runCreateFields)) checkOneExecutable(value);
  },
  closedObject({ ...runCreateFields, target: TargetInput.optional(), steps: StepsInput.optional(), retry: retryPolicy() }).transform(
    ({ target, steps, payload, retry, timeout, concurrency, priority, fairness, availableAt, idempotencyKey }) => ({
      // The body was checked to give exactly one of them.
      target: (target ?? steps)!,
      payload: payload ?? null,
      retry,
      timeoutMs: timeout ?? DEFAULT_RUN_TIMEOUT_MS,
      concurrency: concurrency ?? null,
      priority: priority ?? DEFAULT_PRIORITY,
      fairness: fairness ?? null,
      availableAtMs: availableAt,
      idempotencyKey: idempotencyKey ?? null,
    }),
  ),
);

/** A POST /v1/runs body; an availableAt before `nowMs` (or none) means now. */
export function readRunCreate(body: unknown, nowMs: number): RunCreateRequest {
  const run = readWire(runBody, body);
  checkKeysResolve(run);
  checkFairnessResolves(run);
  return { ...run, availableAtMs: Math.max(nowMs, run.availableAtMs ?? nowMs) };
}

/** The most items one batch request (POST /v1/schedules/batch, POST /v1/runs/batch) may carry. */
export const MAX_BATCH_ITEMS = 1_000;

function batchItems<T extends z.ZodType>(item: T) {
  return z
    .array(item)
    .min(1, { error: 'items must hold at least one item' })
    .max(MAX_BATCH_ITEMS, { error: `items holds at most ${MAX_BATCH_ITEMS} items; split the batch` });
}

function batchBody<T extends z.ZodType>(id: string, item: T, route: string) {
  return component(
    id,
    z.strictObject({ items: batchItems(item).describe(`Each item is the body of ${route}, read and stored on its own.`) }),
    `Up to ${MAX_BATCH_ITEMS} bodies of ${route} in one request. The answer lists each item's outcome in order; an item refused stores nothing and does not stop the others; idempotency keys count per item.`,
  );
}

export const ScheduleBatch = batchBody('ScheduleBatch', ScheduleCreate, 'POST /v1/schedules');
export const RunBatch = batchBody('RunBatch', RunCreate, 'POST /v1/runs');
export const EventBatch = batchBody('EventBatch', EventCreate, 'POST /v1/events');

const batchEnvelope = closedObject({ items: batchItems(z.unknown()) });

/** The items of a batch body, each still to be read as the body of its single route. */
export function readBatchItems(body: unknown): unknown[] {
  return readWire(batchEnvelope, body).items;
}

/** The most queues one worker credential may serve. */
export const MAX_CREDENTIAL_QUEUES = 20;

export const WorkerCredentialCreate = component(
  'WorkerCredentialCreate',
  closedObject({
    queues: present(
      z
        .array(
          text(64).regex(QUEUE_NAME_PATTERN, worded((field) => `${field} must be 1 to 64 letters, digits, "_", "." or "-"`)),
          worded((field) => `${field} must be an array of queue names`),
        )
        .min(1, worded((field) => `${field} must name at least one queue`))
        .max(MAX_CREDENTIAL_QUEUES, worded((field) => `${field} names at most ${MAX_CREDENTIAL_QUEUES} queues`)),
      (field) => `${field} is required: the queues whose runs the worker may claim, e.g. ["media"]`,
    ).describe('The queues whose runs workers with this credential may claim and finish.'),
  }),
  "A Postgres login (and, on Redis, a Redis user) for workers of the caller's namespace that may serve these queues and do nothing else.",
);

/** A POST /v1/worker-credentials body: the queues, each once. */
export function readWorkerCredentialCreate(body: unknown): { queues: string[] } {
  return { queues: [...new Set(readWire(WorkerCredentialCreate, body).queues)] };
}

/** The most schedules one apply may declare. */
export const MAX_APPLY_SCHEDULES = 5_000;

export const APPLY_SOURCE_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:/-]{0,127}$/;

export const ApplyRequest = component(
  'ApplyRequest',
  closedObject({
    source: present(
      text(128).regex(APPLY_SOURCE_PATTERN, worded((field) => `${field} must be 1 to 128 letters, digits, ".", "_", ":", "/" or "-", starting with a letter or digit`)),
      (field) => `${field} is required: who owns these schedules (a service or team name); prune only ever touches its own`,
    ).describe('Who declares these schedules (a service or team). A prune deletes only schedules of this source.'),
    schedules: z
      .array(ScheduleCreate, worded((field) => `${field} must be an array of schedule bodies`))
      .max(MAX_APPLY_SCHEDULES, worded((field) => `${field} holds at most ${MAX_APPLY_SCHEDULES} schedules; split the source`))
      .nullable()
      .optional()
      .describe('The schedules, each a body of POST /v1/schedules with its name (no idempotencyKey, no paused), found by its name. Absent: none (with prune, every schedule of the source is deleted).'),
    sensors: z
      .array(SensorCreate, worded((field) => `${field} must be an array of sensor bodies`))
      .max(MAX_APPLY_SCHEDULES, worded((field) => `${field} holds at most ${MAX_APPLY_SCHEDULES} sensors; split the source`))
      .nullable()
      .optional()
      .describe('The sensors, each a body of POST /v1/sensors (no paused), found by its name. Absent: none (with prune, every sensor of the source is deleted).'),
    calendars: z
      .array(CalendarCreate, worded((field) => `${field} must be an array of calendar bodies`))
      .max(MAX_APPLY_SCHEDULES, worded((field) => `${field} holds at most ${MAX_APPLY_SCHEDULES} calendars; split the source`))
      .nullable()
      .optional()
      .describe(
        "The calendars, each a body of POST /v1/calendars, found by its name and written before the schedules, which may name them. Calendars belong to the namespace, not to a source (another source's schedules may exclude them): a prune never deletes one.",
      ),
    prune: defaulted(z.boolean().nullable(), false, "Delete the source's schedules the declaration no longer names."),
    dryRun: defaulted(z.boolean().nullable(), false, 'Plan only; change nothing.'),
  }),
  "A source's whole declaration of schedules, sensors and the calendars they name, planned against the ledger and applied in one transaction.",
);

const applyEnvelope = closedObject({
  source: ApplyRequest.shape.source,
  schedules: z
    .array(z.unknown(), worded((field) => `${field} must be an array of schedule bodies`))
    .max(MAX_APPLY_SCHEDULES, worded((field) => `${field} holds at most ${MAX_APPLY_SCHEDULES} schedules; split the source`))
    .nullable()
    .optional(),
  sensors: z
    .array(z.unknown(), worded((field) => `${field} must be an array of sensor bodies`))
    .max(MAX_APPLY_SCHEDULES, worded((field) => `${field} holds at most ${MAX_APPLY_SCHEDULES} sensors; split the source`))
    .nullable()
    .optional(),
  calendars: z
    .array(z.unknown(), worded((field) => `${field} must be an array of calendar bodies`))
    .max(MAX_APPLY_SCHEDULES, worded((field) => `${field} holds at most ${MAX_APPLY_SCHEDULES} calendars; split the source`))
    .nullable()
    .optional(),
  prune: z.boolean().nullable().optional(),
  dryRun: z.boolean().nullable().optional(),
});

/** A POST /v1/apply body; each schedule, sensor and calendar is still to be read (as the body of its POST) by the caller, which says where a fault lies. */
export function readApplyRequest(body: unknown): { source: string; schedules: unknown[]; sensors: unknown[]; calendars: unknown[]; prune: boolean; dryRun: boolean } {
  const read = readWire(applyEnvelope, body);
  return {
    source: read.source,
    schedules: read.schedules ?? [],
    sensors: read.sensors ?? [],
    calendars: read.calendars ?? [],
    prune: read.prune ?? false,
    dryRun: read.dryRun ?? false,
  };
}
