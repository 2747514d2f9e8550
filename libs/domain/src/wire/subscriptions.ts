/**
 * The wire shapes of subscriptions, declared once: their bodies (create, patch), what reads them,
 * and the views REST and GraphQL answer with (a subscription, its deliveries, a test). A
 * subscription is a webhook told of the namespace's events that match its filter, signed like the
 * deliveries of HTTP targets.
 */
import { z } from 'zod';
import {
  DELIVERY_STATES,
  DOMAIN_EVENT_TOPICS,
  SUBSCRIPTION_EVENT_TYPES,
  SUBSCRIPTION_EVENTS,
  SUBSCRIPTION_FORMATS,
  SUBSCRIPTION_STATES,
  type SubscriptionEvent,
  type SubscriptionFormat,
} from '../closed-sets.js';
import { ValidationError } from '../errors.js';
import { readStringMap } from '../json-readers.js';
import { checkWebhookUrl } from '../run-policy.js';
import { LABEL_LIMITS } from '../schedule-spec.js';
import { checkedBy, closedObject, present, readWire, screenedBy, text, worded } from './read.js';
import { component, defaulted, page } from './registry.js';
import { Instant, Labels } from './shared.js';

/** The most schedules one subscription's filter may name. */
export const MAX_SUBSCRIPTION_SCHEDULES = 100;
/** The longest description. */
export const MAX_SUBSCRIPTION_DESCRIPTION = 500;

/** A subscription's definition, with its defaults filled in. */
export interface SubscriptionSpec {
  url: string;
  events: SubscriptionEvent[];
  scheduleIds: string[];
  labels: Record<string, string>;
  format: SubscriptionFormat;
  description: string | null;
}

// ---- Fields ----

/** A webhook URL, refused as a subscription's (VALIDATION_FAILED on `url`), not as a target's. */
function checkSubscriptionUrl(value: unknown, field: string): void {
  try {
    checkWebhookUrl(value as string, field);
  } catch (error) {
    if (!(error instanceof ValidationError)) throw error;
    throw new ValidationError('VALIDATION_FAILED', field, error.message.replace(/headers instead$/, 'the URL path or query instead'));
  }
}

const url = present(
  text(2048)
    .check(checkedBy(checkSubscriptionUrl))
    .meta({ format: 'uri' })
    .describe('Where deliveries are POSTed: http or https, without credentials. Private, loopback and link-local addresses are refused unless KAIROS_HTTP_ALLOWLIST names them, as for HTTP targets.'),
  (field) => `${field} is required: the webhook the events are POSTed to, e.g. "https://hooks.example.com/kairos"`,
);

const eventName = z.enum(SUBSCRIPTION_EVENT_TYPES, worded((field) => `${field} must be one of ${SUBSCRIPTION_EVENT_TYPES.join(', ')}`));

const events = present(
  z
    .array(eventName, worded((field) => `${field} must be an array of event types, e.g. ["run.dead", "schedule.late"]`))
    .min(1, worded((field) => `${field} must name at least one event type, e.g. ["run.dead"]`))
    .max(SUBSCRIPTION_EVENT_TYPES.length)
    .check(
      checkedBy((value, field) => {
        const seen = new Set<string>();
        for (const [i, name] of (value as string[]).entries()) {
          if (seen.has(name)) throw new ValidationError('VALIDATION_FAILED', `${field}[${i}]`, `${field}[${i}]: "${name}" is listed twice; list each event type once`);
          seen.add(name);
        }
      }),
    ),
  (field) => `${field} is required: the event types to deliver, e.g. ["run.dead", "schedule.late"]`,
).describe(`The event types to deliver: ${SUBSCRIPTION_EVENT_TYPES.map((e) => `\`${e}\` (${SUBSCRIPTION_EVENTS[e].meaning})`).join('; ')}.`);

const labels = screenedBy((value, field) => readStringMap({ [field]: value }, field, '', LABEL_LIMITS), Labels);

const filter = closedObject({
  scheduleIds: z
    .array(z.uuid(worded((field) => `${field} must be a schedule id (a UUID)`)), worded((field) => `${field} must be an array of schedule ids`))
    .max(MAX_SUBSCRIPTION_SCHEDULES, worded((field) => `${field} names at most ${MAX_SUBSCRIPTION_SCHEDULES} schedules; filter by labels instead`))
    .nullable()
    .optional()
    .describe('Only events of these schedules (and their runs). Absent, null or empty: every schedule.'),
  labels: labels
    .nullable()
    .optional()
    .describe("Only events of schedules (or sensors) carrying every one of these labels. Absent, null or empty: any labels. Events of nothing with labels (an outage, a run made ad hoc) pass only without a label filter."),
});

const format = defaulted(
  z.enum(SUBSCRIPTION_FORMATS, worded((field) => `${field} must be "json" (the event as JSON) or "slack" (a Slack incoming-webhook message)`)).nullable(),
  'json',
  '"json": the event as JSON, { id, type, occurredAt, namespace, data }; "slack": a Slack incoming-webhook message (text and blocks).',
);

const description = text(MAX_SUBSCRIPTION_DESCRIPTION).nullable().optional().describe(`What the subscription is for; at most ${MAX_SUBSCRIPTION_DESCRIPTION} characters.`);

// ---- Bodies ----

const subscriptionFields = {
  url,
  events,
  filter: filter.nullable().optional().describe('Which events of those types are delivered. Absent or null: all of them.'),
  format,
  description,
  paused: defaulted(z.boolean().nullable(), false, 'Create the subscription paused: events are not delivered until it is resumed.'),
};

export const SubscriptionCreate = component(
  'SubscriptionCreate',
  closedObject(subscriptionFields),
  "A subscription (POST /v1/subscriptions): the namespace's events of the listed types that match the filter are POSTed to `url`, signed with the namespace's signing secret (Kairos-Signature), with Idempotency-Key = the event id, and retried with backoff until they are taken. Unknown fields are refused (UNKNOWN_FIELD); null counts as absent for every optional field.",
);

/** The order the fields' faults are reported in, as they are declared. */
const READ_ORDER = ['url', 'events', 'filter', 'format', 'description', 'paused'];

/** A POST /v1/subscriptions body. */
export function readSubscriptionCreate(body: unknown): { spec: SubscriptionSpec; paused: boolean } {
  const read = readWire(SubscriptionCreate, body, READ_ORDER);
  return {
    spec: {
      url: read.url,
      events: read.events,
      scheduleIds: read.filter?.scheduleIds ?? [],
      labels: read.filter?.labels ?? {},
      format: read.format ?? 'json',
      description: read.description ?? null,
    },
    paused: read.paused ?? false,
  };
}

export const SubscriptionPatch = component(
  'SubscriptionPatch',
  closedObject({
    url: url.optional(),
    events: events.optional(),
    filter: subscriptionFields.filter,
    format,
    description,
    paused: z.boolean().nullable().optional(),
  }),
  'Fields replacing the stored ones; the rest stay (a new `filter` replaces the whole filter). `paused` pauses or resumes; resuming a disabled subscription enables it again.',
);

/** A PATCH /v1/subscriptions/{id} body: the fields it gives (present keys only) and whether to pause or resume (null: neither). */
export function readSubscriptionPatch(body: unknown): { fields: Partial<Omit<SubscriptionSpec, 'scheduleIds' | 'labels'>> & { filter?: { scheduleIds: string[]; labels: Record<string, string> } }; paused: boolean | null } {
  const read = readWire(SubscriptionPatch, body, READ_ORDER);
  const fields: ReturnType<typeof readSubscriptionPatch>['fields'] = {};
  if (read.url !== undefined) fields.url = read.url;
  if (read.events !== undefined) fields.events = read.events;
  if (read.filter !== undefined) fields.filter = { scheduleIds: read.filter?.scheduleIds ?? [], labels: read.filter?.labels ?? {} };
  if (read.format !== undefined && read.format !== null) fields.format = read.format;
  if (read.description !== undefined) fields.description = read.description;
  return { fields, paused: read.paused ?? null };
}

// ---- Responses ----

export const SubscriptionStateShape = component(
  'SubscriptionState',
  z.enum(SUBSCRIPTION_STATES),
  'active: events are delivered; paused: events meanwhile are not delivered (deliveries already due wait for the resume); disabled: its deliveries failed for the whole retry window (KAIROS_SUBSCRIPTION_RETRY_WINDOW, 24h by default), nothing is delivered until it is resumed.',
);

export const SubscriptionFormatShape = component(
  'SubscriptionFormat',
  z.enum(SUBSCRIPTION_FORMATS),
  'json: the event as JSON, { id, type, occurredAt, namespace, data }; slack: a Slack incoming-webhook message (text and blocks).',
);

export const SubscriptionEventType = component('SubscriptionEventType', z.enum(SUBSCRIPTION_EVENT_TYPES), 'An event type a subscription may listen to.');

export const SubscriptionView = component(
  'Subscription',
  z.strictObject({
    id: z.uuid(),
    url: z.string(),
    events: z.array(SubscriptionEventType),
    filter: z.strictObject({ scheduleIds: z.array(z.uuid()), labels: Labels }),
    format: SubscriptionFormatShape,
    description: z.string().nullable(),
    state: SubscriptionStateShape,
    disabledReason: z.string().nullable().describe('Why it was disabled; null unless disabled.'),
    failingSince: Instant.nullable().describe('Since when its oldest undelivered event has been failing; null while deliveries succeed.'),
    createdAt: Instant,
    updatedAt: Instant,
  }),
  'A subscription: where events go, which, in what format, and whether its deliveries are getting through.',
);
export const SubscriptionPage = component('SubscriptionPage', page(SubscriptionView, 'A page of subscriptions, newest first.'));

export const DeliveryStateShape = component(
  'DeliveryState',
  z.enum(DELIVERY_STATES),
  'pending: not taken yet (retried at nextAttemptAt); delivered: the endpoint answered 2xx; failed: given up (the retry window passed, or the subscription was deleted meanwhile).',
);

export const DeliveryAttempt = component(
  'DeliveryAttempt',
  z.strictObject({
    attempt: z.int().min(1),
    attemptedAt: Instant,
    statusCode: z.int().nullable().describe("The endpoint's HTTP status; null when there was no answer (refused address, network error, timeout)."),
    latencyMs: z.int().min(0),
    error: z.string().nullable().describe('Why the attempt failed; null when it was taken (2xx).'),
  }),
  'One HTTP attempt of a delivery.',
);

export const SubscriptionDelivery = component(
  'SubscriptionDelivery',
  z.strictObject({
    id: z.string().describe('The delivery (a decimal number).'),
    eventId: z.string().describe('The event: the body\'s `id` and the Idempotency-Key header.'),
    eventType: z.enum(DOMAIN_EVENT_TOPICS),
    state: DeliveryStateShape,
    attempts: z.array(DeliveryAttempt).describe('Every attempt, oldest first.'),
    nextAttemptAt: Instant.nullable().describe('When it is tried next; null unless pending.'),
    body: z.record(z.string(), z.unknown()).describe('The event as delivered in the json format: { id, type, occurredAt, namespace, data }.'),
    createdAt: Instant,
    finishedAt: Instant.nullable(),
  }),
  'One event delivered (or being delivered) to a subscription, with each attempt.',
);
export const SubscriptionDeliveryPage = component('SubscriptionDeliveryPage', page(SubscriptionDelivery, 'A page of deliveries, newest first.'));

export const SubscriptionTestResult = component(
  'SubscriptionTestResult',
  z.strictObject({ eventId: z.string().describe('The ping event; its delivery appears under GET /v1/subscriptions/{id}/deliveries.') }),
  'A `ping` event was written for the subscription and is delivered like any other event.',
);
