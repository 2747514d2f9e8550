/**
 * The wire shapes of events, declared once: an event's body (POST /v1/events and its batch), a
 * schedule's `on` (the events that start it), and the views REST and GraphQL answer with.
 */
import { z } from 'zod';
import { MAX_PAYLOAD_BYTES } from '../closed-sets.js';
import { ValidationError } from '../errors.js';
import { readPayload } from '../json-readers.js';
import { DEFAULT_CATCHUP } from '../schedule-spec.js';
import { MAX_BATCH_SIZE, MAX_FLOW_LIMIT, MAX_FLOW_PERIOD_MS, type FlowControl } from '../flow-control.js';
import { keyTemplatePaths, MAX_CONCURRENCY_KEY_LENGTH } from '../concurrency.js';
import { checkedBy, closedObject, integer, present, text, worded } from './read.js';
import { component, page } from './registry.js';
import { durationMs, Duration, Instant, JsonValue, ReasonCodeSchema } from './shared.js';

/** An event's name: letters, digits, ".", "_", ":" and "-", 1 to 128 of them. */
export const EVENT_NAME_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/;
export const EVENT_NAME_HINT = 'must be 1 to 128 letters, digits, ".", "_", ":" or "-" (no spaces), e.g. "order.paid"';
export const MAX_EVENT_ID_LENGTH = 200;
/** How many entries a schedule's or a wait's `match` may have. */
export const MAX_MATCH_ENTRIES = 32;
/** A match path: dotted names into the event, from one of its fields (`data.plan`, `name`, `id`). */
const MATCH_PATH = /^(data|name|id)(\.[^.\s]+)*$/;

export const EventName = text(128).regex(EVENT_NAME_PATTERN, worded((field) => `${field} ${EVENT_NAME_HINT}`));

/** `match`: every entry must equal (as JSON) the event's value at its dotted path. */
export const EventMatch = z
  .record(z.string(), JsonValue)
  .check(
    checkedBy((value, field) => {
      const entries = Object.keys(value as Record<string, unknown>);
      if (entries.length > MAX_MATCH_ENTRIES) throw new ValidationError('VALIDATION_FAILED', field, `${field} has ${entries.length} entries; at most ${MAX_MATCH_ENTRIES}`);
      for (const path of entries) {
        if (!MATCH_PATH.test(path)) {
          throw new ValidationError(
            'VALIDATION_FAILED',
            `${field}.${path}`,
            `${field} path "${path}" must be a dotted path into the event starting at data, name or id, e.g. "data.orderId"`,
          );
        }
      }
    }),
  )
  .meta({ examples: [{ 'data.plan': 'pro' }] })
  .describe('Dotted paths into the event (`data.plan`) and the JSON value each must equal; a path the event lacks never matches. Empty or absent: every event of the name.');

export const EventTrigger = component(
  'EventTrigger',
  closedObject({
    event: present(EventName, (field) => `${field} is required: the name of the event that starts the schedule, e.g. "order.paid"`).describe('The event name.'),
    match: EventMatch.nullable().optional(),
  }),
  "Starts the schedule's run for each event of that name whose values match, in the transaction that stores the event; instead of cron, every, at or in.",
);

/**
 * A schedule started by events has no slots: fields that bound or move slots are refused rather
 * than silently ignored, and its payload is an object so the event can join it.
 */
export function checkEventSchedule(read: {
  calendar?: unknown;
  expect?: unknown;
  startAt?: unknown;
  endAt?: unknown;
  maxRuns?: unknown;
  catchup?: unknown;
  jitter?: unknown;
  payload?: unknown;
}): void {
  // The catch-up policy's default is what the stored definition shows, so a PATCH or a re-apply of it passes.
  const catchup = read.catchup as { mode: string; windowMs: number | null; limit: number | null } | null | undefined;
  const catchupSet = catchup != null && (catchup.mode !== DEFAULT_CATCHUP.mode || catchup.windowMs !== null || catchup.limit !== null);
  for (const field of ['calendar', 'expect', 'startAt', 'endAt', 'maxRuns', 'catchup'] as const) {
    if (field === 'catchup' ? catchupSet : read[field] != null) {
      throw new ValidationError('CONFLICTING_FIELDS', field, `a schedule started by events ("on") has no slots, so ${field} does not apply; remove it`);
    }
  }
  if (read.jitter != null && read.jitter !== 0) throw new ValidationError('CONFLICTING_FIELDS', 'jitter', 'a schedule started by events ("on") has no slots to jitter; remove jitter');
  if (read.payload != null && (typeof read.payload !== 'object' || Array.isArray(read.payload))) {
    throw new ValidationError('VALIDATION_FAILED', 'payload', 'the payload of a schedule started by events must be a JSON object: each run gets it with the event added under "event"');
  }
}

export const EventTriggerView = component(
  'EventTriggerView',
  z.strictObject({ event: z.string(), match: z.record(z.string(), JsonValue) }),
  'The events that start a schedule: their name, and the values they must match (empty: every event of the name).',
);

// ---- Flow control ----

const flowKey = text(MAX_CONCURRENCY_KEY_LENGTH)
  .check(checkedBy((value, field) => keyTemplatePaths(value as string, field)))
  .nullable()
  .optional()
  .meta({ examples: ['account-{{event.data.accountId}}'] })
  .describe('A template over the event (`{{event.data.x}}`) or the payload (`{{payload.x}}`); absent: one key for the schedule.');
const period = (what: string) =>
  present(durationMs({ minMs: 1, maxMs: MAX_FLOW_PERIOD_MS }), (field) => `${field} is required: ${what}, e.g. "30s"`).describe(`${what}; at most 7d.`);
const limit = present(integer(1, MAX_FLOW_LIMIT), (field) => `${field} is required: how many runs per key and period, e.g. 10`);

export const DebounceInput = component(
  'Debounce',
  closedObject({
    key: flowKey,
    period: period('how long without a new event before the run starts'),
    maxWait: durationMs({ minMs: 1, maxMs: MAX_FLOW_PERIOD_MS }).nullable().optional().describe('The run starts at most this long after the first event of the burst, new events or not. Absent: no bound.'),
  }),
  "One run per key once `period` passed without a new matching event, with the last event (the run's payload carries it under `event`); `maxWait` bounds the delay from the first event.",
);
export const ThrottleInput = component(
  'Throttle',
  closedObject({ key: flowKey, limit, period: period('the window') }),
  'Every event gets its run, but at most `limit` runs per key start in any window of `period`: the others wait queued (deferReason THROTTLED), in order, and start when the window allows.',
);
export const RateLimitInput = component(
  'RateLimit',
  closedObject({ key: flowKey, limit, period: period('the window') }),
  "At most `limit` runs per key are made in any window of `period`: a further event makes none for the schedule, and its view lists the schedule under `skipped` with RATE_LIMITED.",
);
export const BatchInput = component(
  'Batch',
  closedObject({
    key: flowKey,
    maxSize: present(integer(1, MAX_BATCH_SIZE), (field) => `${field} is required: how many events a run gathers at most, 1 to ${MAX_BATCH_SIZE}`),
    timeout: period('how long after the first event of a batch its run starts, full or not'),
  }),
  "Matching events are gathered per key into one run when `maxSize` are in, or `timeout` after the first; the run's payload lists them under `events`, in order; each event belongs to exactly one run.",
);

/** The flow controls a body declared, read; absent ones null. */
export function flowControlOf(read: {
  debounce?: { key?: string | null; period?: number; maxWait?: number | null } | null;
  throttle?: { key?: string | null; limit?: number; period?: number } | null;
  rateLimit?: { key?: string | null; limit?: number; period?: number } | null;
  batch?: { key?: string | null; maxSize?: number; timeout?: number } | null;
}): FlowControl | null {
  // Each field was checked present by its reader.
  const { debounce, throttle, rateLimit, batch } = read;
  if (!debounce && !throttle && !rateLimit && !batch) return null;
  if (debounce && batch) throw new ValidationError('CONFLICTING_FIELDS', 'batch', 'debounce and batch both gather events into one run; give one of them');
  if (throttle && (debounce || batch)) {
    throw new ValidationError('CONFLICTING_FIELDS', 'throttle', `${debounce ? 'debounce' : 'batch'} already decides when its run starts; throttle goes with a schedule whose every event makes its run`);
  }
  return {
    debounce: debounce ? { key: debounce.key ?? null, periodMs: debounce.period!, maxWaitMs: debounce.maxWait ?? null } : null,
    throttle: throttle ? { key: throttle.key ?? null, limit: throttle.limit!, periodMs: throttle.period! } : null,
    rateLimit: rateLimit ? { key: rateLimit.key ?? null, limit: rateLimit.limit!, periodMs: rateLimit.period! } : null,
    batch: batch ? { key: batch.key ?? null, maxSize: batch.maxSize!, timeoutMs: batch.timeout! } : null,
  };
}

/** A clock schedule has no events to control: refused rather than ignored. */
export function checkNoFlowControl(read: Record<string, unknown>): void {
  for (const field of ['debounce', 'throttle', 'rateLimit', 'batch']) {
    if (read[field] != null) throw new ValidationError('CONFLICTING_FIELDS', field, `${field} controls the runs events start; only a schedule with "on" takes it`);
  }
}

const keyView = z.string().nullable();
export const FlowControlView = {
  debounce: z.strictObject({ key: keyView, period: Duration, maxWait: Duration.nullable() }).nullable(),
  throttle: z.strictObject({ key: keyView, limit: z.int(), period: Duration }).nullable(),
  rateLimit: z.strictObject({ key: keyView, limit: z.int(), period: Duration }).nullable(),
  batch: z.strictObject({ key: keyView, maxSize: z.int(), timeout: Duration }).nullable(),
};

// ---- Requests ----

export const EventCreate = component(
  'EventCreate',
  closedObject({
    name: present(EventName, (field) => `${field} is required: the event's name, e.g. "order.paid"`).describe('The event name; schedules with `on.event` equal to it start.'),
    data: JsonValue.check(checkedBy((value, field) => readPayload({ [field]: value }, field, '')))
      .optional()
      .describe(`Any JSON value; at most ${MAX_PAYLOAD_BYTES} bytes serialized (PAYLOAD_TOO_LARGE otherwise). Default: null.`),
    id: text(MAX_EVENT_ID_LENGTH)
      .nullable()
      .optional()
      .describe('The producer\'s id for the event: a repeat within the retention window answers the first event with `deduped: true` and starts nothing. Default: a new id.'),
  }),
  'An event an application emits (POST /v1/events). Unknown fields are refused (UNKNOWN_FIELD).',
);

export interface EventRequest {
  name: string;
  data: unknown;
  id: string | null;
}

// ---- Responses ----

export const EventSkip = component(
  'EventSkip',
  z.strictObject({ scheduleId: z.string(), reasonCode: ReasonCodeSchema }),
  'A schedule the event matched that made no run for it, and why: SCHEDULE_PAUSED, OVERLAP_SKIPPED, RATE_LIMITED, FLOW_KEY_UNRESOLVED or CONCURRENCY_KEY_UNRESOLVED.',
);

export const EventView = component(
  'Event',
  z.strictObject({
    id: z.string(),
    name: z.string(),
    data: JsonValue.describe('As sent.'),
    receivedAt: Instant,
    deduped: z.boolean().describe('True when the id was seen before: this is the first event with it, and nothing ran again.'),
    runs: z.array(z.string()).describe('The runs it started, one per matching schedule.'),
    skipped: z.array(EventSkip),
    resumed: z.array(z.string()).describe('The runs waiting for it (ctx.waitForEvent) that it resumed.'),
  }),
  'An event, with the runs it started.',
);
export const EventPage = component('EventPage', page(EventView, 'A page of events, newest first.'));
