/** Subscriptions: where the namespace's events go, and each delivery with its attempts. */
import type { Instant } from './shared.js';

/** The events a subscription may listen to. */
export type SubscriptionEventType =
  | 'run.succeeded'
  | 'run.failed'
  | 'run.dead'
  | 'schedule.created'
  | 'schedule.updated'
  | 'schedule.paused'
  | 'schedule.resumed'
  | 'schedule.deleted'
  | 'schedule.completed'
  | 'schedule.missed'
  | 'schedule.late'
  | 'schedule.recovered'
  | 'sensor.failed'
  | 'outage.detected'
  | 'subscription.disabled';
/** json: the event as JSON, { id, type, occurredAt, namespace, data }; slack: a Slack incoming-webhook message. */
export type SubscriptionFormat = 'json' | 'slack';
/** disabled: its deliveries failed for the whole retry window; nothing is delivered until it is resumed. */
export type SubscriptionState = 'active' | 'paused' | 'disabled';

/** Which events of the listed types are delivered; an absent, null or empty field lets every one through. */
export interface SubscriptionFilterInput {
  /** Only events of these schedules (and their runs); at most 100. */
  scheduleIds?: string[] | null;
  /** Only events of schedules (or sensors) carrying every one of these labels. */
  labels?: Record<string, string> | null;
}
/** POST /v1/subscriptions. */
export interface SubscriptionInput {
  /** Where deliveries are POSTed: http or https, without credentials. */
  url: string;
  events: SubscriptionEventType[];
  filter?: SubscriptionFilterInput | null;
  /** Default json. */
  format?: SubscriptionFormat | null;
  /** At most 500 characters. */
  description?: string | null;
  /** Default false: create it paused, delivering nothing until it is resumed. */
  paused?: boolean | null;
}
/** PATCH: the given fields replace the stored ones (a new filter replaces the whole filter); `paused` pauses or resumes. */
export type SubscriptionPatch = Partial<SubscriptionInput>;

/** A subscription: where events go, which, in what format, and whether its deliveries are getting through. */
export interface Subscription {
  id: string;
  url: string;
  events: SubscriptionEventType[];
  filter: { scheduleIds: string[]; labels: Record<string, string> };
  format: SubscriptionFormat;
  description: string | null;
  state: SubscriptionState;
  /** Why it was disabled; null unless disabled. */
  disabledReason: string | null;
  /** Since when its oldest undelivered event has been failing; null while deliveries succeed. */
  failingSince: Instant | null;
  createdAt: Instant;
  updatedAt: Instant;
}

/** pending: not taken yet (retried at nextAttemptAt); delivered: answered 2xx; failed: given up. */
export type DeliveryState = 'pending' | 'delivered' | 'failed';
/** One HTTP attempt of a delivery. */
export interface DeliveryAttempt {
  attempt: number;
  attemptedAt: Instant;
  /** Null when there was no answer (refused address, network error, timeout). */
  statusCode: number | null;
  latencyMs: number;
  /** Null when it was taken (2xx). */
  error: string | null;
}
/** One event delivered (or being delivered) to a subscription, with each attempt. */
export interface SubscriptionDelivery {
  /** A decimal number. */
  id: string;
  /** The body's `id` and the Idempotency-Key header. */
  eventId: string;
  /** `ping` for a test delivery. */
  eventType: SubscriptionEventType | 'ping';
  state: DeliveryState;
  /** Oldest first. */
  attempts: DeliveryAttempt[];
  /** Null unless pending. */
  nextAttemptAt: Instant | null;
  /** The event as delivered in the json format. */
  body: Record<string, unknown>;
  createdAt: Instant;
  finishedAt: Instant | null;
}
/** A `ping` written for the subscription, delivered like any other event. */
export interface SubscriptionTestResult {
  eventId: string;
}
