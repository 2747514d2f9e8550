/**
 * The wire shapes requests and responses share: the closed sets, instants, durations, labels,
 * targets and policies. Every closed set and limit is read from the domain, so a new run state or
 * error code reaches the wire without an edit here. What JSON Schema cannot say (cron syntax,
 * zone names, DST rules, the size of a payload) stays with the domain's readers.
 */
import { z } from 'zod';
import {
  ATTEMPT_OUTCOMES,
  BACKOFF_TYPES,
  CATCHUP_MODES,
  CHECKPOINT_KINDS,
  CHECKPOINT_STATES,
  HTTP_METHODS,
  OVERLAP_POLICIES,
  RUN_EVENT_KINDS,
  RUN_ORIGINS,
  RUN_STATES,
  SCHEDULE_STATUSES,
  TICK_ORIGINS,
  TICK_OUTCOMES,
} from '../closed-sets.js';
import { ERROR_CODES, ValidationError } from '../errors.js';
import { DEFAULT_QUEUE, HANDLER_NAME_PATTERN, HANDLER_NAMES, QUEUE_NAME_PATTERN } from '../handlers.js';
import { REASON_CODES, type ReasonCode } from '../reason-codes.js';
import {
  checkTargetShape,
  checkWebhookUrl,
  DEFAULT_HTTP_TIMEOUT_MS,
  DEFAULT_RETRY_POLICY,
  MAX_ATTEMPTS_LIMIT,
  MAX_BACKOFF_MS,
  MAX_RUN_TIMEOUT_MS,
  readHeaders,
  type CallTarget as DomainCallTarget,
  type RetryPolicy as DomainRetryPolicy,
} from '../run-policy.js';
import { keyTemplatePaths, MAX_CONCURRENCY_KEY_LENGTH, MAX_CONCURRENCY_LIMIT, type ConcurrencySpec } from '../concurrency.js';
import { DEFAULT_FAIRNESS_WEIGHT, DEFAULT_PRIORITY, MAX_FAIRNESS_WEIGHT, MAX_PRIORITY, MIN_PRIORITY, type FairnessSpec } from '../priority.js';
import { checkStepGraph, MAX_STEPS, STEP_NAME_HINT, STEP_NAME_PATTERN, STEP_STATES, STEP_WHENS, type StepSpec, type StepsTarget } from '../steps.js';
import { DEFAULT_CATCHUP, MAX_CATCHUP_LIMIT, type CatchupPolicy as DomainCatchupPolicy } from '../schedule-spec.js';
import { DEFAULT_DST_POLICY, DST_GAP_POLICIES, DST_OVERLAP_POLICIES, formatDuration, type DstPolicy as DomainDstPolicy } from '../time/index.js';
import { join, parseInstant, readDuration } from '../json-readers.js';
import { checkedBy, closedObject, integer, number, present, screenedBy, text, worded } from './read.js';
import { component, defaulted } from './registry.js';

// ---- Closed sets ----

export const ErrorCode = component('ErrorCode', z.enum([...ERROR_CODES, 'INTERNAL']), 'A stable, machine-readable error code. INTERNAL is an unexpected failure (500).');
export const ReasonCodeSchema = component(
  'ReasonCode',
  z.enum(Object.keys(REASON_CODES) as [ReasonCode, ...ReasonCode[]]),
  'The one closed catalogue of reasons carried by terminal runs, ticks and run events.',
);
export const RunState = component('RunState', z.enum(RUN_STATES), 'queued, running, sleeping and waiting (a durable function parked by ctx.sleep or ctx.waitForSignal) are active; the rest are terminal.');
export const CheckpointKind = component('CheckpointKind', z.enum(CHECKPOINT_KINDS), 'ctx.step, ctx.sleep, ctx.waitForSignal or ctx.waitForEvent.');
export const CheckpointState = component('CheckpointState', z.enum(CHECKPOINT_STATES), 'step: succeeded; sleep: sleeping, then woken; signal: waiting, then received or timed_out.');
export const RunOrigin = component('RunOrigin', z.enum(RUN_ORIGINS), 'What created the run.');
export const RunEventKind = component('RunEventKind', z.enum(RUN_EVENT_KINDS), 'What a run event records.');
export const ScheduleStatus = component('ScheduleStatus', z.enum(SCHEDULE_STATUSES), 'deleted schedules are never returned.');
export const TickOutcome = component('TickOutcome', z.enum(TICK_OUTCOMES), 'What became of an evaluated slot.');
export const TickOrigin = component('TickOrigin', z.enum(TICK_ORIGINS), 'Who evaluated the slot: the scheduler or a backfill request.');
export const OverlapPolicy = component('OverlapPolicy', z.enum(OVERLAP_POLICIES), 'What to do when a slot comes due while an earlier run of the schedule is still active.');
export const CatchupMode = component('CatchupMode', z.enum(CATCHUP_MODES), 'none skips missed slots, latest fires the most recent once, all fires every one.');
export const BackoffType = component('BackoffType', z.enum(BACKOFF_TYPES), 'How the delay between attempts grows.');
export const HttpMethod = component('HttpMethod', z.enum(HTTP_METHODS), 'The method of an HTTP target.');
export const HandlerName = component(
  'HandlerName',
  text(200).regex(HANDLER_NAME_PATTERN, worded((field) => `${field} must be 1 to 128 letters, digits, "_", "." or "-"`)),
  `A handler's name: built in (${HANDLER_NAMES.join(', ')}, on the default queue) or registered by a worker on the target's queue; any other name is refused with UNKNOWN_HANDLER.`,
);
export const DstGapPolicy = component(
  'DstGapPolicy',
  z.enum(DST_GAP_POLICIES),
  'shift fires a nonexistent wall time at the instant it names with the pre-transition offset; skip drops it; auto (the default) is skip when the minute or hour field starts with *, else shift.',
);
export const DstOverlapPolicy = component(
  'DstOverlapPolicy',
  z.enum(DST_OVERLAP_POLICIES),
  'Which occurrence of a repeated wall time fires; auto (the default) is both when the minute or hour field starts with *, else first.',
);
export const AttemptOutcome = component('AttemptOutcome', z.enum(ATTEMPT_OUTCOMES), 'How one execution attempt ended.');

// ---- Scalars ----

export const Duration = component(
  'Duration',
  z
    .string()
    .min(2)
    .regex(/^(\d+d)?(\d+h)?(\d+m)?(\d+s)?(\d+ms)?$/)
    .meta({ examples: ['1m30s', '5m', '1h'] }),
  'A duration as Kairos writes it: units d, h, m, s, ms from largest to smallest ("90s" is written "1m30s").',
);
// Like an instant, any value reaches the domain's duration reader, which owns the units and the
// range; the document says what it accepts.
export const DurationInput = component(
  'DurationInput',
  z
    .unknown()
    .check(checkedBy((value, field) => readDuration({ [field]: value }, field, '')))
    .meta({
      oneOf: [
        { type: 'string', minLength: 2, pattern: '^\\s*(\\d+d)?(\\d+h)?(\\d+m)?(\\d+s)?(\\d+ms)?\\s*$' },
        { type: 'integer', minimum: 0 },
      ],
      examples: ['90s', '15m', '1h30m', 60000],
    }),
  'A duration: whole numbers with units d, h, m, s, ms from largest to smallest ("90s", "15m", "1h30m", "500ms"), or integer milliseconds. At most 100 years.',
);

/** A duration within `bounds`, read as milliseconds; absent or null stays undefined for the default. */
export function durationMs(bounds: { minMs?: number; maxMs?: number }) {
  const read = (value: unknown, field: string) => readDuration({ [field]: value }, field, '', bounds);
  return DurationInput.check(checkedBy(read)).transform((value) => read(value, ''));
}
export const Instant = component(
  'Instant',
  z.string().meta({ format: 'date-time', examples: ['2026-12-01T01:30:00Z'] }),
  'An instant in UTC, ISO 8601 with Z; milliseconds only when there are some.',
);
// Any value reaches the domain's instant reader (which owns the calendar and the year range), so
// a number is refused as an instant is, not as a non-string; the document says what it accepts.
export const InstantInput = component(
  'InstantInput',
  z
    .unknown()
    .check(checkedBy(parseInstant))
    .meta({ type: 'string', format: 'date-time', examples: ['2026-12-01T09:00:00Z'] }),
  'An ISO 8601 instant with an offset ("Z" or "+02:00"); a local time without one is refused as ambiguous.',
);
/** An instant field (InstantInput, possibly described) read as epoch milliseconds. */
export const instantMs = (instant: typeof InstantInput) => instant.transform((value) => parseInstant(value, ''));
export const JsonValue = component('JsonValue', z.json(), 'Any JSON value, null included.', [{ any: 'json' }]);
export const Labels = component(
  'Labels',
  z.record(z.string(), z.string().max(256)).meta({ maxProperties: 64, examples: [{ team: 'billing' }] }),
  'Free-form string labels; filter schedules with `?label=key:value`.',
);

// ---- Targets ----

/** No CR, LF or NUL: a header value cannot end its line or the header block early. */
// eslint-disable-next-line no-control-regex -- NUL is one of the characters refused
const HEADER_VALUE = /^[^\r\n\u0000]*$/;

export const HandlerTargetInput = component(
  'HandlerTargetInput',
  closedObject({
    type: z.literal('handler'),
    name: present(HandlerName, (field) => `${field} is required for a handler target`),
    queue: defaulted(
      text(200)
        .regex(QUEUE_NAME_PATTERN, worded((field) => `${field} must be 1 to 64 letters, digits, "_", "." or "-" (default "${DEFAULT_QUEUE}")`))
        .nullable(),
      DEFAULT_QUEUE,
      'The queue whose workers run the handler.',
    ),
  }),
  'A handler registered by a worker on a queue.',
);
export const HandlerTarget = component(
  'HandlerTarget',
  z.strictObject({ type: z.literal('handler'), name: HandlerName, queue: z.string().regex(QUEUE_NAME_PATTERN) }),
  'A handler registered by a worker on a queue, with its queue filled in.',
);
export const HttpTarget = component(
  'HttpTarget',
  z.strictObject({
    type: z.literal('http'),
    url: z.url(),
    method: HttpMethod,
    headers: z.record(z.string(), z.string()),
    timeout: Duration,
  }),
  'An HTTP webhook, with its defaults filled in.',
);
export const HttpTargetInput = component(
  'HttpTargetInput',
  closedObject({
    type: z.literal('http'),
    url: present(
      text(2048)
        .check(checkedBy((value, field) => checkWebhookUrl(value as string, field)))
        .meta({ format: 'uri' })
        .describe('http or https, without credentials (send those in headers).'),
      (field) => `${field} is required for an http target`,
    ),
    method: defaulted(HttpMethod.nullable(), 'POST'),
    // The domain reads the map first, as a whole, so its faults come in the order it finds them.
    headers: screenedBy(
      readHeaders,
      z
        .record(z.string().regex(/^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/), z.string().max(4096).regex(HEADER_VALUE))
        .meta({ maxProperties: 50 })
        .describe(
          'Sent with every request. Names are RFC 9110 tokens; values hold no CR, LF or NUL. Host, Content-Length, Transfer-Encoding, Connection, Upgrade, TE, Trailer, Keep-Alive, Proxy-* and the Kairos-Signature and Idempotency-Key that Kairos sets are refused (INVALID_TARGET).',
        )
        .nullable(),
    ).optional(),
    timeout: defaulted(durationMs({ minMs: 1, maxMs: MAX_RUN_TIMEOUT_MS }), formatDuration(DEFAULT_HTTP_TIMEOUT_MS)),
  }),
  'An HTTP webhook. The body carries run id, schedule id, slot, attempt and payload; the request is signed (HMAC-SHA256).',
);
export const Target = component('Target', z.xor([HandlerTarget, HttpTarget]), 'What a run executes.');
export const TargetInput = component(
  'TargetInput',
  screenedBy(
    checkTargetShape,
    z
      .discriminatedUnion('type', [HandlerTargetInput, HttpTargetInput])
      .transform(
        (target): DomainCallTarget =>
          target.type === 'handler'
            ? { type: 'handler', name: target.name, queue: target.queue ?? DEFAULT_QUEUE }
            : { type: 'http', url: target.url, method: target.method ?? 'POST', headers: target.headers ?? {}, timeoutMs: target.timeout ?? DEFAULT_HTTP_TIMEOUT_MS },
      ),
  ),
  'What a run executes: { "type": "handler", "name": "echo" } or { "type": "http", "url": "https://..." }.',
);

// ---- Retry policy ----

export const RetryPolicy = component(
  'RetryPolicy',
  z.strictObject({
    maxAttempts: z.int().min(1),
    backoff: z.strictObject({ type: BackoffType, base: Duration, max: Duration, jitter: z.number().min(0).max(1) }),
  }),
  'How failed attempts are retried, with defaults filled in.',
);
export const RetryPolicyInput = component(
  'RetryPolicyInput',
  closedObject({
    maxAttempts: defaulted(integer(1, MAX_ATTEMPTS_LIMIT).nullable(), DEFAULT_RETRY_POLICY.maxAttempts),
    backoff: closedObject({
      type: defaulted(BackoffType.nullable(), DEFAULT_RETRY_POLICY.backoff.type),
      base: defaulted(durationMs({ maxMs: MAX_RUN_TIMEOUT_MS }), formatDuration(DEFAULT_RETRY_POLICY.backoff.baseMs), 'At most 24h.'),
      max: defaulted(durationMs({ maxMs: MAX_BACKOFF_MS }), formatDuration(DEFAULT_RETRY_POLICY.backoff.maxMs), 'At least `base`, at most 7d.'),
      jitter: defaulted(number(0, 1).nullable(), DEFAULT_RETRY_POLICY.backoff.jitter, 'Fraction of each delay randomised away.'),
    })
      .check(
        checkedBy((value, field) => {
          const { base, max } = value as { base?: number; max?: number };
          if (base !== undefined && max !== undefined && max < base) {
            throw new ValidationError('VALIDATION_FAILED', join(field, 'max'), `${field}.max must be at least ${field}.base`);
          }
        }),
      )
      .nullable()
      .optional(),
  }).transform(({ maxAttempts, backoff }): DomainRetryPolicy => {
    const defaults = DEFAULT_RETRY_POLICY.backoff;
    const baseMs = backoff?.base ?? defaults.baseMs;
    return {
      maxAttempts: maxAttempts ?? DEFAULT_RETRY_POLICY.maxAttempts,
      backoff: {
        type: backoff?.type ?? defaults.type,
        baseMs,
        // Without an explicit max, a base above the default cap raises the cap to the base.
        maxMs: backoff?.max ?? Math.max(defaults.maxMs, baseMs),
        jitter: backoff?.jitter ?? defaults.jitter,
      },
    };
  }),
  'How failed attempts are retried. Absent or null: the defaults.',
);

/** A retry policy field: absent or null is the default policy. */
export const retryPolicy = () => RetryPolicyInput.nullable().optional().transform((retry) => retry ?? DEFAULT_RETRY_POLICY);

// ---- Concurrency ----

export const Concurrency = component(
  'Concurrency',
  z.strictObject({ key: z.string(), limit: z.int().min(1) }),
  'At most `limit` runs holding the same key run at once in the namespace. On a schedule, sensor or step the key is the template as declared; on a run it is resolved from the payload.',
);
export const ConcurrencyInput = component(
  'ConcurrencyInput',
  closedObject({
    key: present(
      text(MAX_CONCURRENCY_KEY_LENGTH)
        .min(1, worded((field) => `${field} must not be empty`))
        .check(checkedBy((value, field) => keyTemplatePaths(value as string, field))),
      (field) => `${field} is required: the key runs share, e.g. "customer-{{payload.customerId}}"`,
    )
      .meta({ examples: ['customer-{{payload.customerId}}'] })
      .describe('Literal text and {{payload}} or {{payload.<field>.<field>}} placeholders, resolved from each run\'s payload when the run is created.'),
    limit: defaulted(integer(1, MAX_CONCURRENCY_LIMIT).nullable(), 1, 'How many runs holding one key may run at once.'),
  }).transform(({ key, limit }): ConcurrencySpec => ({ key, limit: limit ?? 1 })),
  'A concurrency key and its limit. A run held back by it stays queued with deferReason CONCURRENCY_LIMIT and starts, oldest first, as soon as a place frees.',
);

// ---- Priority and fair share ----

export const PriorityInput = defaulted(
  integer(MIN_PRIORITY, MAX_PRIORITY).nullable(),
  DEFAULT_PRIORITY,
  'Among the due runs of a queue, the next start goes to the best priority: 1 starts first, 5 last.',
);

export const Fairness = component(
  'Fairness',
  z.strictObject({ key: z.string(), weight: z.int().min(1).max(MAX_FAIRNESS_WEIGHT) }),
  'The key whose turns the runs take (on a schedule, sensor or step the template as declared) and its weight.',
);
export const FairnessInput = component(
  'FairnessInput',
  closedObject({
    key: present(
      text(MAX_CONCURRENCY_KEY_LENGTH)
        .min(1, worded((field) => `${field} must not be empty`))
        .check(checkedBy((value, field) => keyTemplatePaths(value as string, field))),
      (field) => `${field} is required: the key whose runs share starts, e.g. "tenant-{{payload.tenantId}}"`,
    )
      .meta({ examples: ['tenant-{{payload.tenantId}}'] })
      .describe("Literal text and {{payload}} or {{payload.<field>.<field>}} placeholders, resolved from each run's payload when the run is created."),
    weight: defaulted(integer(1, MAX_FAIRNESS_WEIGHT).nullable(), DEFAULT_FAIRNESS_WEIGHT, `The key's share of starts against the other keys with runs due, 1 to ${MAX_FAIRNESS_WEIGHT}.`),
  }).transform(({ key, weight }): FairnessSpec => ({ key, weight: weight ?? DEFAULT_FAIRNESS_WEIGHT })),
  'A fairness key and its weight. Within a priority, the keys with runs due on a queue take starts in proportion to their weights (runs without a key share one key); within a key, the oldest due starts first. A run waiting for its key\'s turn stays queued with deferReason FAIR_SHARE.',
);

// ---- Steps ----

export const StepWhen = component('StepWhen', z.enum(STEP_WHENS), 'on_success: the step runs once every upstream step succeeded, and is skipped (UPSTREAM_FAILED) otherwise. always: it runs once every upstream step ended, whatever the outcome (cleanup, notify).');
export const StepState = component(
  'StepState',
  z.enum(STEP_STATES),
  'waiting: an upstream step has not ended; failed: an attempt failed and another will follow; skipped: it never became runnable (an upstream step it needed did not succeed, or the run was cancelled first).',
);

const stepTimeout = durationMs({ minMs: 1, maxMs: MAX_RUN_TIMEOUT_MS });

export const StepInput = component(
  'StepInput',
  closedObject({
    name: present(
      text(64).regex(STEP_NAME_PATTERN, worded((field) => `${field} ${STEP_NAME_HINT}`)),
      (field) => `${field} is required: the step's name, unique in the run (1 to 64 of a-z, 0-9, "_", "-")`,
    ).describe('Unique in the run; 1 to 64 of a-z, 0-9, "_" and "-".'),
    dependsOn: z
      .array(z.string(), worded((field) => `${field} must be an array of step names`))
      .max(MAX_STEPS - 1, worded((field) => `${field} names at most ${MAX_STEPS - 1} steps`))
      .nullable()
      .optional()
      .describe('The steps of the same list that must end before this one starts. Default: none (the step starts with the run).'),
    when: defaulted(StepWhen.nullable(), 'on_success'),
    target: TargetInput,
    retry: RetryPolicyInput.nullable().optional().describe("This step's retry policy. Default: the run's (the schedule's)."),
    timeout: stepTimeout.nullable().optional().describe("Of each attempt of this step; at most 24h. Default: the run's (the schedule's)."),
    concurrency: ConcurrencyInput.nullable().optional().describe("This step's concurrency key over the run's payload. Default: none."),
    priority: integer(MIN_PRIORITY, MAX_PRIORITY).nullable().optional().describe("This step's priority, 1 (first) to 5. Default: the run's."),
    fairness: FairnessInput.nullable().optional().describe("This step's fairness key over the run's payload. Default: the run's."),
  }).transform(
    (step): StepSpec => ({
      name: step.name,
      dependsOn: step.dependsOn ?? [],
      when: step.when ?? 'on_success',
      target: step.target,
      retry: step.retry ?? null,
      timeoutMs: step.timeout ?? null,
      ...(step.concurrency ? { concurrency: step.concurrency } : {}),
      ...(step.priority ? { priority: step.priority } : {}),
      ...(step.fairness ? { fairness: step.fairness } : {}),
    }),
  ),
  'One step of a multi-step run.',
);

export const StepsInput = component(
  'StepsInput',
  z
    .array(StepInput, worded((field) => `${field} must be an array of steps`))
    .min(1, worded((field) => `${field} must hold at least one step`))
    .max(MAX_STEPS, worded((field) => `${field} holds at most ${MAX_STEPS} steps; split the job`))
    .check(checkedBy((value, field) => checkStepGraph(value as StepSpec[], field)))
    .transform((steps): StepsTarget => ({ type: 'steps', steps })),
  `The steps of a multi-step run, instead of a target: 1 to ${MAX_STEPS}, names unique, every dependsOn naming another step of the list, no cycle. Steps without a path between them run in parallel.`,
);

export const Step = component(
  'Step',
  z.strictObject({
    name: z.string(),
    dependsOn: z.array(z.string()),
    when: StepWhen,
    target: Target,
    retry: RetryPolicy.nullable().describe("Null: the run's (the schedule's)."),
    timeout: Duration.nullable().describe("Null: the run's (the schedule's)."),
    concurrency: Concurrency.nullable().describe('Null: none.'),
    priority: z.int().min(MIN_PRIORITY).max(MAX_PRIORITY).nullable().describe("Null: the run's."),
    fairness: Fairness.nullable().describe("Null: the run's."),
  }),
  'One step of a multi-step definition, with its defaults filled in.',
);

// ---- DST and catch-up policies ----

export const DstPolicy = component(
  'DstPolicy',
  z.strictObject({
    gap: DstGapPolicy,
    overlap: DstOverlapPolicy,
    resolved: z
      .strictObject({
        gap: z.enum(DST_GAP_POLICIES).exclude(['auto']),
        overlap: z.enum(DST_OVERLAP_POLICIES).exclude(['auto']),
      })
      .nullable()
      .describe('The policy fire instants are computed with, auto decided for the cron expression; null for every and at, which DST does not touch.'),
    description: z.string().describe('What the policy means for the expression, e.g. "gap auto (skip), overlap auto (both): ...".'),
  }),
  'The DST policy as declared (auto stays auto) and what it resolves to.',
);
export const DstPolicyInput = component(
  'DstPolicyInput',
  closedObject({
    gap: defaulted(DstGapPolicy.nullable(), DEFAULT_DST_POLICY.gap),
    overlap: defaulted(DstOverlapPolicy.nullable(), DEFAULT_DST_POLICY.overlap),
  }).transform(({ gap, overlap }): DomainDstPolicy => ({ gap: gap ?? DEFAULT_DST_POLICY.gap, overlap: overlap ?? DEFAULT_DST_POLICY.overlap })),
  "How cron wall times that do not exist (gap) or occur twice (overlap) on DST change days fire. Default auto: Vixie cron's rule, decided by the expression.",
);
export const CatchupPolicy = component(
  'CatchupPolicy',
  z.strictObject({ mode: CatchupMode, window: Duration.nullable(), limit: z.int().min(1).nullable() }),
);
export const CatchupPolicyInput = component(
  'CatchupPolicyInput',
  closedObject({
    mode: defaulted(CatchupMode.nullable(), DEFAULT_CATCHUP.mode),
    window: durationMs({ minMs: 1 })
      .nullable()
      .optional()
      .describe('Missed slots older than this are recorded as missed, not fired. Absent or null: no window.'),
    limit: integer(1, MAX_CATCHUP_LIMIT).nullable().optional().describe('At most this many missed slots fire (the newest). Absent or null: no limit.'),
  }).transform(
    ({ mode, window, limit }): DomainCatchupPolicy => ({ mode: mode ?? DEFAULT_CATCHUP.mode, windowMs: window ?? null, limit: limit ?? null }),
  ),
  'What to fire for slots that passed while the scheduler was down or the schedule was paused.',
);
