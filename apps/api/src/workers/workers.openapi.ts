/** The worker-registry route of the OpenAPI document. */
import { json, operation } from '../openapi/openapi.operations.js';
import { queryParameters } from '../openapi/openapi.schemas.js';
import type { PathItemObject } from '../openapi/openapi.types.js';

export const WORKER_PATHS: Record<string, PathItemObject> = {
  '/v1/workers': {
    get: operation({
      operationId: 'listWorkers',
      tags: ['workers'],
      summary: 'List workers',
      description: 'Every worker that registered: the queue it serves, its handlers, its version and its last heartbeat.',
      parameters: queryParameters('PageQuery'),
      ok: { 200: json('WorkerPage', 'A page of workers, by id.') },
      errors: [400],
    }),
  },
};
