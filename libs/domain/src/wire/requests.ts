/** The REST API's request bodies, as the domain's readers accept them. */
import { z } from 'zod';
import { MAX_PAYLOAD_BYTES } from '../closed-sets.js';
import { MAX_PREVIEW_COUNT } from '../preview.js';
import { DEFAULT_RUN_TIMEOUT_MS, MAX_RUN_TIMEOUT_MS } from '../run-policy.js';
import type { RunCreateRequest } from '../run-spec.js';
import { MIN_EVERY_MS } from '../schedule-spec.js';
import { formatDuration } from '../time/index.js';
import { parseInstant, readPayload } from '../json-readers.js';
import { checkedBy, closedObject, readWire, required, text } from './read.js';
import { component, defaulted } from './registry.js';
import { CatchupPolicyInput, DstPolicyInput, DurationInput, durationMs, InstantInput, JsonValue, Labels, OverlapPolicy, RetryPolicyInput, retryPolicy, TargetInput } from './shared.js';

/** An instant field read as epoch milliseconds; the check before it has already accepted the value. */
const instantMs = (instant: typeof InstantInput) => instant.transform((value) => parseInstant(value, ''));

const payload = JsonValue.check(checkedBy((value, field) => readPayload({ [field]: value }, field, ''))).describe(
  `Any JSON value, passed to the target verbatim; at most ${MAX_PAYLOAD_BYTES} bytes serialized (PAYLOAD_TOO_LARGE otherwise).`,
);
const timeout = defaulted(durationMs({ minMs: 1, maxMs: MAX_RUN_TIMEOUT_MS }), formatDuration(DEFAULT_RUN_TIMEOUT_MS), 'Of each attempt; at most 24h.');

/** The definition fields a schedule body may carry; POST, PUT by name and PATCH share them. */
const definition = {
  name: z
    .string()
    .min(1)
    .max(200)
    .regex(/^[A-Za-z0-9][A-Za-z0-9._:-]*$/)
    .describe('Unique per namespace. Defaults to the schedule id.'),
  cron: text(256)
    .meta({ examples: ['30 2 * * *'] })
    .describe('5 fields (minute precision) or 6 (leading seconds), @yearly @monthly @weekly @daily @hourly, ranges, steps, lists, names, L and #.'),
  every: DurationInput.describe(`A fixed interval, at least ${MIN_EVERY_MS} ms, anchored at startAt (default: creation).`),
  at: InstantInput.describe('A one-shot timer at this instant.'),
  in: DurationInput.describe('A one-shot timer this long after the request; stored (and returned) as `at`.'),
  timezone: defaulted(text(64), 'UTC', 'An IANA zone name; cron fields match the wall clock of this zone.'),
  dst: DstPolicyInput,
  catchup: CatchupPolicyInput,
  overlap: defaulted(OverlapPolicy, 'skip'),
  target: TargetInput,
  payload,
  retry: RetryPolicyInput.nullable(),
  timeout,
  startAt: InstantInput.nullable().describe('No slot before this instant.'),
  endAt: InstantInput.nullable().describe('No slot after this instant; must be later than startAt.'),
  maxRuns: z.int().min(1).nullable().describe('The schedule completes after this many fires.'),
  jitter: defaulted(DurationInput, '0s', 'At most 24h; deterministic per slot (a hash of schedule id and slot).'),
  labels: Labels,
};

type Fields = Record<string, z.ZodType>;

/**
 * The body that says when with `timing`: a closed object declaring every field, `timing` required
 * and the other ways of saying when allowed only as null. Exactly one such variant matches a
 * body, and generators turn the oneOf of them into a plain union of object types (a oneOf of
 * bare `required` lists reads to them as objects without properties).
 */
function timedBody(fields: Fields, timing: string, timings: readonly string[], required: readonly string[], description: string) {
  const shape: Fields = {};
  for (const [key, schema] of Object.entries(fields)) {
    const declared = key === timing || !timings.includes(key) ? schema : z.null().describe(`Only one of ${timings.join(', ')}.`);
    shape[key] = key === timing || required.includes(key) ? declared : declared.optional();
  }
  return z.strictObject(shape).describe(description);
}

const SCHEDULE_TIMINGS = ['cron', 'every', 'at', 'in'] as const;
const PREVIEW_TIMINGS = ['cron', 'every'] as const;

const scheduleCreateFields: Fields = {
  ...definition,
  paused: defaulted(z.boolean(), false, 'Create the schedule paused.'),
  idempotencyKey: text(200)
    .nullable()
    .describe('A repeated key in the namespace returns the existing schedule with `deduped: true` (status 200) instead of creating another.'),
};

const scheduleCreate = (timing: (typeof SCHEDULE_TIMINGS)[number]) =>
  component(
    `ScheduleCreate${timing[0]!.toUpperCase()}${timing.slice(1)}`,
    timedBody(scheduleCreateFields, timing, SCHEDULE_TIMINGS, ['target'], `A schedule definition that fires by \`${timing}\`.`),
  );

export const ScheduleCreate = component(
  'ScheduleCreate',
  z.xor(SCHEDULE_TIMINGS.map(scheduleCreate)),
  'A schedule definition (POST /v1/schedules, PUT /v1/schedules/by-name/{name}). Exactly one of cron, every, at or in; unknown fields are refused (UNKNOWN_FIELD). Null counts as absent for every optional field.',
);

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

const previewFields: Fields = {
  cron: definition.cron,
  every: definition.every,
  timezone: definition.timezone,
  dst: definition.dst,
  startAt: definition.startAt,
  after: InstantInput.nullable().describe('List fire instants after this one. Default: now.'),
  count: defaulted(z.int().min(1).max(MAX_PREVIEW_COUNT).nullable(), 10),
};

const cronPreview = (timing: (typeof PREVIEW_TIMINGS)[number]) =>
  component(
    `CronPreviewOf${timing[0]!.toUpperCase()}${timing.slice(1)}`,
    timedBody(previewFields, timing, PREVIEW_TIMINGS, [], `A preview of a \`${timing}\` spec.`),
  );

export const CronPreviewRequest = component(
  'CronPreviewRequest',
  z.xor(PREVIEW_TIMINGS.map(cronPreview)),
  'An ad-hoc spec to preview, validated as a schedule would be. Exactly one of cron or every.',
);

export const RunCreate = component(
  'RunCreate',
  closedObject({
    target: TargetInput,
    payload: payload.optional(),
    retry: retryPolicy(),
    timeout,
    availableAt: InstantInput.nullable()
      .optional()
      .describe('When the run becomes due; an instant in the past means now. Default: now.')
      .transform((value) => (value === undefined || value === null ? null : parseInstant(value, ''))),
    idempotencyKey: text(200)
      .nullable()
      .optional()
      .describe('A repeated key in the namespace returns the first run with `deduped: true` (status 200).'),
  }).transform(({ target, payload, retry, timeout, availableAt, idempotencyKey }) => ({
    target,
    payload: payload ?? null,
    retry,
    timeoutMs: timeout ?? DEFAULT_RUN_TIMEOUT_MS,
    availableAtMs: availableAt,
    idempotencyKey: idempotencyKey ?? null,
  })),
  'An ad-hoc run of a target, now or at availableAt.',
);

/** A POST /v1/runs body; an availableAt before `nowMs` (or none) means now. */
export function readRunCreate(body: unknown, nowMs: number): RunCreateRequest {
  const run = readWire(RunCreate, body);
  return { ...run, availableAtMs: Math.max(nowMs, run.availableAtMs ?? nowMs) };
}
