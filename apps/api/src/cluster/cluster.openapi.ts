/** The OpenAPI description of the dashboard's read routes (cluster.controller.ts), merged into the document's paths. */
import { MAX_PAGE_SIZE } from '@kairos/ledger';
import type { OperationObject, PathItemObject, ReferenceObject, SchemaObject } from '../openapi/openapi.types.js';

const errorRef = (name: string): ReferenceObject => ({ $ref: `#/components/responses/${name}` });
const instant: SchemaObject = { type: 'string', format: 'date-time' };
const counts: SchemaObject = { type: 'object', additionalProperties: { type: 'integer', minimum: 0 } };

function read(operationId: string, summary: string, schema: SchemaObject, extra: Partial<OperationObject> = {}, badRequest = false): OperationObject {
  return {
    operationId,
    tags: ['cluster'],
    summary,
    ...extra,
    responses: {
      200: { description: summary, content: { 'application/json': { schema } } },
      ...(badRequest ? { 400: errorRef('BadRequest') } : {}),
      401: errorRef('Unauthorized'),
      403: errorRef('Forbidden'),
      500: errorRef('Internal'),
    },
  };
}

export const CLUSTER_PATHS: Record<string, PathItemObject> = {
  '/v1/whoami': {
    get: read('whoami', "The caller's namespace, actor and scopes", {
      type: 'object',
      required: ['namespaceId', 'actor', 'scopes'],
      additionalProperties: false,
      properties: {
        namespaceId: { type: 'string', format: 'uuid' },
        actor: { type: 'string' },
        scopes: { type: 'array', items: { type: 'string', enum: ['read', 'write', 'admin'] } },
      },
    }),
  },
  '/v1/cluster': {
    get: read('getCluster', 'The leader lease, live scheduler sessions, the schedulers and their partitions, run counts of the namespace, queue depths and recent outages', {
      type: 'object',
      required: ['leader', 'sessions', 'schedulers', 'partitions', 'runs', 'queue', 'outages'],
      additionalProperties: false,
      properties: {
        leader: {
          oneOf: [
            { type: 'null' },
            {
              type: 'object',
              required: ['holder', 'epoch', 'expiresAt', 'live'],
              additionalProperties: false,
              properties: { holder: { type: 'string' }, epoch: { type: 'integer', minimum: 1 }, expiresAt: instant, live: { type: 'boolean' } },
            },
          ],
        },
        sessions: {
          type: 'array',
          items: {
            type: 'object',
            required: ['holder', 'startedAt', 'lastSeenAt'],
            additionalProperties: false,
            properties: { holder: { type: 'string' }, startedAt: instant, lastSeenAt: instant },
          },
        },
        schedulers: {
          type: 'array',
          description: 'The scheduler processes sharing the tick, oldest first, with the partitions each owns now.',
          items: {
            type: 'object',
            required: ['holder', 'hostname', 'pid', 'startedAt', 'lastSeenAt', 'live', 'partitions'],
            additionalProperties: false,
            properties: {
              holder: { type: 'string' },
              hostname: { type: 'string' },
              pid: { type: 'integer' },
              startedAt: instant,
              lastSeenAt: instant,
              live: { type: 'boolean', description: 'Its heartbeat is fresher than the lease TTL.' },
              partitions: { type: 'array', items: { type: 'integer', minimum: 0, maximum: 15 } },
            },
          },
        },
        partitions: {
          type: 'array',
          description: 'Every tick partition (schedules fall into 16 by a hash of their id) and its lease.',
          items: {
            type: 'object',
            required: ['partition', 'holder', 'epoch', 'expiresAt', 'live', 'coveredSince'],
            additionalProperties: false,
            properties: {
              partition: { type: 'integer', minimum: 0, maximum: 15 },
              holder: { type: ['string', 'null'], description: 'Null for a partition never owned.' },
              epoch: { type: 'integer', minimum: 0 },
              expiresAt: instant,
              live: { type: 'boolean' },
              coveredSince: { ...instant, description: 'Since when it has been owned without a gap: slots due before this fell into an outage.' },
            },
          },
        },
        runs: { ...counts, description: 'Runs of the namespace by state.' },
        queue: { ...counts, description: 'BullMQ jobs by state (waiting, active, delayed, failed, prioritized).' },
        outages: {
          type: 'array',
          description: 'The ten most recent spans without a leader, or without an owner of one partition, newest first.',
          items: {
            type: 'object',
            required: ['startedAt', 'endedAt', 'reasonCode', 'partition'],
            additionalProperties: false,
            properties: {
              startedAt: instant,
              endedAt: instant,
              reasonCode: { type: 'string' },
              partition: { type: ['integer', 'null'], minimum: 0, maximum: 15, description: 'Null for a span without a leader.' },
            },
          },
        },
      },
    }),
  },
  '/v1/ticks/latest': {
    get: read(
      'latestTicks',
      'The newest tick of each listed schedule (schedules without ticks are left out)',
      {
        type: 'object',
        required: ['items'],
        additionalProperties: false,
        properties: {
          items: {
            type: 'array',
            items: {
              type: 'object',
              required: ['scheduleId', 'scheduledFor', 'outcome', 'reasonCode', 'runId'],
              additionalProperties: false,
              properties: {
                scheduleId: { type: 'string', format: 'uuid' },
                scheduledFor: instant,
                outcome: { type: 'string', enum: ['triggered', 'skipped', 'missed', 'error'] },
                reasonCode: { type: 'string' },
                runId: { type: ['string', 'null'], format: 'uuid' },
              },
            },
          },
        },
      },
      {
        parameters: [
          {
            name: 'scheduleIds',
            in: 'query',
            required: true,
            description: `1 to ${MAX_PAGE_SIZE} schedule ids separated by commas.`,
            schema: { type: 'string' },
          },
        ],
      },
      true,
    ),
  },
};
