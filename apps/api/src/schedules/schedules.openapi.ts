/** The schedule routes of the OpenAPI document. */
import { MAX_BACKFILL_SLOTS } from './schedules.service.js';
import { body, json, operation, param } from '../openapi/openapi.operations.js';
import { queryParameters } from '../openapi/openapi.schemas.js';
import type { PathItemObject } from '../openapi/openapi.types.js';

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
      dst: { gap: 'auto', overlap: 'auto' },
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

export const SCHEDULE_PATHS: Record<string, PathItemObject> = {
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
      parameters: queryParameters('ScheduleListQuery'),
      ok: { 200: json('SchedulePage', 'A page of schedules, newest first.') },
      errors: [400],
    }),
  },
  '/v1/schedules/batch': {
    post: operation({
      operationId: 'createSchedules',
      tags: ['schedules'],
      summary: 'Declare many schedules at once',
      description:
        'Up to 1,000 bodies of POST /v1/schedules (one-shot timers of an agent, say), created in one transaction. Each item is answered in order: the schedule it created (or found by its idempotency key, with `deduped: true`), or `{ error }` with the code and field POST /v1/schedules would have answered (a taken name is CONFLICT on `name`); a refused item stores nothing and does not stop the others.',
      requestBody: body('ScheduleBatch', true, { timers: { summary: 'Two one-shot timers', value: { items: [SCHEDULE_EXAMPLES.timer.value, { ...SCHEDULE_EXAMPLES.timer.value, in: '1h', idempotencyKey: 'wake-agent-8' }] } } }),
      ok: { 200: json('ScheduleBatchResult', 'One answer per item, in order.') },
      errors: [400, 413],
    }),
  },
  '/v1/schedules/by-name/{name}': {
    put: operation({
      operationId: 'upsertScheduleByName',
      tags: ['schedules'],
      summary: 'Create or replace a schedule by name',
      description:
        'Creates the schedule, or replaces its definition when it differs (an unchanged definition is a no-op). A `name` in the body must equal the path. A replaced definition cancels the runs made ahead for slots still to come (SCHEDULE_CHANGED) and plans those slots again from the new one.',
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
      description: 'A changed definition cancels the runs made ahead (KAIROS_LOOKAHEAD) for slots still to come (SCHEDULE_CHANGED) and plans those slots again from the new one.',
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
      description:
        'Runs made ahead (KAIROS_LOOKAHEAD) for slots still to come are cancelled (SCHEDULE_PAUSED) and their slots given back: a slot still to come on resume fires, one that passed while paused is handled by the catch-up policy. A one-shot whose run was made ahead but has not come due can still be paused. Pausing a paused schedule changes nothing.',
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
      parameters: [param('ScheduleId'), ...queryParameters('PreviewQuery')],
      ok: { 200: json('Preview', 'The next fire instants.') },
      errors: [400, 404],
    }),
  },
  '/v1/schedules/{id}/ticks': {
    get: operation({
      operationId: 'listScheduleTicks',
      tags: ['schedules'],
      summary: 'The evaluated slots of a schedule',
      parameters: [param('ScheduleId'), ...queryParameters('PageQuery')],
      ok: { 200: json('TickPage', 'A page of ticks, newest slot first.') },
      errors: [400, 404],
    }),
  },
  '/v1/schedules/{id}/versions': {
    get: operation({
      operationId: 'listScheduleVersions',
      tags: ['schedules'],
      summary: "The versions of a schedule's definition",
      description: 'Every change to the definition, by apply or through the API, newest first: its spec hash, who made it, when, and the fields it changed.',
      parameters: [param('ScheduleId'), ...queryParameters('PageQuery')],
      ok: { 200: json('ScheduleVersionPage', 'A page of versions, newest first.') },
      errors: [400, 404],
    }),
  },
  '/v1/apply': {
    post: operation({
      operationId: 'applySchedules',
      tags: ['schedules'],
      summary: "Plan and apply a source's declared schedules",
      description:
        "Finds each declared schedule by its name and plans create, update (with its field changes), unchanged, or, with prune, delete for the source's schedules it no longer names. Unless dryRun, the plan is applied in one transaction: every change or none; an unchanged schedule keeps its cursor and gets no new version. Its calendars, found by name, are planned create, update or unchanged and written first, so its schedules may name them; a calendar belongs to the namespace, not to the source, and a prune never deletes one. A refusal names the item: `schedules[1] (invoice-sweep).cron`, `calendars[0] (bavaria).dates`. Applies of one source run one at a time.",
      requestBody: body('ApplyRequest'),
      ok: { 200: json('ApplyResult', 'The plan, and whether it was applied.') },
      errors: [400],
    }),
  },
};
