/** The OpenAPI description of the dashboard's read routes (cluster.controller.ts), merged into the document's paths. */
import { queryParameters, ref } from '../openapi/openapi.schemas.js';
import type { OperationObject, PathItemObject, ReferenceObject, SchemaObject } from '../openapi/openapi.types.js';

const errorRef = (name: string): ReferenceObject => ({ $ref: `#/components/responses/${name}` });

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
    get: read('whoami', "The caller's namespace, actor and scopes", ref('WhoAmI')),
  },
  '/v1/cluster': {
    get: read('getCluster', 'The leader lease, live scheduler sessions, the schedulers and their partitions, run counts of the namespace, queue depths and recent outages', ref('Cluster')),
  },
  '/v1/ticks/latest': {
    get: read(
      'latestTicks',
      'The newest tick of each listed schedule (schedules without ticks are left out)',
      ref('LatestTickList'),
      {
        parameters: queryParameters('LatestTicksQuery'),
      },
      true,
    ),
  },
};
