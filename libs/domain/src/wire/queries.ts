/**
 * The REST API's query parameters, declared once: what the document lists for each operation and
 * what reads them. REST passes query-string text and GraphQL typed arguments; both are read here, so
 * the limits and refusals are one. An absent, null or empty parameter means none was given.
 */
import { z } from 'zod';
import { QUEUE_NAME_PATTERN } from '../handlers.js';
import { isUuid } from '../ids.js';
import { DEFAULT_PREVIEW_COUNT, MAX_PREVIEW_COUNT } from '../preview.js';
import { checkStorableText } from '../json-readers.js';
import { checkedBy, integer, readWire, worded } from './read.js';
import { queryShape } from './registry.js';
import { InstantInput, RunState, ScheduleStatus, instantMs } from './shared.js';

export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 500;

const given = (value: unknown) => (value === '' || value === null ? undefined : value);

/** A parameter as `schema` reads it once it was given. */
function param<T extends z.ZodType>(schema: T, description: string) {
  return z.preprocess(given, schema).describe(description);
}

/** An integer parameter: query-string text is read as a number (`?limit=20`), as JavaScript reads it. */
function integerParam(min: number, max: number, fallback: number, description: string) {
  const read = (value: unknown) => (typeof value === 'string' ? Number(value) : value);
  return param(z.preprocess(read, integer(min, max).meta({ default: fallback })).default(fallback), description);
}

const storableText = z.string().check(checkedBy((value, field) => checkStorableText(value as string, field)));

const limit = integerParam(1, MAX_PAGE_SIZE, DEFAULT_PAGE_SIZE, 'Page size.');
const cursor = param(storableText.optional(), "The previous page's nextCursor, unchanged (INVALID_CURSOR otherwise).");
const scheduleId = (description: string) => param(z.guid(worded((field) => `${field} must be a UUID`)).optional(), description);

/** `label=team:billing` filters on one label. */
const label = param(
  storableText
    .regex(/^[^:]+:/, worded((field) => `${field} must look like key:value`))
    .meta({ examples: ['team:billing'] })
    .transform((value) => {
      const at = value.indexOf(':');
      return { key: value.slice(0, at), value: value.slice(at + 1) };
    })
    .optional(),
  'Only schedules carrying this label, written key:value.',
);

export const PageQuery = queryShape('PageQuery', z.object({ limit, cursor }));

export const EventListQuery = queryShape('EventListQuery', z.object({ limit, cursor, name: param(storableText.optional(), 'Only events of this exact name.') }));

export const ScheduleListQuery = queryShape(
  'ScheduleListQuery',
  z.object({
    limit,
    cursor,
    status: param(ScheduleStatus.optional(), 'Only schedules in this status.'),
    name: param(storableText.optional(), 'Only the schedule of this exact name.'),
    label,
  }),
);

export const RunListQuery = queryShape(
  'RunListQuery',
  z.object({ scheduleId: scheduleId('Only runs of this schedule.'), state: param(RunState.optional(), 'Only runs in this state.'), limit, cursor }),
);

export const DeadLetterListQuery = queryShape('DeadLetterListQuery', z.object({ scheduleId: scheduleId('Only dead runs of this schedule.'), limit, cursor }));

export const PreviewQuery = queryShape(
  'PreviewQuery',
  z.object({
    count: integerParam(1, MAX_PREVIEW_COUNT, DEFAULT_PREVIEW_COUNT, 'How many instants.'),
    after: param(instantMs(InstantInput).optional(), 'List instants after this one. Default: now.'),
  }),
);

const scheduleIdList = (() => {
  const listed = (value: string) => value.split(',').filter((id) => id !== '');
  const wording = worded((field) => `${field} must be 1 to ${MAX_PAGE_SIZE} schedule UUIDs separated by commas`);
  return z
    .string(wording)
    .refine((value) => {
      const ids = listed(value);
      return ids.length >= 1 && ids.length <= MAX_PAGE_SIZE && ids.every(isUuid);
    }, wording)
    .transform(listed);
})();

export const LatestTicksQuery = queryShape(
  'LatestTicksQuery',
  z.object({ scheduleIds: param(scheduleIdList, `1 to ${MAX_PAGE_SIZE} schedule ids separated by commas.`) }),
);

const isoDate = (description: string) => param(storableText.regex(/^\d{4}-\d{2}-\d{2}$/, worded((field) => `${field} must be a date written YYYY-MM-DD`)).optional(), description);

export const CalendarDatesQuery = queryShape(
  'CalendarDatesQuery',
  z.object({ from: isoDate('The first date listed. Default: today (UTC).'), to: isoDate('The last date listed, at most ten years after from. Default: twelve months after from.') }),
);

/** The buckets GET /v1/stats/runs counts runs in, and their lengths in milliseconds. */
export const RUN_STATS_BUCKETS = { '1m': 60_000, '1h': 3_600_000, '1d': 86_400_000 } as const;
export type RunStatsBucket = keyof typeof RUN_STATS_BUCKETS;

export const RunStatsQuery = queryShape(
  'RunStatsQuery',
  z.object({
    scheduleId: scheduleId('Only runs of this schedule.'),
    queue: param(
      storableText.regex(QUEUE_NAME_PATTERN, worded((field) => `${field} must be 1 to 64 letters, digits, "_", "." or "-"`)).optional(),
      'Only runs travelling on this queue: a handler target names its queue; HTTP targets and handler targets naming none travel on "default", multi-step runs on none.',
    ),
    since: param(instantMs(InstantInput).optional(), 'The start of the window, rounded down to the start of its bucket. Default: 24 hours before until.'),
    until: param(instantMs(InstantInput).optional(), 'The end of the window (excluded). Default: now.'),
    bucket: param(
      z.enum(Object.keys(RUN_STATS_BUCKETS) as [RunStatsBucket, ...RunStatsBucket[]]).optional(),
      'The length of a bucket: 1m, 1h or 1d, aligned on UTC. Default: 1h.',
    ),
  }),
);

/** The order parameters are checked in: a listing's filters before its page. */
const PARAMETER_ORDER = ['scheduleId', 'status', 'state', 'name', 'label', 'limit', 'cursor', 'count', 'after', 'from', 'to', 'queue', 'since', 'until', 'bucket'];

/** The parameters of a listing or preview, read and checked; the first fault is a ValidationError naming the parameter. */
export function readQuery<T extends z.ZodType>(shape: T, params: Record<string, unknown>): z.output<T> {
  return readWire(shape, params, PARAMETER_ORDER);
}
