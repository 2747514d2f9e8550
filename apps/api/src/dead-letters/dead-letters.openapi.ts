/** The dead-letter routes of the OpenAPI document. */
import { json, operation, param } from '../openapi/openapi.operations.js';
import { queryParameters } from '../openapi/openapi.schemas.js';
import type { PathItemObject } from '../openapi/openapi.types.js';

export const DEAD_LETTER_PATHS: Record<string, PathItemObject> = {
  '/v1/dead-letters': {
    get: operation({
      operationId: 'listDeadLetters',
      tags: ['dead-letters'],
      summary: 'List dead runs',
      description: 'Runs that ended dead: retries exhausted, a non-retryable failure, or poisoned.',
      parameters: queryParameters('DeadLetterListQuery'),
      ok: { 200: json('RunPage', 'A page of dead runs, newest first.') },
      errors: [400],
    }),
  },
  '/v1/dead-letters/{id}/republish': {
    post: operation({
      operationId: 'republishDeadLetter',
      tags: ['dead-letters'],
      summary: 'Republish a dead run',
      description: 'A fresh run (origin republish) of the run\'s target and payload. Failed runs are accepted as well as dead ones.',
      parameters: [param('RunId')],
      ok: { 201: json('Run', 'The new run.') },
      errors: [404, 409],
    }),
  },
};
