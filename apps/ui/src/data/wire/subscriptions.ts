/** Subscriptions: where the namespace's events go, and each delivery with its attempts. */

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
/** What a delivery carries: a subscribable event, or `ping`, a test sent to one subscription. */
export type DeliveredEventType = SubscriptionEventType | 'ping';
/** disabled: its deliveries failed for the whole retry window; nothing is delivered until it is resumed. */
export type SubscriptionState = 'active' | 'paused' | 'disabled';
/** pending: not taken yet (retried at nextAttemptAt); delivered: the endpoint answered 2xx; failed: given up. */
export type DeliveryState = 'pending' | 'delivered' | 'failed';

/** A webhook told of the namespace's events of the listed types that match its filter. */
export interface Subscription {
  id: string;
  url: string;
  events: SubscriptionEventType[];
  /** Empty lists and maps match everything. */
  filter: { scheduleIds: string[]; labels: Record<string, string> };
  format: 'json' | 'slack';
  description: string | null;
  state: SubscriptionState;
  /** Null unless disabled. */
  disabledReason: string | null;
  /** Since when its oldest undelivered event has been failing; null while deliveries succeed. */
  failingSince: string | null;
  createdAt: string;
  updatedAt: string;
}

/** One HTTP attempt of a delivery. */
export interface DeliveryAttempt {
  attempt: number;
  attemptedAt: string;
  /** Null when there was no answer (refused address, network error, timeout). */
  statusCode: number | null;
  latencyMs: number;
  /** Null when the endpoint took it (2xx). */
  error: string | null;
}

/** One event delivered, or being delivered, to a subscription. */
export interface SubscriptionDelivery {
  id: string;
  eventId: string;
  eventType: DeliveredEventType;
  state: DeliveryState;
  /** Oldest first. */
  attempts: DeliveryAttempt[];
  /** Null unless pending. */
  nextAttemptAt: string | null;
  /** The event as the json format delivers it: { id, type, occurredAt, namespace, data }. */
  body: Record<string, unknown>;
  createdAt: string;
  finishedAt: string | null;
}

/** The ping written by POST /v1/subscriptions/{id}/test; its delivery is listed with the others. */
export interface SubscriptionTestResult {
  eventId: string;
}
