/**
 * The OpenAPI 3.1 description of REST /v1, served at GET /docs/openapi.json and rendered by
 * Swagger UI at /docs: each feature folder's paths over the shared schemas, parameters and responses.
 */
import { CALENDAR_PATHS } from './calendars/calendars.openapi.js';
import { CLUSTER_PATHS } from './cluster/cluster.openapi.js';
import { CRON_PATHS } from './cron/cron.openapi.js';
import { DEAD_LETTER_PATHS } from './dead-letters/dead-letters.openapi.js';
import { EVENT_PATHS } from './events/events.openapi.js';
import { PARAMETERS, RESPONSES } from './openapi/openapi.operations.js';
import { SCHEMAS } from './openapi/openapi.schemas.js';
import type { OpenApiDocument } from './openapi/openapi.types.js';
import { QUEUE_PATHS } from './queues/queues.openapi.js';
import { RUN_PATHS } from './runs/runs.openapi.js';
import { SCHEDULE_PATHS } from './schedules/schedules.openapi.js';
import { SENSOR_PATHS } from './sensors/sensors.openapi.js';
import { SIGNING_SECRET_PATHS } from './signing-secret/signing-secret.openapi.js';
import { STATS_PATHS } from './stats/stats.openapi.js';
import { SUBSCRIPTION_PATHS } from './subscriptions/subscriptions.openapi.js';
import { VERSION_PATHS } from './versions/versions.openapi.js';
import { WORKER_PATHS } from './workers/workers.openapi.js';

export const OPENAPI_DOCUMENT: OpenApiDocument = {
  openapi: '3.1.0',
  info: {
    title: 'Kairos REST API',
    version: 'v1',
    description: [
      'Kairos is a durable, distributed scheduler: declare schedules (cron with time zones and DST policies, fixed intervals, one-shot timers) and ad-hoc runs; Kairos fires each slot exactly once, runs its target, retries, dead-letters and keeps a ledger that explains every run.',
      '',
      'Instants are ISO 8601; responses give them in UTC with `Z`. Durations are written `90s`, `15m`, `1h30m` or as integer milliseconds. Lists are paginated with `?limit=&cursor=` and answer `{ items, nextCursor }`. Every error is `{ code, message, field }`.',
    ].join('\n'),
  },
  tags: [
    { name: 'schedules', description: 'Declare, change and inspect schedules; trigger, backfill and preview them.' },
    { name: 'sensors', description: 'Handlers evaluated on a schedule with a cursor, which ask for runs by run key: declare, pause, inspect, move or reset them.' },
    { name: 'runs', description: 'Executions of a target: ad-hoc runs, their history, cancellation and retry.' },
    { name: 'dead-letters', description: 'Runs that ended dead, and republishing them.' },
    { name: 'workers', description: 'The workers of the cluster, their queues and handlers, and the versions of the code they run.' },
    { name: 'queues', description: "The namespace's queues: their limits, and what runs, waits and is held on them." },
    { name: 'cron', description: 'Stateless previews of a cron or interval.' },
    { name: 'cluster', description: 'Who the caller is, and the state of the cluster, for the dashboard.' },
    { name: 'signing-secret', description: 'The secret webhook deliveries are signed with, and its rotation.' },
    { name: 'calendars', description: 'Named sets of local dates (explicit dates, public holidays of a country and region) that the schedules naming them do not fire on.' },
    { name: 'events', description: 'What applications emit: each event starts the runs of the schedules listening to it, and resumes the durable functions waiting for it.' },
    { name: 'subscriptions', description: "Webhooks told of the namespace's events (a run dead, a schedule late, ...), signed and retried: declare, pause, test them and read their deliveries." },
  ],
  // Either a key or, unless KAIROS_AUTH=required, none (the default namespace with every scope).
  security: [{ apiKey: [] }, {}],
  paths: { ...SCHEDULE_PATHS, ...SENSOR_PATHS, ...RUN_PATHS, ...STATS_PATHS, ...DEAD_LETTER_PATHS, ...WORKER_PATHS, ...VERSION_PATHS, ...QUEUE_PATHS, ...CRON_PATHS, ...SIGNING_SECRET_PATHS, ...SUBSCRIPTION_PATHS, ...CALENDAR_PATHS, ...EVENT_PATHS, ...CLUSTER_PATHS },
  components: {
    schemas: SCHEMAS,
    parameters: PARAMETERS,
    responses: RESPONSES,
    securitySchemes: {
      apiKey: {
        type: 'http',
        scheme: 'bearer',
        bearerFormat: 'kairos_<prefix>_<secret>',
        description:
          'An API key (`kairos keys create`), sent as `Authorization: Bearer <key>`. A key opens its own namespace only. Scopes: `read` for GET and POST /v1/cron/preview, `write` for every other request. Without a key a request acts in the default namespace with every scope, unless the server runs with KAIROS_AUTH=required.',
      },
    },
  },
};
