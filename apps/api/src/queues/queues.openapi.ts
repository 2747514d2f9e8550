/** The queue-limit routes of the OpenAPI document. */
import { body, json, operation } from '../openapi/openapi.operations.js';
import type { ParameterObject, PathItemObject } from '../openapi/openapi.types.js';

const QUEUE_NAME: ParameterObject = {
  name: 'name',
  in: 'path',
  required: true,
  description: 'The queue name, as handler targets name it (the default queue is "default").',
  schema: { type: 'string', pattern: '^[A-Za-z0-9_.-]{1,64}$' },
};

export const QUEUE_PATHS: Record<string, PathItemObject> = {
  '/v1/queues': {
    get: operation({
      operationId: 'listQueues',
      tags: ['queues'],
      summary: "List the namespace's queues",
      description:
        "Every queue with limits, with active runs of the namespace, or with live workers (seen in the last minute, not stopped), by name: its limits, its runs running, queued (due, waiting for a worker) and held back (by a limit, for their version or for their fairness key's turn), its runs in state queued per priority (queuedByPriority, five items, priority 1 first) and the ten fairness keys with the most of them (fairnessKeys, most first), and its live workers. One page: nextCursor is null.",
      ok: { 200: json('QueuePage', 'The queues, by name.') },
      errors: [],
    }),
  },
  '/v1/queues/{name}': {
    get: operation({
      operationId: 'getQueue',
      tags: ['queues'],
      summary: 'Read a queue',
      description: 'Any valid queue name: one without limits, runs or workers answers with null limits and zero counts.',
      parameters: [QUEUE_NAME],
      ok: { 200: json('QueueView', 'The queue.') },
      errors: [400],
    }),
    put: operation({
      operationId: 'setQueueLimits',
      tags: ['queues'],
      summary: "Set or clear a queue's limits",
      description:
        "Replaces the queue's limits in the caller's namespace: at most `maxRunning` of its runs running at once, at most `rate.max` starts in any window of `rate.per`. An absent or null field lifts its limit; a body with neither clears the queue's limits. The claim enforces them in the database: a run they hold back stays queued with deferReason QUEUE_LIMIT or QUEUE_RATE_LIMIT and starts, oldest first, as soon as a place frees. Held runs a raised or lifted limit leaves places for are released at once.",
      parameters: [QUEUE_NAME],
      requestBody: body('QueueLimitsPut', true, {
        limits: { summary: 'Ten at once, a hundred a minute', value: { maxRunning: 10, rate: { max: 100, per: '1m' } } },
        clear: { summary: 'No limits', value: {} },
      }),
      ok: { 200: json('QueueView', 'The queue with its new limits.') },
      errors: [400, 413],
    }),
  },
};
