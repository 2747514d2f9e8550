/** The run routes of the OpenAPI document. */
import { body, json, operation, param } from '../openapi/openapi.operations.js';
import { queryParameters } from '../openapi/openapi.schemas.js';
import type { PathItemObject } from '../openapi/openapi.types.js';

export const RUN_PATHS: Record<string, PathItemObject> = {
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
      parameters: queryParameters('RunListQuery'),
      ok: { 200: json('RunPage', 'A page of runs, newest first.') },
      errors: [400],
    }),
  },
  '/v1/runs/batch': {
    post: operation({
      operationId: 'createRuns',
      tags: ['runs'],
      summary: 'Start many ad-hoc runs at once',
      description:
        'Up to 1,000 bodies of POST /v1/runs, created in one transaction. Each item is answered in order: the run it created (or found by its idempotency key, with `deduped: true`), or `{ error }` with the code and field POST /v1/runs would have answered; a refused item stores nothing and does not stop the others.',
      requestBody: body('RunBatch'),
      ok: { 200: json('RunBatchResult', 'One answer per item, in order.') },
      errors: [400, 413],
    }),
  },
  '/v1/runs/bulk': {
    post: operation({
      operationId: 'bulkRuns',
      tags: ['runs'],
      summary: 'Cancel or retry every run a filter matches',
      description:
        "Acts on the runs of the caller's namespace the filter matches (a step of a multi-step run through its run), oldest first, 500 runs per transaction. cancel: each active run (queued, running, sleeping, waiting) is cancelled as POST /v1/runs/{id}/cancel does (CANCELLED_BY_USER; a running one is asked to stop). retry: each run POST /v1/runs/{id}/retry accepts (failed, dead or cancelled) gets a fresh run (origin retry, sourceRunId set), a page's fresh runs queued after its commit. `matched` counts the runs the filter matched that the action acts on, `acted` those it cancelled or retried (a run that ended meanwhile is not), `sample` up to 10 of them. `dryRun: true` counts and samples and changes nothing. An empty filter is refused (400, field `filter`), as is an unknown action, state or reason code, an instant that does not parse, or createdAfter not before createdBefore.",
      requestBody: body('RunBulkRequest'),
      ok: { 200: json('RunBulkResult', 'What the filter matched and what was done.') },
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
  '/v1/runs/{id}/stream': {
    get: operation({
      operationId: 'streamRun',
      tags: ['runs'],
      summary: 'Follow a run as it changes (server-sent events)',
      description:
        'A text/event-stream: at once an `event: run` whose `data` is the run (the Run schema, as JSON), then another at each change of it (its state, progress, steps, checkpoints, any field), and the response ends after the run has ended and its final view was sent. Comment lines (`: heartbeat`) keep a quiet stream open through proxies. Served by any API replica, whatever process changed the run. GraphQL: subscription runUpdated(id).',
      parameters: [param('RunId')],
      ok: {
        200: {
          description: 'The run now and at each change, as server-sent events, until it has ended.',
          content: { 'text/event-stream': { schema: { type: 'string', description: 'Events `event: run` with `data: <Run as JSON>`, and `: heartbeat` comments.' } } },
        },
      },
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
  '/v1/runs/{id}/signals/{name}': {
    post: operation({
      operationId: 'sendSignal',
      tags: ['runs'],
      summary: 'Send a signal to a run',
      description:
        'Delivers the JSON body to the run\'s ctx.waitForSignal(name): at once when the run waits for it (`delivered: true`, the run resumes), else kept until it asks (`delivered: false`). Each name is sent once per run: a second send answers 409 SIGNAL_ALREADY_DELIVERED; a run that ended answers 409 INVALID_STATE.',
      parameters: [param('RunId'), param('SignalName')],
      requestBody: body('JsonValue', false),
      ok: { 202: json('SignalResult', 'The signal is stored.') },
      errors: [400, 404, 409],
    }),
  },
  '/v1/runs/{id}/version': {
    post: operation({
      operationId: 'moveRunVersion',
      tags: ['runs'],
      summary: 'Move a run to another version of the code',
      description:
        "A run that stored a checkpoint is pinned to the version of the worker that first claimed it: its later attempts and resumes are claimed only by workers of that version, or by workers started with upgrade \"auto\", and while none is live it stays queued with deferReason VERSION_UNAVAILABLE. This sets the version it is pinned to (null: a worker of any version may claim it next), records the move in the run's events (version_moved, from and to), and releases the run at once if it waits for its version and a live worker serves the new one. A run that ended answers 409 INVALID_STATE. GET /v1/versions lists the versions with live workers.",
      parameters: [param('RunId')],
      requestBody: body('RunVersionMove', true, {
        version: { summary: 'Pin to a version', value: { version: '2026.12.03-1' } },
        any: { summary: 'Any version', value: { version: null } },
      }),
      ok: { 200: json('Run', 'The run, pinned to its new version.') },
      errors: [400, 404, 409],
    }),
  },
  '/v1/runs/{id}/retry': {
    post: operation({
      operationId: 'retryRun',
      tags: ['runs'],
      summary: 'Run a failed, dead or cancelled run again',
      description: 'A fresh run (origin retry) of the same target and payload, with its attempts reset.',
      parameters: [param('RunId')],
      ok: { 201: json('Run', 'The new run.') },
      errors: [404, 409],
    }),
  },
};
