/** The worker-registry route of the OpenAPI document. */
import { json, operation, param } from '../openapi/openapi.operations.js';
import type { PathItemObject } from '../openapi/openapi.types.js';

export const WORKER_PATHS: Record<string, PathItemObject> = {
  '/v1/workers': {
    get: operation({
      operationId: 'listWorkers',
      tags: ['workers'],
      summary: 'List workers',
      description: 'Every worker that registered: the queue it serves, its handlers, its version and its last heartbeat.',
      parameters: [param('Limit'), param('Cursor')],
      ok: { 200: json('WorkerPage', 'A page of workers, by id.') },
      errors: [400],
    }),
  },
};
