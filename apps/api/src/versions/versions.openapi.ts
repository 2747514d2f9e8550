/** The versions route of the OpenAPI document. */
import { json, operation } from '../openapi/openapi.operations.js';
import type { PathItemObject } from '../openapi/openapi.types.js';

export const VERSION_PATHS: Record<string, PathItemObject> = {
  '/v1/versions': {
    get: operation({
      operationId: 'listVersions',
      tags: ['workers'],
      summary: 'List the versions of the code in flight',
      description:
        "Per queue and version, by queue then version: the live workers running it (seen in the last minute and not stopped; workers serve every namespace), the runs of the caller's namespace it claimed that have not ended (activeRuns), and of those the runs held until a worker of their version runs (pinnedWaiting, deferReason VERSION_UNAVAILABLE). A queue and version with neither a live worker nor an active run is left out. Once a version has no active runs, its last worker may be stopped. Not paginated.",
      ok: { 200: json('VersionList', 'The versions, by queue then version.') },
      errors: [],
    }),
  },
};
