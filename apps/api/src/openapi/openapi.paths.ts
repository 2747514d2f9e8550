/**
 * The paths of the OpenAPI document: every route the REST controllers declare, with the status
 * codes they answer with. test/api/openapi.spec.ts fails when a controller route is missing here
 * or a response does not match what is declared.
 */
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from '@kairos/ledger';
import { MAX_PREVIEW_COUNT } from '@kairos/domain';
import { MAX_BACKFILL_SLOTS } from '../schedules/schedules.service.js';
import { ref, type SchemaName } from './openapi.schemas.js';
import type { OperationObject, ParameterObject, PathItemObject, ReferenceObject, RequestBodyObject, ResponseObject } from './openapi.types.js';

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
  Limit: {
    name: 'limit',
    in: 'query',
    description: 'Page size.',
    schema: { type: 'integer', minimum: 1, maximum: MAX_PAGE_SIZE, default: DEFAULT_PAGE_SIZE },
  },
  Cursor: {
    name: 'cursor',
    in: 'query',
    description: "The previous page's nextCursor, unchanged (INVALID_CURSOR otherwise).",
    schema: { type: 'string' },
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
  Conflict: errorResponse('The request clashes with what is stored (code CONFLICT or INVALID_STATE).', {
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

const param = (name: ParameterName): ReferenceObject => ({ $ref: `#/components/parameters/${name}` });
const response = (name: ResponseName): ReferenceObject => ({ $ref: `#/components/responses/${name}` });

function query(name: string, description: string, schema: ParameterObject['schema']): ParameterObject {
  return { name, in: 'query', description, schema };
}

function json(schema: SchemaName, description: string): ResponseObject {
  return { description, content: { [JSON_MEDIA]: { schema: ref(schema) } } };
}

function body(schema: SchemaName, required = true, examples?: Record<string, { summary: string; value: unknown }>): RequestBodyObject {
  return { required, content: { [JSON_MEDIA]: { schema: ref(schema), ...(examples ? { examples } : {}) } } };
}

/** The error statuses particular to an operation; every one may also answer 401, 403 and 500. */
type ErrorStatus = 400 | 404 | 409 | 413;
const ERROR_RESPONSES: Record<ErrorStatus, ResponseName> = { 400: 'BadRequest', 404: 'NotFound', 409: 'Conflict', 413: 'PayloadTooLarge' };

function operation(
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

const SCHEDULE_EXAMPLES = {
  handler: {
    summary: 'Every 15 minutes, a built-in handler',
    value: { name: 'sync-ledger', every: '15m', target: { type: 'handler', name: 'echo' }, payload: { hello: 'kairos' } },
  },
  http: {
    summary: 'A nightly webhook in Berlin time (every field)',
    value: {
      name: 'nightly-report',
      cron: '30 2 * * *',
      timezone: 'Europe/Berlin',
      dst: { gap: 'shift', overlap: 'first' },
      catchup: { mode: 'latest', window: '1h', limit: 10 },
      overlap: 'skip',
      target: { type: 'http', url: 'https://example.com/hook', method: 'POST', headers: {}, timeout: '30s' },
      payload: { any: 'json' },
      retry: { maxAttempts: 5, backoff: { type: 'exponential', base: '60s', max: '1h', jitter: 0.1 } },
      timeout: '5m',
      startAt: null,
      endAt: null,
      maxRuns: null,
      jitter: '0s',
      paused: false,
      idempotencyKey: 'nightly-report-v1',
      labels: { team: 'billing' },
    },
  },
  timer: {
    summary: 'A one-shot timer for an agent',
    value: { in: '10m', target: { type: 'handler', name: 'echo' }, payload: { wake: 'agent-7' }, idempotencyKey: 'wake-agent-7' },
  },
};

export const PATHS: Record<string, PathItemObject> = {
  '/v1/schedules': {
    post: operation({
      operationId: 'createSchedule',
      tags: ['schedules'],
      summary: 'Declare a schedule',
      description: 'Validates everything (cron, zone, policies, target, sizes), computes the first fire and stores the schedule.',
      requestBody: body('ScheduleCreate', true, SCHEDULE_EXAMPLES),
      ok: {
        201: json('Schedule', 'Created.'),
        200: json('Schedule', 'The idempotencyKey was seen before: the existing schedule, with `deduped: true`.'),
      },
      errors: [400, 409, 413],
    }),
    get: operation({
      operationId: 'listSchedules',
      tags: ['schedules'],
      summary: 'List schedules',
      parameters: [
        param('Limit'),
        param('Cursor'),
        query('status', 'Only schedules in this status.', ref('ScheduleStatus')),
        query('name', 'Only the schedule of this exact name.', { type: 'string' }),
        query('label', 'Only schedules carrying this label, written key:value.', { type: 'string', pattern: '^[^:]+:', examples: ['team:billing'] }),
      ],
      ok: { 200: json('SchedulePage', 'A page of schedules, newest first.') },
      errors: [400],
    }),
  },
  '/v1/schedules/by-name/{name}': {
    put: operation({
      operationId: 'upsertScheduleByName',
      tags: ['schedules'],
      summary: 'Create or replace a schedule by name',
      description:
        'Creates the schedule, or replaces its definition when it differs (an unchanged definition is a no-op). A `name` in the body must equal the path.',
      parameters: [{ name: 'name', in: 'path', required: true, description: 'The schedule name.', schema: { type: 'string', pattern: '^[A-Za-z0-9][A-Za-z0-9._:-]*$', maxLength: 200 } }],
      requestBody: body('ScheduleCreate'),
      ok: { 201: json('Schedule', 'Created.'), 200: json('Schedule', 'Replaced, or unchanged.') },
      errors: [400, 413],
    }),
  },
  '/v1/schedules/{id}': {
    get: operation({
      operationId: 'getSchedule',
      tags: ['schedules'],
      summary: 'Read a schedule',
      parameters: [param('ScheduleId')],
      ok: { 200: json('Schedule', 'The schedule.') },
      errors: [404],
    }),
    patch: operation({
      operationId: 'patchSchedule',
      tags: ['schedules'],
      summary: 'Change some fields of a schedule',
      parameters: [param('ScheduleId')],
      requestBody: body('SchedulePatch'),
      ok: { 200: json('Schedule', 'The schedule after the change.') },
      errors: [400, 404, 409, 413],
    }),
    delete: operation({
      operationId: 'deleteSchedule',
      tags: ['schedules'],
      summary: 'Delete a schedule',
      description: 'Soft-deletes the schedule; its queued runs are cancelled (SCHEDULE_DELETED), running ones finish.',
      parameters: [param('ScheduleId')],
      ok: { 204: { description: 'Deleted; no body.' } },
      errors: [404],
    }),
  },
  '/v1/schedules/{id}/pause': {
    post: operation({
      operationId: 'pauseSchedule',
      tags: ['schedules'],
      summary: 'Pause a schedule',
      description: 'Slots that pass while paused are handled by the catch-up policy on resume. Pausing a paused schedule changes nothing.',
      parameters: [param('ScheduleId')],
      ok: { 200: json('Schedule', 'The paused schedule.') },
      errors: [404, 409],
    }),
  },
  '/v1/schedules/{id}/resume': {
    post: operation({
      operationId: 'resumeSchedule',
      tags: ['schedules'],
      summary: 'Resume a paused schedule',
      parameters: [param('ScheduleId')],
      ok: { 200: json('Schedule', 'The active schedule.') },
      errors: [404, 409],
    }),
  },
  '/v1/schedules/{id}/trigger': {
    post: operation({
      operationId: 'triggerSchedule',
      tags: ['schedules'],
      summary: 'Run a schedule now',
      description: 'A manual run outside the slots; works while paused. 409 when the overlap policy refuses it while an earlier run is active.',
      parameters: [param('ScheduleId')],
      requestBody: body('ScheduleTrigger', false),
      ok: { 201: json('Run', 'The run created.') },
      errors: [400, 404, 409, 413],
    }),
  },
  '/v1/schedules/{id}/backfill': {
    post: operation({
      operationId: 'backfillSchedule',
      tags: ['schedules'],
      summary: 'Fire the past slots of a range',
      description: `Fires every slot of [from, to] that has no tick yet, at most ${MAX_BACKFILL_SLOTS} slots.`,
      parameters: [param('ScheduleId')],
      requestBody: body('BackfillRequest'),
      ok: { 201: json('BackfillResult', 'What the backfill created.') },
      errors: [400, 404, 413],
    }),
  },
  '/v1/schedules/{id}/preview': {
    get: operation({
      operationId: 'previewSchedule',
      tags: ['schedules'],
      summary: 'The next fire instants of a schedule',
      description: 'Within its bounds and maxRuns.',
      parameters: [
        param('ScheduleId'),
        query('count', 'How many instants.', { type: 'integer', minimum: 1, maximum: MAX_PREVIEW_COUNT, default: 10 }),
        query('after', 'List instants after this one. Default: now.', ref('InstantInput')),
      ],
      ok: { 200: json('Preview', 'The next fire instants.') },
      errors: [400, 404],
    }),
  },
  '/v1/schedules/{id}/ticks': {
    get: operation({
      operationId: 'listScheduleTicks',
      tags: ['schedules'],
      summary: 'The evaluated slots of a schedule',
      parameters: [param('ScheduleId'), param('Limit'), param('Cursor')],
      ok: { 200: json('TickPage', 'A page of ticks, newest slot first.') },
      errors: [400, 404],
    }),
  },
  '/v1/runs': {
    post: operation({
      operationId: 'createRun',
      tags: ['runs'],
      summary: 'Start an ad-hoc run',
      requestBody: body('RunCreate'),
      ok: {
        201: json('RunCreated', 'Created and queued.'),
        200: json('RunCreated', 'The idempotencyKey was seen before: the first run, with `deduped: true`.'),
      },
      errors: [400, 413],
    }),
    get: operation({
      operationId: 'listRuns',
      tags: ['runs'],
      summary: 'List runs',
      parameters: [
        query('scheduleId', 'Only runs of this schedule.', { type: 'string', format: 'uuid' }),
        query('state', 'Only runs in this state.', ref('RunState')),
        param('Limit'),
        param('Cursor'),
      ],
      ok: { 200: json('RunPage', 'A page of runs, newest first.') },
      errors: [400],
    }),
  },
  '/v1/runs/{id}': {
    get: operation({
      operationId: 'getRun',
      tags: ['runs'],
      summary: 'Read a run',
      parameters: [param('RunId')],
      ok: { 200: json('RunDetail', 'The run.') },
      errors: [404],
    }),
  },
  '/v1/runs/{id}/events': {
    get: operation({
      operationId: 'listRunEvents',
      tags: ['runs'],
      summary: "A run's transition history",
      parameters: [param('RunId')],
      ok: { 200: json('RunEventList', 'Every event of the run, oldest first.') },
      errors: [404],
    }),
  },
  '/v1/runs/{id}/cancel': {
    post: operation({
      operationId: 'cancelRun',
      tags: ['runs'],
      summary: 'Cancel a run',
      description: 'A queued run ends now; a running one is stopped by its worker at the next lease renewal (cancelRequestedAt is set meanwhile).',
      parameters: [param('RunId')],
      ok: { 200: json('Run', 'The run after the request.') },
      errors: [404, 409],
    }),
  },
  '/v1/runs/{id}/retry': {
    post: operation({
      operationId: 'retryRun',
      tags: ['runs'],
      summary: 'Run a failed or dead run again',
      description: 'A fresh run (origin retry) of the same target and payload, with its attempts reset.',
      parameters: [param('RunId')],
      ok: { 201: json('Run', 'The new run.') },
      errors: [404, 409],
    }),
  },
  '/v1/dead-letters': {
    get: operation({
      operationId: 'listDeadLetters',
      tags: ['dead-letters'],
      summary: 'List dead runs',
      description: 'Runs that ended dead: retries exhausted, a non-retryable failure, or poisoned.',
      parameters: [query('scheduleId', 'Only dead runs of this schedule.', { type: 'string', format: 'uuid' }), param('Limit'), param('Cursor')],
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
  '/v1/cron/preview': {
    post: operation({
      operationId: 'previewCron',
      tags: ['cron'],
      summary: 'Preview an ad-hoc spec',
      description: 'The next fire instants of a cron or interval, without storing anything.',
      requestBody: body('CronPreviewRequest', true, {
        berlin: { summary: 'A Berlin cron across the DST change', value: { cron: '30 2 * * *', timezone: 'Europe/Berlin', after: '2027-03-26T00:00:00Z', count: 5 } },
      }),
      ok: { 200: json('Preview', 'The next fire instants.') },
      errors: [400, 413],
    }),
  },
};
