/**
 * The wire shapes of POST /v1/runs/bulk: cancel or retry every run a filter matches, in pages, or
 * count them (a dry run). The filter is read here once for REST, GraphQL, the SDK and the CLI.
 */
import { z } from 'zod';
import { QUEUE_NAME_PATTERN } from '../handlers.js';
import type { ReasonCode } from '../reason-codes.js';
import type { RunState as DomainRunState } from '../closed-sets.js';
import { closedObject, present, readWire, text, worded } from './read.js';
import { component, defaulted } from './registry.js';
import { InstantInput, instantMs, ReasonCodeSchema, RunState } from './shared.js';

/** What a bulk request does to each run its filter matches. */
export const RUN_BULK_ACTIONS = ['cancel', 'retry'] as const;
export type RunBulkAction = (typeof RUN_BULK_ACTIONS)[number];

/** How many run ids a bulk answer names. */
export const RUN_BULK_SAMPLE_SIZE = 10;

const FILTER_FIELDS = ['scheduleId', 'state', 'reasonCode', 'queue', 'createdAfter', 'createdBefore'] as const;

export const RunBulkFilter = component(
  'RunBulkFilter',
  closedObject({
    scheduleId: z
      .guid(worded((field) => `${field} must be a UUID`))
      .nullable()
      .optional()
      .describe('Only runs of this schedule.'),
    state: z
      .array(RunState, worded((field) => `${field} must be an array of run states`))
      .min(1, worded((field) => `${field} must name at least one run state`))
      .nullable()
      .optional()
      .describe('Only runs in one of these states (intersected with the states the action acts on).'),
    reasonCode: ReasonCodeSchema.nullable().optional().describe('Only runs carrying this reason code (a deferred run its defer reason, an ended run its verdict).'),
    queue: text(64)
      .regex(QUEUE_NAME_PATTERN, worded((field) => `${field} must be 1 to 64 letters, digits, "_", "." or "-"`))
      .nullable()
      .optional()
      .describe("Only runs travelling on this queue (a multi-step run: one with a step on it). HTTP targets and unqueued handlers travel on \"default\"."),
    createdAfter: instantMs(InstantInput).nullable().optional().describe('Only runs created at or after this instant.'),
    createdBefore: instantMs(InstantInput).nullable().optional().describe('Only runs created before this instant.'),
  }).superRefine((filter, payload) => {
    if (FILTER_FIELDS.every((field) => filter[field] === undefined || filter[field] === null)) {
      payload.addIssue({
        code: 'custom',
        path: [],
        message: `filter must set at least one of ${FILTER_FIELDS.join(', ')}; an empty filter would match every run of the namespace`,
      });
    } else if (typeof filter.createdAfter === 'number' && typeof filter.createdBefore === 'number' && filter.createdAfter >= filter.createdBefore) {
      payload.addIssue({ code: 'custom', path: ['createdAfter'], message: 'filter.createdAfter must be before filter.createdBefore' });
    }
  }),
  "Which runs of the caller's namespace a bulk action is for; at least one field is set. A step of a multi-step run is never matched itself: its run is.",
);

export const RunBulkRequest = component(
  'RunBulkRequest',
  closedObject({
    action: present(z.enum(RUN_BULK_ACTIONS), (field) => `${field} is required: "cancel" or "retry"`).describe(
      'cancel: every active run matched (queued, running, sleeping, waiting) is cancelled as POST /v1/runs/:id/cancel does. retry: every run matched that POST /v1/runs/:id/retry accepts (failed, dead or cancelled) gets a fresh run (origin retry, sourceRunId set).',
    ),
    filter: present(RunBulkFilter, (field) => `${field} is required: at least one of ${FILTER_FIELDS.join(', ')}`),
    dryRun: defaulted(z.boolean().nullable(), false, 'Count and sample the runs the action would act on, and change nothing.'),
  }),
  'Cancel or retry every run a filter matches, in pages of 500 runs per transaction.',
  [{ action: 'cancel', filter: { state: ['queued'], queue: 'reports' }, dryRun: true }],
);

export const RunBulkResult = component(
  'RunBulkResult',
  z.strictObject({
    matched: z.int().min(0).describe('Runs the filter matched that the action acts on: for cancel the active ones, for retry those POST /v1/runs/:id/retry accepts (failed, dead or cancelled).'),
    acted: z.int().min(0).describe('Runs cancelled (or asked to stop, when running) or retried; a run that ended, or was retried, meanwhile is not. 0 on a dry run.'),
    sample: z
      .array(z.guid())
      .max(RUN_BULK_SAMPLE_SIZE)
      .describe(`Up to ${RUN_BULK_SAMPLE_SIZE} ids of runs acted on (a dry run: that would be), oldest first; retry names the source runs.`),
  }),
  'What a bulk action matched and did.',
);

/** A bulk filter as the ledger reads it: absent and null fields dropped, instants as Dates. */
export interface RunBulkFilterRequest {
  scheduleId?: string;
  state?: DomainRunState[];
  reasonCode?: ReasonCode;
  queue?: string;
  createdAfter?: Date;
  createdBefore?: Date;
}

export interface RunBulkRequestBody {
  action: RunBulkAction;
  filter: RunBulkFilterRequest;
  dryRun: boolean;
}

/** A POST /v1/runs/bulk body (or the GraphQL bulkRuns arguments), refused as 400 naming its field. */
export function readRunBulkRequest(body: unknown): RunBulkRequestBody {
  const read = readWire(RunBulkRequest, body);
  const f = read.filter;
  const filter: RunBulkFilterRequest = {};
  if (f.scheduleId != null) filter.scheduleId = f.scheduleId.toLowerCase();
  if (f.state != null) filter.state = [...new Set(f.state)];
  if (f.reasonCode != null) filter.reasonCode = f.reasonCode;
  if (f.queue != null) filter.queue = f.queue;
  if (f.createdAfter != null) filter.createdAfter = new Date(f.createdAfter);
  if (f.createdBefore != null) filter.createdBefore = new Date(f.createdBefore);
  return { action: read.action, filter, dryRun: read.dryRun ?? false };
}
