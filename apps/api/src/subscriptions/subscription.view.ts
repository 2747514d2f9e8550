/** The wire shape of a subscription and of its deliveries, as REST and GraphQL return them. */
import { formatInstant, formatOptionalInstant } from '@kairos/domain';
import type { SubscriptionDelivery, SubscriptionView as SubscriptionShape } from '@kairos/domain/wire';
import type { DeliveryWithAttempts, SubscriptionRow } from '@kairos/ledger';
import type { z } from 'zod';

export type SubscriptionView = z.output<typeof SubscriptionShape>;
export type SubscriptionDeliveryView = z.output<typeof SubscriptionDelivery>;
export type DeliveryAttemptView = SubscriptionDeliveryView['attempts'][number];

export function subscriptionView(row: SubscriptionRow): SubscriptionView {
  return {
    id: row.id,
    url: row.url,
    events: row.events,
    filter: { scheduleIds: row.scheduleIds, labels: row.labels },
    format: row.format,
    description: row.description,
    state: row.state,
    disabledReason: row.disabledReason,
    failingSince: formatOptionalInstant(row.failingSince),
    createdAt: formatInstant(row.createdAt),
    updatedAt: formatInstant(row.updatedAt),
  };
}

export function deliveryView(row: DeliveryWithAttempts): SubscriptionDeliveryView {
  return {
    id: row.id,
    eventId: row.eventId,
    eventType: row.eventType as SubscriptionDeliveryView['eventType'],
    state: row.state,
    attempts: row.attemptLog.map((a) => ({
      attempt: a.attempt,
      attemptedAt: formatInstant(a.attemptedAt),
      statusCode: a.statusCode,
      latencyMs: a.latencyMs,
      error: a.error,
    })),
    nextAttemptAt: row.state === 'pending' ? formatInstant(row.nextAttemptAt) : null,
    body: row.body,
    createdAt: formatInstant(row.createdAt),
    finishedAt: formatOptionalInstant(row.finishedAt),
  };
}
