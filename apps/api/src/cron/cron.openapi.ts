/** The stateless preview route of the OpenAPI document. */
import { body, json, operation } from '../openapi/openapi.operations.js';
import type { PathItemObject } from '../openapi/openapi.types.js';

export const CRON_PATHS: Record<string, PathItemObject> = {
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
