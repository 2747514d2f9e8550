/** The OpenAPI 3.1 description of REST /v1, served at GET /docs/openapi.json and rendered by Swagger UI at /docs. */
import { PARAMETERS, PATHS, RESPONSES } from './openapi.paths.js';
import { SCHEMAS } from './openapi.schemas.js';
import type { OpenApiDocument } from './openapi.types.js';

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
    { name: 'runs', description: 'Executions of a target: ad-hoc runs, their history, cancellation and retry.' },
    { name: 'dead-letters', description: 'Runs that ended dead, and republishing them.' },
    { name: 'workers', description: 'The workers of the cluster, their queues and handlers.' },
    { name: 'cron', description: 'Stateless previews of a cron or interval.' },
  ],
  // Either a key or, unless KAIROS_AUTH=required, none (the default namespace with every scope).
  security: [{ apiKey: [] }, {}],
  paths: PATHS,
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
