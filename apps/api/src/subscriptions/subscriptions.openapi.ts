/** The subscription routes of the OpenAPI document. */
import { body, json, operation, param } from '../openapi/openapi.operations.js';
import { queryParameters } from '../openapi/openapi.schemas.js';
import type { PathItemObject } from '../openapi/openapi.types.js';

const SUBSCRIPTION_EXAMPLES = {
  slack: {
    summary: 'Dead runs and late schedules of the billing team, to Slack',
    value: {
      url: 'https://hooks.slack.com/services/T000/B000/XXXXXXXX',
      events: ['run.dead', 'schedule.late', 'schedule.recovered'],
      filter: { labels: { team: 'billing' } },
      format: 'slack',
      description: '#billing-alerts',
    },
  },
  json: {
    summary: 'Every failure of two schedules, as JSON, to a service',
    value: {
      url: 'https://ops.example.com/kairos-events',
      events: ['run.failed', 'run.dead', 'schedule.missed'],
      filter: { scheduleIds: ['0193a5e0-7b1c-7cc2-8f5e-2f9d1c0a1b2c'] },
    },
  },
};

const DELIVERY =
  'Each event is POSTed with Content-Type application/json, Idempotency-Key = the event id (deduplicate on it: delivery is at least once), Kairos-Event-Type, and Kairos-Signature signed with the namespace\'s secret exactly as HTTP targets\' deliveries are (verifySignature in @kairos/sdk checks it). A 2xx takes it; anything else is retried with backoff (1s doubling to 1h) for KAIROS_SUBSCRIPTION_RETRY_WINDOW (24h), after which the subscription is disabled and `subscription.disabled` goes to the namespace\'s other subscriptions. One slow or dead endpoint never delays another subscription\'s deliveries. Private, loopback and link-local addresses are refused unless KAIROS_HTTP_ALLOWLIST names them.';

export const SUBSCRIPTION_PATHS: Record<string, PathItemObject> = {
  '/v1/subscriptions': {
    post: operation({
      operationId: 'createSubscription',
      tags: ['subscriptions'],
      summary: 'Subscribe a webhook to events',
      description: `Stores the subscription: from now on, the namespace's events of the listed types that match its filter are delivered to \`url\`. The body is { id, type, occurredAt, namespace, data } (format json) or a Slack message (format slack). ${DELIVERY}`,
      requestBody: body('SubscriptionCreate', true, SUBSCRIPTION_EXAMPLES),
      ok: { 201: json('Subscription', 'Created.') },
      errors: [400, 413],
    }),
    get: operation({
      operationId: 'listSubscriptions',
      tags: ['subscriptions'],
      summary: 'List subscriptions',
      parameters: queryParameters('PageQuery'),
      ok: { 200: json('SubscriptionPage', 'A page of subscriptions, newest first.') },
      errors: [400],
    }),
  },
  '/v1/subscriptions/{id}': {
    get: operation({
      operationId: 'getSubscription',
      tags: ['subscriptions'],
      summary: 'Read a subscription',
      parameters: [param('SubscriptionId')],
      ok: { 200: json('Subscription', 'The subscription.') },
      errors: [404],
    }),
    patch: operation({
      operationId: 'patchSubscription',
      tags: ['subscriptions'],
      summary: 'Change some fields of a subscription',
      description: 'The given fields replace the stored ones; a new `filter` replaces the whole filter. Events already fanned out keep the body they were given.',
      parameters: [param('SubscriptionId')],
      requestBody: body('SubscriptionPatch'),
      ok: { 200: json('Subscription', 'The subscription after the change.') },
      errors: [400, 404, 413],
    }),
    delete: operation({
      operationId: 'deleteSubscription',
      tags: ['subscriptions'],
      summary: 'Delete a subscription',
      description: 'Deletes the subscription with its deliveries; nothing more is sent to it.',
      parameters: [param('SubscriptionId')],
      ok: { 204: { description: 'Deleted; no body.' } },
      errors: [404],
    }),
  },
  '/v1/subscriptions/{id}/pause': {
    post: operation({
      operationId: 'pauseSubscription',
      tags: ['subscriptions'],
      summary: 'Pause a subscription',
      description: 'Events that occur while it is paused are not delivered to it; deliveries already due wait for the resume.',
      parameters: [param('SubscriptionId')],
      ok: { 200: json('Subscription', 'The paused subscription.') },
      errors: [404],
    }),
  },
  '/v1/subscriptions/{id}/resume': {
    post: operation({
      operationId: 'resumeSubscription',
      tags: ['subscriptions'],
      summary: 'Resume a paused or disabled subscription',
      description: 'Deliveries start again at once; a disabled subscription forgets its failures. Resuming an active one changes nothing.',
      parameters: [param('SubscriptionId')],
      ok: { 200: json('Subscription', 'The active subscription.') },
      errors: [404],
    }),
  },
  '/v1/subscriptions/{id}/test': {
    post: operation({
      operationId: 'testSubscription',
      tags: ['subscriptions'],
      summary: 'Send a test event',
      description: 'Writes a `ping` event for this subscription alone; it is delivered like any event, within about a second, and its delivery appears under /deliveries. 409 INVALID_STATE unless the subscription is active.',
      parameters: [param('SubscriptionId')],
      ok: { 202: json('SubscriptionTestResult', 'The ping event was written.') },
      errors: [404, 409],
    }),
  },
  '/v1/subscriptions/{id}/deliveries': {
    get: operation({
      operationId: 'listSubscriptionDeliveries',
      tags: ['subscriptions'],
      summary: 'The deliveries of a subscription',
      description: 'Newest first, each with its state and every attempt: status code, latency and error.',
      parameters: [param('SubscriptionId'), ...queryParameters('PageQuery')],
      ok: { 200: json('SubscriptionDeliveryPage', 'A page of deliveries, newest first.') },
      errors: [400, 404],
    }),
  },
};
