/**
 * The insert of ScheduleRepository.createMany. Its rows go in as one JSON document read with
 * json_to_recordset, and each written row comes back as only what the database decides or
 * rewrites: the rest of the row is what was written. Reading every column back (47, timestamps
 * and JSON parsed again for each) cost the batch route as much as writing them.
 */
import type { CalendarRule, ConcurrencySpec, FairnessSpec, FlowControl, JsonValue, RetryPolicy, ScheduleSpec, Target } from '@kairos/domain';
import { SPEC_COLUMN_NAMES, SPEC_COLUMN_TYPES, specRecord, type ScheduleRow } from './schedule-row.js';

/** A schedule to create: what the API read, with its first slot. */
export interface NewSchedule {
  id: string;
  namespaceId: string;
  name: string;
  spec: ScheduleSpec;
  specHash: string;
  paused: boolean;
  idempotencyKey: string | null;
  /** requestHash of the create request, when it carries an idempotency key. */
  requestHash: string | null;
  /** Null for a schedule started by events, which has no slots. */
  nextFireAt: Date | null;
  /**
   * The instant the API read the request at (the database's clock), which anchors an `every`
   * schedule without startAt: its first slot was computed from it, so the tick's grid must be too.
   * Absent: the transaction's now().
   */
  createdAt?: Date;
  /** The apply source declaring it; none when made through the API. */
  source?: string | null;
}

/**
 * What the insert returns of a written row: its identity, the instants of the database's clock
 * (created_at when none was given, updated_at, paused_at), and the jsonb columns, whose stored
 * form orders an object's keys its own way.
 */
export interface InsertedColumns {
  id: string;
  namespaceId: string;
  createdAt: Date;
  updatedAt: Date;
  pausedAt: Date | null;
  target: Target;
  retry: RetryPolicy;
  labels: Record<string, string>;
  concurrency: ConcurrencySpec | null;
  fairness: FairnessSpec | null;
  calendar: CalendarRule | null;
  onMatch: Record<string, JsonValue> | null;
  flow: FlowControl | null;
}

const isJson = (i: number): boolean => SPEC_COLUMN_TYPES[i]!.startsWith('json');

/**
 * A JSON column's value is read from the document as its text and cast here: json_to_recordset
 * converting each row's JSON to jsonb itself cost several times the rest of the statement. The
 * payload travels as a JSON string of its text, kept exactly (its keys as given, a \u0000 escaped).
 */
export const INSERT_SCHEDULES = `INSERT INTO schedules AS s (${SPEC_COLUMN_NAMES.join(', ')}, id, namespace_id, name, spec_hash, idempotency_key,
                                   status, paused_at, next_fire_at, request_hash, source, created_at)
       SELECT ${SPEC_COLUMN_NAMES.map((c, i) => (isJson(i) ? `${c}::${SPEC_COLUMN_TYPES[i]}` : c)).join(', ')}, id, ns, name, spec_hash, ikey,
              CASE WHEN paused THEN 'paused' ELSE 'active' END, CASE WHEN paused THEN now() END, next_fire_at, request_hash, source, coalesce(created_at, now())
       FROM json_to_recordset($1::json)
         AS t(${SPEC_COLUMN_NAMES.map((c, i) => `${c} ${isJson(i) ? 'text' : SPEC_COLUMN_TYPES[i]}`).join(', ')},
              id uuid, ns uuid, name text, spec_hash text, ikey text, paused boolean, next_fire_at timestamptz, request_hash text,
              source text, created_at timestamptz, ord int)
       ORDER BY ord
       ON CONFLICT DO NOTHING
       RETURNING s.id, s.namespace_id AS "namespaceId", s.created_at AS "createdAt", s.updated_at AS "updatedAt", s.paused_at AS "pausedAt",
                 s.target, s.retry, s.labels, s.concurrency, s.fairness, s.calendar, s.on_match AS "onMatch", s.flow`;

/** A schedule's row in INSERT_SCHEDULES's document; `payload` is its payload's JSON text (null for none). */
export function insertRecord(s: NewSchedule, ord: number, payload: string | null): Record<string, unknown> {
  // Assigned onto the spec's record rather than spread with fields after it, which costs V8 several µs a row.
  return Object.assign(specRecord(s.spec), {
    payload,
    id: s.id,
    ns: s.namespaceId,
    name: s.name,
    spec_hash: s.specHash,
    ikey: s.idempotencyKey,
    paused: s.paused,
    next_fire_at: s.nextFireAt,
    request_hash: s.requestHash,
    source: s.source ?? null,
    created_at: s.createdAt ?? null,
    ord,
  });
}

/**
 * The row of `s` as `get` reads it once the insert wrote it: the columns the insert returned, the
 * others as written (the payload parsed from its text, as the json column gives it back) and as a
 * new schedule starts (active or paused, nothing fired).
 */
export function insertedRow(s: NewSchedule, written: InsertedColumns, payload: string | null): ScheduleRow {
  const { spec } = s;
  const { timing } = spec;
  return {
    id: written.id,
    namespaceId: written.namespaceId,
    name: s.name,
    kind: timing.kind,
    cron: timing.kind === 'cron' ? timing.cron : null,
    everyMs: timing.kind === 'every' ? timing.everyMs : null,
    at: timing.kind === 'at' ? new Date(timing.atMs) : null,
    onEvent: timing.kind === 'event' ? timing.event : null,
    onMatch: written.onMatch,
    timezone: spec.timezone,
    dstGap: spec.dst.gap,
    dstOverlap: spec.dst.overlap,
    catchupMode: spec.catchup.mode,
    catchupWindowMs: spec.catchup.windowMs,
    catchupLimit: spec.catchup.limit,
    overlap: spec.overlap,
    target: written.target,
    payload: payload === null ? null : (JSON.parse(payload) as JsonValue),
    retry: written.retry,
    timeoutMs: spec.timeoutMs,
    concurrency: written.concurrency,
    priority: spec.priority,
    fairness: written.fairness,
    startAt: spec.startAtMs === null ? null : new Date(spec.startAtMs),
    endAt: spec.endAtMs === null ? null : new Date(spec.endAtMs),
    maxRuns: spec.maxRuns,
    jitterMs: spec.jitterMs,
    labels: written.labels,
    expectSucceededWithinMs: spec.expect?.succeededWithinMs ?? null,
    calendar: written.calendar,
    flow: written.flow,
    lateSince: null,
    idempotencyKey: s.idempotencyKey,
    specHash: s.specHash,
    source: s.source ?? null,
    status: s.paused ? 'paused' : 'active',
    nextFireAt: s.nextFireAt === null ? null : new Date(s.nextFireAt.getTime()),
    lastFireAt: null,
    fireCount: 0,
    pausedAt: written.pausedAt,
    resumedAt: null,
    completedAt: null,
    deletedAt: null,
    createdAt: written.createdAt,
    updatedAt: written.updatedAt,
  };
}
