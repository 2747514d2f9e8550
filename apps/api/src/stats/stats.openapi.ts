/** The run statistics route of the OpenAPI document. */
import { json, operation } from '../openapi/openapi.operations.js';
import { queryParameters } from '../openapi/openapi.schemas.js';
import type { PathItemObject } from '../openapi/openapi.types.js';

export const STATS_PATHS: Record<string, PathItemObject> = {
  '/v1/stats/runs': {
    get: operation({
      operationId: 'runStats',
      tags: ['runs'],
      summary: 'Count the runs that ended in a window, by bucket',
      description: [
        "The namespace's runs that ended in the window, each counted once, in the bucket holding its `finishedAt` (the instant it reached its terminal state). Buckets are 1m, 1h or 1d long and aligned on UTC; `since` is rounded down to the start of its bucket, and the window ends before `until`. Every bucket is listed, oldest first, empty ones with zero counts and null percentiles. Default: the 24 hours before now, in buckets of 1h.",
        '',
        'Counts are by terminal state: `succeeded`, `failed` (the run ended failed without being dead-lettered, as a run whose concurrency key could not be resolved or a failed sensor evaluation does; an attempt that failed and will be retried is not counted, and a run whose retries ran out ends `dead`), `dead` and `cancelled`. A multi-step run counts once, its steps are not counted apart.',
        '',
        '`durationP50Ms` and `durationP95Ms` are percentiles (percentile_cont, interpolated) of `finishedAt − startedAt` over the runs that started (a run cancelled while queued has no duration); `latenessP95Ms` is the 95th percentile of `startedAt − scheduledFor`, a run started ahead of its slot counting as 0.',
        '',
        'Only runs created at most 24 hours (the longest timeout of one attempt) before `since` are looked at: the ledger finds the runs by their time-ordered ids, without an index on `finishedAt`, so a run that took longer from its creation to its end is not counted.',
      ].join('\n'),
      parameters: queryParameters('RunStatsQuery'),
      ok: { 200: json('RunStats', 'The buckets of the window, oldest first.') },
      errors: [400],
    }),
  },
};
