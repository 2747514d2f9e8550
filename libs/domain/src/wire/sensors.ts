/**
 * The wire shapes of sensors, declared once: their bodies (create, patch, cursor, reset), what
 * reads them, and the views REST and GraphQL answer with. A sensor is a handler evaluated every
 * `every` on the workers, with the sensor's cursor; what it answers (the runs to ask for, by run
 * key, and the new cursor) is committed by the scheduler. Each run it asks for executes `run`.
 */
import { z } from 'zod';
import type { JsonValue } from '../closed-sets.js';
import type { ConcurrencySpec } from '../concurrency.js';
import { DEFAULT_PRIORITY, MAX_PRIORITY, MIN_PRIORITY, type FairnessSpec } from '../priority.js';
import { ValidationError } from '../errors.js';
import { DEFAULT_QUEUE } from '../handlers.js';
import { isObject, join, readPayload, readStringMap } from '../json-readers.js';
import { DEFAULT_RETRY_POLICY, DEFAULT_RUN_TIMEOUT_MS, MAX_RUN_TIMEOUT_MS, type CallTarget, type RetryPolicy } from '../run-policy.js';
import { LABEL_LIMITS, MIN_EVERY_MS, NAME_PATTERN, NAME_PATTERN_HINT } from '../schedule-spec.js';
import { checkOneExecutable, type Target } from '../steps.js';
import { formatDuration } from '../time/index.js';
import { checkedBy, closedObject, present, readWire, screenedBy, text, worded } from './read.js';
import { component, defaulted, page } from './registry.js';
import {
  Concurrency,
  ConcurrencyInput,
  Fairness,
  FairnessInput,
  PriorityInput,
  Duration,
  durationMs,
  HandlerTarget,
  HandlerTargetInput,
  Instant,
  JsonValue as JsonValueShape,
  Labels,
  ReasonCodeSchema,
  RetryPolicy as RetryPolicyShape,
  RetryPolicyInput,
  Step,
  StepsInput,
  Target as TargetShape,
  TargetInput,
} from './shared.js';

/** The default and the longest timeout of one evaluation. */
export const DEFAULT_SENSOR_TIMEOUT_MS = 60_000;
export const MAX_SENSOR_TIMEOUT_MS = 3_600_000;

/** The states of a sensor's tick (one evaluation); the sensor_ticks CHECK lists the same. */
export const SENSOR_TICK_STATE_VALUES = ['evaluating', 'succeeded', 'failed', 'skipped'] as const;

/** What each run a sensor asks for executes, and how: frozen into each run it asks for. */
export interface SensorRunDefinition {
  target: Target;
  retry: RetryPolicy;
  timeoutMs: number;
  concurrency: ConcurrencySpec | null;
  /** 1 (first) to 5; absent: 3. */
  priority?: number;
  /** Absent: none. */
  fairness?: FairnessSpec | null;
}

/** A sensor's definition, with its defaults filled in. */
export interface SensorSpec {
  name: string;
  everyMs: number;
  /** The evaluation: a handler. */
  target: CallTarget;
  /** Of one evaluation. */
  timeoutMs: number;
  run: SensorRunDefinition;
  payload: JsonValue | null;
  labels: Record<string, string>;
}

export interface SensorCreateRequest {
  spec: SensorSpec;
  paused: boolean;
}

// ---- Fields ----

const payload = JsonValueShape.check(checkedBy((value, field) => readPayload({ [field]: value }, field, ''))).describe('Any JSON value, passed to each evaluation verbatim (beside the cursor); at most 256 KiB serialized.');

const name = present(
  text(200).regex(NAME_PATTERN, worded((field) => `${field} ${NAME_PATTERN_HINT}`)),
  (field) => `${field} is required: the sensor's name, unique in the namespace (e.g. "new-invoices")`,
).describe('Unique per namespace; letters, digits, ".", "_", ":" and "-", starting with a letter or digit, at most 200.');

const every = present(
  durationMs({ minMs: MIN_EVERY_MS }),
  (field) => `${field} is required: how often the sensor is evaluated, at least 1s (e.g. "30s")`,
).describe(`How often the sensor is evaluated: the next evaluation starts this long after the last one started (or ended, when it ran longer). At least ${MIN_EVERY_MS} ms.`);

const evaluationTimeout = defaulted(
  durationMs({ minMs: 1, maxMs: MAX_SENSOR_TIMEOUT_MS }),
  formatDuration(DEFAULT_SENSOR_TIMEOUT_MS),
  'Of one evaluation; at most 1h. One that runs longer is cancelled and the next starts from the same cursor.',
);

/** Refuses an evaluation target that is no handler: the evaluation answers what to run, which only a handler can. */
function checkEvaluationTarget(value: unknown, field: string): void {
  if (value === undefined || value === null) {
    throw new ValidationError('MISSING_FIELD', field, `${field} is required: the handler that evaluates the sensor, e.g. { "type": "handler", "name": "new-invoices" }`);
  }
  if (!isObject(value)) throw new ValidationError('INVALID_TARGET', field, `${field} must be an object: { "type": "handler", "name": "..." }`);
  if (value.type === 'http') {
    throw new ValidationError(
      'INVALID_TARGET',
      field,
      `${field}: a sensor's evaluation runs a handler (it answers the runs to ask for and the new cursor), not an http target; give { "type": "handler", "name": "..." } and put the webhook in run.target`,
    );
  }
  if (value.type === undefined || value.type === null) throw new ValidationError('MISSING_FIELD', join(field, 'type'), `${field}.type is required: "handler"`);
}

const evaluationTarget = screenedBy(
  checkEvaluationTarget,
  HandlerTargetInput.transform((target): CallTarget => ({ type: 'handler', name: target.name, queue: target.queue ?? DEFAULT_QUEUE })),
).describe("The handler that evaluates the sensor: it gets the sensor's cursor and payload and answers { runs: [{ runKey, payload }], cursor }.");

const runTimeout = defaulted(durationMs({ minMs: 1, maxMs: MAX_RUN_TIMEOUT_MS }), formatDuration(DEFAULT_RUN_TIMEOUT_MS), 'Of each attempt; at most 24h.');

const runFields = {
  target: TargetInput,
  steps: StepsInput,
  retry: RetryPolicyInput.nullable().describe('How failed attempts of each run are retried. Absent or null: the defaults.'),
  timeout: runTimeout,
  concurrency: ConcurrencyInput.nullable().describe("A concurrency key over each run's payload (what the evaluation asked with) and its limit. Default: none."),
  priority: PriorityInput,
  fairness: FairnessInput.nullable().describe("A fairness key over each run's payload (what the evaluation asked with) and its weight. Default: none."),
};

const EXECUTABLES = ['target', 'steps'] as const;

/** The run body that executes `executable`: the other way of saying what, allowed only as null. */
function runVariant(id: string, executable: (typeof EXECUTABLES)[number], description: string) {
  const shape: Record<string, z.ZodType> = {};
  for (const [key, schema] of Object.entries(runFields)) {
    if (key === executable) shape[key] = schema;
    else if ((EXECUTABLES as readonly string[]).includes(key)) shape[key] = z.null().describe('Only one of target, steps.').optional();
    else shape[key] = (schema as z.ZodType).optional();
  }
  return component(id, z.strictObject(shape).describe(description));
}

export const SensorRunInput = component(
  'SensorRunInput',
  z.xor([
    runVariant('SensorRunTarget', 'target', 'Each run the sensor asks for calls one target.'),
    runVariant('SensorRunSteps', 'steps', 'Each run the sensor asks for executes a graph of steps.'),
  ]),
  'What each run the sensor asks for executes (exactly one of target or steps) and how: its retry policy, timeout and concurrency key. The payload of each run is what the evaluation asked with.',
);

/** checkOneExecutable for a body at `field`: its refusal names the field under it (`run.target`). */
function checkRunExecutable(value: unknown, field: string): void {
  if (!isObject(value) || !Object.keys(value).every((key) => key in runFields)) return;
  try {
    checkOneExecutable(value);
  } catch (error) {
    if (!(error instanceof ValidationError) || !field) throw error;
    throw new ValidationError(error.code, join(field, error.field ?? ''), `${field}: ${error.message}`);
  }
}

/** A run body as it is read: one closed object with exactly one of target or steps. */
const runBody = screenedBy(
  checkRunExecutable,
  closedObject({
    target: TargetInput.nullable().optional(),
    steps: StepsInput.nullable().optional(),
    retry: RetryPolicyInput.nullable().optional(),
    timeout: runTimeout,
    concurrency: ConcurrencyInput.nullable().optional(),
    priority: PriorityInput,
    fairness: FairnessInput.nullable().optional(),
  }).transform(
    (run): SensorRunDefinition => ({
      // The body was checked to give exactly one of them.
      target: (run.target ?? run.steps)!,
      retry: run.retry ?? DEFAULT_RETRY_POLICY,
      timeoutMs: run.timeout ?? DEFAULT_RUN_TIMEOUT_MS,
      concurrency: run.concurrency ?? null,
      priority: run.priority ?? DEFAULT_PRIORITY,
      fairness: run.fairness ?? null,
    }),
  ),
);

const labels = screenedBy((value, field) => readStringMap({ [field]: value }, field, '', LABEL_LIMITS), Labels);

// ---- Bodies ----

export const SensorCreate = component(
  'SensorCreate',
  closedObject({
    name,
    every,
    target: evaluationTarget,
    timeout: evaluationTimeout,
    run: SensorRunInput,
    payload: payload.optional(),
    paused: defaulted(z.boolean().nullable(), false, 'Create the sensor paused.'),
    labels: labels.nullable().optional(),
  }),
  'A sensor (POST /v1/sensors): a handler evaluated every `every` with the sensor\'s cursor, and what each run it asks for executes. Unknown fields are refused (UNKNOWN_FIELD); null counts as absent for every optional field.',
);

/** A sensor body as it is read: SensorCreate's fields, with `run` read as one closed object. */
const sensorBody = closedObject({
  name,
  every,
  target: evaluationTarget,
  timeout: evaluationTimeout,
  run: present(runBody, (field) => `${field} is required: what each run the sensor asks for executes, e.g. { "target": { "type": "handler", "name": "import" } }`),
  payload: payload.optional(),
  paused: z.boolean().nullable().optional(),
  labels: labels.nullable().optional(),
});

/** The order the fields' faults are reported in, as they are declared. */
const SENSOR_READ_ORDER = ['name', 'every', 'target', 'timeout', 'run', 'payload', 'paused', 'labels'];

/** A POST /v1/sensors body (or an apply's declared sensor). */
export function readSensorCreate(body: unknown): SensorCreateRequest {
  const read = readWire(sensorBody, body, SENSOR_READ_ORDER);
  return {
    spec: {
      name: read.name,
      everyMs: read.every!,
      target: read.target,
      timeoutMs: read.timeout ?? DEFAULT_SENSOR_TIMEOUT_MS,
      run: read.run,
      payload: read.payload ?? null,
      labels: read.labels ?? {},
    },
    paused: read.paused ?? false,
  };
}

/** The definition fields a PATCH may give; they are read with the stored ones they join, as a whole sensor body. */
const DEFINITION_FIELDS = ['name', 'every', 'target', 'timeout', 'run', 'payload', 'labels'] as const;

const sensorPatchBody = closedObject({
  ...(Object.fromEntries(DEFINITION_FIELDS.map((key) => [key, z.unknown().optional()])) as Record<(typeof DEFINITION_FIELDS)[number], z.ZodOptional<z.ZodUnknown>>),
  paused: z.boolean().nullable().optional(),
});

/** A PATCH /v1/sensors/{id} body: the definition fields it gives, and whether to pause or resume (null: neither). */
export function readSensorPatch(body: unknown): { definition: Record<string, unknown>; paused: boolean | null } {
  const { paused, ...definition } = readWire(sensorPatchBody, body);
  return { definition: Object.fromEntries(Object.entries(definition).filter(([, value]) => value !== undefined)), paused: paused ?? null };
}

export const SensorPatch = component(
  'SensorPatch',
  z
    .strictObject({
      name: SensorCreate.shape.name,
      every: SensorCreate.shape.every,
      target: SensorCreate.shape.target,
      timeout: SensorCreate.shape.timeout,
      run: z
        .strictObject({
          target: TargetInput.nullable(),
          steps: StepsInput.nullable(),
          retry: runFields.retry,
          timeout: runFields.timeout,
          concurrency: runFields.concurrency,
          priority: runFields.priority,
          fairness: runFields.fairness,
        })
        .partial()
        .describe("Fields replacing the stored ones of `run`; the rest stay. A new target replaces stored steps, and new steps a stored target."),
      payload,
      paused: z.boolean(),
      labels: labels.nullable(),
    })
    .partial(),
  'Fields replacing the stored ones; the rest stay. The cursor is left alone (POST /v1/sensors/{id}/cursor moves it). `paused` pauses or resumes.',
);

/** The cursor field of a body: any JSON, at most as large as a payload. */
const cursorValue = JsonValueShape.check(checkedBy((value, field) => readPayload({ [field]: value }, field, '')));

export const SensorCursorRequest = component(
  'SensorCursorRequest',
  closedObject({
    cursor: screenedBy((value, field) => {
      if (value === undefined) throw new ValidationError('MISSING_FIELD', field, `${field} is required: the sensor's new cursor, any JSON (null to start over)`);
    }, cursorValue).describe("The sensor's new cursor: any JSON value, null included."),
  }),
  "Moves the sensor's cursor. Its version rises, so an evaluation under way when it moved commits nothing (SENSOR_CURSOR_MOVED).",
);

/** A POST /v1/sensors/{id}/cursor body: the new cursor. */
export function readSensorCursor(body: unknown): { cursor: JsonValue | null } {
  return { cursor: (readWire(SensorCursorRequest, body).cursor ?? null) as JsonValue | null };
}

export const SensorResetRequest = component(
  'SensorResetRequest',
  closedObject({
    cursor: cursorValue.optional().describe('The cursor to start from again. Default: null.'),
    forgetRunKeys: defaulted(
      z.boolean().nullable(),
      false,
      'Also forget the run keys the sensor asked for, so an evaluation may ask for the same keys again and get new runs.',
    ),
  }),
  "Restarts the sensor from a cursor: its version rises (an evaluation under way commits nothing) and, with forgetRunKeys, the run keys it asked for are forgotten.",
);

/** A POST /v1/sensors/{id}/reset body (or none): the cursor to start from and whether to forget the run keys. */
export function readSensorReset(body: unknown): { cursor: JsonValue | null; forgetRunKeys: boolean } {
  const read = readWire(SensorResetRequest, body ?? {});
  return { cursor: (read.cursor ?? null) as JsonValue | null, forgetRunKeys: read.forgetRunKeys ?? false };
}

// ---- Responses ----

export const SensorTickState = component(
  'SensorTickState',
  z.enum(SENSOR_TICK_STATE_VALUES),
  'evaluating: the evaluation run has not ended; succeeded: what it asked for was committed; failed: nothing was committed (its reason says why); skipped: the evaluation was not started.',
);

export const SensorTick = component(
  'SensorTick',
  z.strictObject({
    id: z.uuid(),
    sensorId: z.uuid(),
    runId: z.uuid().describe('The evaluation run.'),
    state: SensorTickState,
    requested: z.int().min(0).describe('Runs the evaluation asked for.'),
    created: z.int().min(0).describe('Runs created for it.'),
    deduplicated: z.int().min(0).describe('Runs it asked for by a run key the sensor had already asked for: no new run.'),
    runIds: z.array(z.uuid()).describe('The runs created.'),
    cursorBefore: JsonValueShape.describe('The cursor the evaluation started from.'),
    cursorAfter: JsonValueShape.describe('The cursor it committed; null until then, or when it committed none.'),
    reasonCode: ReasonCodeSchema.nullable(),
    reason: z.string().nullable(),
    startedAt: Instant,
    finishedAt: Instant.nullable().describe('Null while evaluating.'),
    durationMs: z.int().min(0).nullable().describe('finishedAt - startedAt; null while evaluating.'),
  }),
  'One evaluation of a sensor and what came of it.',
);
export const SensorTickPage = component('SensorTickPage', page(SensorTick, 'A page of ticks, newest first.'));

export const SensorRun = component(
  'SensorRun',
  z.strictObject({
    target: TargetShape.nullable().describe('What each run executes; null when it runs steps.'),
    steps: z.array(Step).nullable().describe('The graph of steps each run executes; null when it runs one target.'),
    retry: RetryPolicyShape,
    timeout: Duration,
    concurrency: Concurrency.nullable().describe('The key as declared, resolved over each run\'s payload; null: none.'),
    priority: z.int().min(MIN_PRIORITY).max(MAX_PRIORITY),
    fairness: Fairness.nullable().describe("The key as declared, resolved over each run's payload; null: none."),
  }),
  'What each run a sensor asks for executes, with its defaults filled in.',
);

export const SensorView = component(
  'Sensor',
  z.strictObject({
    id: z.uuid(),
    name: z.string(),
    every: Duration,
    target: HandlerTarget.describe('The handler that evaluates the sensor.'),
    timeout: Duration.describe('Of one evaluation.'),
    run: SensorRun,
    payload: JsonValueShape,
    paused: z.boolean(),
    labels: Labels,
    cursor: JsonValueShape.describe('Where the last committed evaluation left off; the next one starts from it.'),
    cursorVersion: z.int().min(0).describe('Rises with every commit, cursor move and reset.'),
    nextEvaluationAt: Instant.nullable().describe('When the next evaluation is due; null while paused.'),
    evaluating: z.boolean().describe('True while an evaluation is under way.'),
    lastTick: SensorTick.nullable().describe('The newest evaluation; null before the first.'),
    source: z.string().nullable().describe('The apply source that declares the sensor; null when made through the API.'),
    createdAt: Instant,
    updatedAt: Instant,
  }),
  'A sensor: its definition with defaults filled in, its cursor, and its newest evaluation.',
);
export const SensorPage = component('SensorPage', page(SensorView, 'A page of sensors, newest first.'));
