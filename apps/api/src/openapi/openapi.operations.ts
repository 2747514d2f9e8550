/**
 * What the feature folders describe their routes with: the shared parameters and error responses,
 * and builders for operations. Each feature's *.openapi.ts lists its paths; test/api/openapi.spec.ts
 * fails when a controller route is missing or a response does not match what is declared.
 */
import { ref } from './openapi.schemas.js';
import type { OperationObject, ParameterObject, ReferenceObject, RequestBodyObject, ResponseObject } from './openapi.types.js';

const JSON_MEDIA = 'application/json';

export const PARAMETERS: Record<string, ParameterObject> = {
  ScheduleId: {
    name: 'id',
    in: 'path',
    required: true,
    description: 'The schedule id. An id that is not a UUID is answered with 404 like any unknown one.',
    schema: { type: 'string', format: 'uuid' },
  },
  RunId: {
    name: 'id',
    in: 'path',
    required: true,
    description: 'The run id. An id that is not a UUID is answered with 404 like any unknown one.',
    schema: { type: 'string', format: 'uuid' },
  },
  SignalName: {
    name: 'name',
    in: 'path',
    required: true,
    description: 'The signal name the run waits for (ctx.waitForSignal), 1 to 200 characters.',
    schema: { type: 'string', minLength: 1, maxLength: 200 },
  },
  CredentialRole: {
    name: 'role',
    in: 'path',
    required: true,
    description: "The worker credential's role, as granting it answered.",
    schema: { type: 'string' },
  },
  SensorId: {
    name: 'id',
    in: 'path',
    required: true,
    description: 'The sensor id. An id that is not a UUID is answered with 404 like any unknown one.',
    schema: { type: 'string', format: 'uuid' },
  },
  SubscriptionId: {
    name: 'id',
    in: 'path',
    required: true,
    description: 'The subscription id. An id that is not a UUID is answered with 404 like any unknown one.',
    schema: { type: 'string', format: 'uuid' },
  },
  CalendarName: {
    name: 'name',
    in: 'path',
    required: true,
    description: "The calendar's name in the namespace.",
    schema: { type: 'string', minLength: 1, maxLength: 200 },
  },
};

function errorResponse(description: string, example: { code: string; message: string; field: string | null }): ResponseObject {
  return { description, content: { [JSON_MEDIA]: { schema: ref('Error'), examples: { [example.code]: { value: example } } } } };
}

export const RESPONSES: Record<string, ResponseObject> = {
  BadRequest: errorResponse('The request is invalid; `field` names what to fix and nothing was stored.', {
    code: 'INVALID_CRON',
    message: 'day-of-week field: 8 is out of range 0-7',
    field: 'cron',
  }),
  NotFound: errorResponse("No such schedule or run in the caller's namespace (code NOT_FOUND).", {
    code: 'NOT_FOUND',
    message: 'schedule 01a226b4-d238-7c31-b6af-28c7c8951e9e does not exist',
    field: null,
  }),
  Conflict: errorResponse('The request clashes with what is stored (code CONFLICT, INVALID_STATE, IDEMPOTENCY_CONFLICT or SIGNAL_ALREADY_DELIVERED).', {
    code: 'INVALID_STATE',
    message: 'run 01a226b4-d238-7c31-b6af-28c7c8951e9e already ended (succeeded); there is nothing to cancel',
    field: null,
  }),
  PayloadTooLarge: errorResponse('The request body exceeds 1 MB (code PAYLOAD_TOO_LARGE).', {
    code: 'PAYLOAD_TOO_LARGE',
    message: 'the request body exceeds 1 MB',
    field: null,
  }),
  Unauthorized: errorResponse('The API key is missing (when KAIROS_AUTH=required), malformed, unknown or revoked (code UNAUTHORIZED).', {
    code: 'UNAUTHORIZED',
    message: 'this API key is unknown or revoked',
    field: null,
  }),
  Forbidden: errorResponse('The API key lacks the scope the request needs (code FORBIDDEN).', {
    code: 'FORBIDDEN',
    message: 'this API key has the scopes read; the request needs write',
    field: null,
  }),
  Internal: errorResponse('An unexpected failure (code INTERNAL); the server log has the details.', {
    code: 'INTERNAL',
    message: 'internal error; the server log has the details',
    field: null,
  }),
};

type ParameterName = keyof typeof PARAMETERS;
type ResponseName = 'BadRequest' | 'NotFound' | 'Conflict' | 'PayloadTooLarge' | 'Unauthorized' | 'Forbidden' | 'Internal';

export const param = (name: ParameterName): ReferenceObject => ({ $ref: `#/components/parameters/${name}` });
const response = (name: ResponseName): ReferenceObject => ({ $ref: `#/components/responses/${name}` });

export function json(schema: string, description: string): ResponseObject {
  return { description, content: { [JSON_MEDIA]: { schema: ref(schema) } } };
}

export function body(schema: string, required = true, examples?: Record<string, { summary: string; value: unknown }>): RequestBodyObject {
  return { required, content: { [JSON_MEDIA]: { schema: ref(schema), ...(examples ? { examples } : {}) } } };
}

/** The error statuses particular to an operation; every one may also answer 401, 403 and 500. */
type ErrorStatus = 400 | 404 | 409 | 413;
const ERROR_RESPONSES: Record<ErrorStatus, ResponseName> = { 400: 'BadRequest', 404: 'NotFound', 409: 'Conflict', 413: 'PayloadTooLarge' };

export function operation(
  op: Omit<OperationObject, 'responses'> & { ok: Record<number, ResponseObject>; errors: ErrorStatus[] },
): OperationObject {
  const { ok, errors, ...rest } = op;
  const responses: OperationObject['responses'] = {};
  for (const [status, res] of Object.entries(ok)) responses[status] = res;
  for (const status of errors) responses[String(status)] = response(ERROR_RESPONSES[status]);
  responses['401'] = response('Unauthorized');
  responses['403'] = response('Forbidden');
  responses['500'] = response('Internal');
  return { ...rest, responses };
}
