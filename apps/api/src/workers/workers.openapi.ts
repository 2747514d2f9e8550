/** The worker-registry and worker-credential routes of the OpenAPI document. */
import { body, json, operation, param } from '../openapi/openapi.operations.js';
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
  '/v1/worker-credentials': {
    post: operation({
      operationId: 'grantWorkerCredential',
      tags: ['workers'],
      summary: 'Grant a worker credential (admin scope)',
      description:
        "Makes a Postgres login that may call only the worker protocol (schema kairos_worker), for the caller's namespace and these queues, which every call checks; and, when the queues live on Redis, a Redis user limited to those queues' keys. The answer holds the URLs a worker connects with; their password is shown only here. The server's database role needs CREATEROLE (403 otherwise, saying so).",
      requestBody: body('WorkerCredentialCreate'),
      ok: { 201: json('IssuedWorkerCredential', 'The credential, with the URLs its workers connect with.') },
      errors: [400],
    }),
    get: operation({
      operationId: 'listWorkerCredentials',
      tags: ['workers'],
      summary: "List the namespace's worker credentials (admin scope)",
      description: 'Every worker credential of the namespace, oldest first; passwords are never shown again.',
      ok: { 200: json('WorkerCredentialList', 'The credentials.') },
      errors: [],
    }),
  },
  '/v1/worker-credentials/{role}': {
    delete: operation({
      operationId: 'revokeWorkerCredential',
      tags: ['workers'],
      summary: 'Revoke a worker credential (admin scope)',
      description: 'Drops the login and its rights, ends its open sessions, and deletes its Redis user.',
      parameters: [param('CredentialRole')],
      ok: { 204: { description: 'Revoked; no body.' } },
      errors: [404],
    }),
  },
};
