/** The schedules table's columns as SQL returns them, and their translation to and from a ScheduleSpec. */
import type { CalendarRule, ConcurrencySpec, FairnessSpec, FlowControl, CatchupMode, DstGapPolicy, DstOverlapPolicy, JsonValue, OverlapPolicy, RetryPolicy, ScheduleKind, ScheduleSpec, ScheduleStatus, Target } from '@kairos/domain';

/** Every column of schedules, camelCased by the SELECT list below. */
export interface ScheduleRow {
  id: string;
  namespaceId: string;
  name: string;
  kind: ScheduleKind;
  cron: string | null;
  everyMs: number | null;
  at: Date | null;
  /** An event schedule's event name and match; null for the clock's schedules. */
  onEvent: string | null;
  onMatch: Record<string, JsonValue> | null;
  timezone: string;
  dstGap: DstGapPolicy;
  dstOverlap: DstOverlapPolicy;
  catchupMode: CatchupMode;
  catchupWindowMs: number | null;
  catchupLimit: number | null;
  overlap: OverlapPolicy;
  target: Target;
  payload: JsonValue | null;
  retry: RetryPolicy;
  timeoutMs: number;
  concurrency: ConcurrencySpec | null;
  priority: number;
  fairness: FairnessSpec | null;
  startAt: Date | null;
  endAt: Date | null;
  maxRuns: number | null;
  jitterMs: number;
  labels: Record<string, string>;
  expectSucceededWithinMs: number | null;
  calendar: CalendarRule | null;
  /** The flow controls of a schedule started by events. */
  flow: FlowControl | null;
  /** The first late slot of the lateness under way; null while the schedule keeps its deadlines. */
  lateSince: Date | null;
  idempotencyKey: string | null;
  specHash: string;
  /** The apply source whose files declare it; null for a schedule made only through the API. */
  source: string | null;
  status: ScheduleStatus;
  nextFireAt: Date | null;
  lastFireAt: Date | null;
  fireCount: number;
  pausedAt: Date | null;
  resumedAt: Date | null;
  completedAt: Date | null;
  deletedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export const SCHEDULE_COLUMNS = `
  s.id, s.namespace_id AS "namespaceId", s.name, s.kind, s.cron, s.every_ms AS "everyMs", s.at, s.on_event AS "onEvent", s.on_match AS "onMatch", s.timezone,
  s.dst_gap AS "dstGap", s.dst_overlap AS "dstOverlap", s.catchup_mode AS "catchupMode",
  s.catchup_window_ms AS "catchupWindowMs", s.catchup_limit AS "catchupLimit", s.overlap, s.target, s.payload,
  s.retry, s.timeout_ms AS "timeoutMs", s.concurrency, s.priority, s.fairness, s.start_at AS "startAt", s.end_at AS "endAt", s.max_runs AS "maxRuns",
  s.jitter_ms AS "jitterMs", s.labels, s.expect_succeeded_within_ms AS "expectSucceededWithinMs", s.calendar, s.flow, s.late_since AS "lateSince",
  s.idempotency_key AS "idempotencyKey", s.spec_hash AS "specHash", s.source, s.status,
  s.next_fire_at AS "nextFireAt", s.last_fire_at AS "lastFireAt", s.fire_count AS "fireCount",
  s.paused_at AS "pausedAt", s.resumed_at AS "resumedAt", s.completed_at AS "completedAt",
  s.deleted_at AS "deletedAt", s.created_at AS "createdAt", s.updated_at AS "updatedAt"`;

/** When the schedule was last planned from: made, or resumed or redefined since (its cursor restarted then). */
export function plannedFrom(row: Pick<ScheduleRow, 'createdAt' | 'resumedAt'>): number {
  return Math.max(row.createdAt.getTime(), row.resumedAt?.getTime() ?? 0);
}

export function specOf(row: ScheduleRow): ScheduleSpec {
  return {
    name: row.name,
    timing:
      row.kind === 'cron'
        ? { kind: 'cron', cron: row.cron! }
        : row.kind === 'every'
          ? { kind: 'every', everyMs: row.everyMs! }
          : row.kind === 'event'
            ? { kind: 'event', event: row.onEvent!, match: row.onMatch ?? {} }
            : { kind: 'at', atMs: row.at!.getTime() },
    timezone: row.timezone,
    dst: { gap: row.dstGap, overlap: row.dstOverlap },
    catchup: { mode: row.catchupMode, windowMs: row.catchupWindowMs, limit: row.catchupLimit },
    overlap: row.overlap,
    target: row.target,
    payload: row.payload,
    retry: row.retry,
    timeoutMs: row.timeoutMs,
    concurrency: row.concurrency,
    priority: row.priority,
    fairness: row.fairness,
    startAtMs: row.startAt?.getTime() ?? null,
    endAtMs: row.endAt?.getTime() ?? null,
    maxRuns: row.maxRuns,
    jitterMs: row.jitterMs,
    labels: row.labels,
    expect: row.expectSucceededWithinMs === null ? null : { succeededWithinMs: row.expectSucceededWithinMs },
    calendar: row.calendar,
    flow: row.flow,
  };
}

/** The spec's columns by name, JSON columns as their values: a record for json_to_recordset. */
export function specRecord(spec: ScheduleSpec): Record<SpecColumn, unknown> {
  return {
    kind: spec.timing.kind,
    cron: spec.timing.kind === 'cron' ? spec.timing.cron : null,
    every_ms: spec.timing.kind === 'every' ? spec.timing.everyMs : null,
    at: spec.timing.kind === 'at' ? new Date(spec.timing.atMs) : null,
    on_event: spec.timing.kind === 'event' ? spec.timing.event : null,
    on_match: spec.timing.kind === 'event' ? spec.timing.match : null,
    timezone: spec.timezone,
    dst_gap: spec.dst.gap,
    dst_overlap: spec.dst.overlap,
    catchup_mode: spec.catchup.mode,
    catchup_window_ms: spec.catchup.windowMs,
    catchup_limit: spec.catchup.limit,
    overlap: spec.overlap,
    target: spec.target,
    payload: spec.payload,
    retry: spec.retry,
    timeout_ms: spec.timeoutMs,
    concurrency: spec.concurrency,
    start_at: spec.startAtMs === null ? null : new Date(spec.startAtMs),
    end_at: spec.endAtMs === null ? null : new Date(spec.endAtMs),
    max_runs: spec.maxRuns,
    jitter_ms: spec.jitterMs,
    labels: spec.labels,
    expect_succeeded_within_ms: spec.expect?.succeededWithinMs ?? null,
    calendar: spec.calendar,
    flow: spec.flow,
    priority: spec.priority,
    fairness: spec.fairness,
  };
}

/** Column values of a spec, in the order of SPEC_COLUMN_NAMES, JSON columns as their text (a null payload stays null). */
export function specColumnValues(spec: ScheduleSpec): unknown[] {
  const record = specRecord(spec);
  return SPEC_COLUMN_NAMES.map((c, i) => (SPEC_COLUMN_TYPES[i]!.startsWith('json') && record[c] !== null ? JSON.stringify(record[c]) : record[c]));
}

/** The SQL type of each spec column, in the order of SPEC_COLUMN_NAMES. */
export const SPEC_COLUMN_TYPES = [
  'text',
  'text',
  'bigint',
  'timestamptz',
  'text',
  'text',
  'text',
  'text',
  'bigint',
  'integer',
  'text',
  'jsonb',
  'json',
  'jsonb',
  'bigint',
  'timestamptz',
  'timestamptz',
  'integer',
  'bigint',
  'jsonb',
  'jsonb',
  'bigint',
  'jsonb',
  'text',
  'jsonb',
  'jsonb',
  'smallint',
  'jsonb',
] as const;

export const SPEC_COLUMN_NAMES = [
  'kind',
  'cron',
  'every_ms',
  'at',
  'timezone',
  'dst_gap',
  'dst_overlap',
  'catchup_mode',
  'catchup_window_ms',
  'catchup_limit',
  'overlap',
  'target',
  'payload',
  'retry',
  'timeout_ms',
  'start_at',
  'end_at',
  'max_runs',
  'jitter_ms',
  'labels',
  'concurrency',
  'expect_succeeded_within_ms',
  'calendar',
  'on_event',
  'on_match',
  'flow',
  'priority',
  'fairness',
] as const;

export type SpecColumn = (typeof SPEC_COLUMN_NAMES)[number];
