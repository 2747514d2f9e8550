/** The event routes of the OpenAPI document. */
import { body, json, operation } from '../openapi/openapi.operations.js';
import { queryParameters } from '../openapi/openapi.schemas.js';
import type { PathItemObject } from '../openapi/openapi.types.js';

const EVENT_EXAMPLES = {
  paid: { summary: 'An order was paid', value: { name: 'order.paid', data: { orderId: 'o-7', plan: 'pro', amount: 4900 }, id: 'order-o-7-paid' } },
};

export const EVENT_PATHS: Record<string, PathItemObject> = {
  '/v1/events': {
    post: operation({
      operationId: 'sendEvent',
      tags: ['events'],
      summary: 'Send an event',
      description:
        "Stores the event and, in the same transaction, starts one run (origin `event`, the event under `payload.event`) of every schedule of the namespace whose `on` matches it, and resumes the durable functions waiting for it (ctx.waitForEvent): after a crash either the event and all it started exist, or none of it does. A schedule that is paused, or whose overlap policy skips, makes no run and is listed under `skipped`. 202: stored (its runs are started, not finished). An `id` the namespace has seen within the retention window (KAIROS_EVENT_RETENTION) answers 200 with the first event and `deduped: true`, and starts nothing again.",
      requestBody: body('EventCreate', true, EVENT_EXAMPLES),
      ok: { 200: json('Event', 'The id was seen before: the first event, deduped.'), 202: json('Event', 'Stored, with the runs it started.') },
      errors: [400, 413],
    }),
    get: operation({
      operationId: 'listEvents',
      tags: ['events'],
      summary: 'List events',
      parameters: queryParameters('EventListQuery'),
      ok: { 200: json('EventPage', 'A page of events, newest first.') },
      errors: [400],
    }),
  },
  '/v1/events/batch': {
    post: operation({
      operationId: 'sendEvents',
      tags: ['events'],
      summary: 'Send many events at once',
      description:
        'Up to 1,000 bodies of POST /v1/events, stored with all they start in one transaction. Each item is answered in order: its event (or the first with its id, `deduped: true`), or `{ error }` with the code and field POST /v1/events would have answered; a refused item stores nothing and does not stop the others.',
      requestBody: body('EventBatch'),
      ok: { 200: json('EventBatchResult', 'One answer per item, in order.') },
      errors: [400, 413],
    }),
  },
  '/v1/events/{id}': {
    get: operation({
      operationId: 'getEvent',
      tags: ['events'],
      summary: 'Read an event',
      description: 'The event, with the runs it started, the schedules it matched that made none (and why) and the waits it resumed.',
      parameters: [{ name: 'id', in: 'path', required: true, description: "The event's id: the producer's, or the one Kairos gave it.", schema: { type: 'string', minLength: 1, maxLength: 200 } }],
      ok: { 200: json('Event', 'The event.') },
      errors: [404],
    }),
  },
};
