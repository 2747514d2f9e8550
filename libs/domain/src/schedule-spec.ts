/**
 * A schedule's definition as the user declared it, read from untrusted JSON with every timing rule
 * (cron syntax, intervals, one-shots, zone, DST policy, catch-up, overlap, bounds, jitter) checked
 * at the edge: after parseScheduleSpec returns, the definition is valid and has a future fire (or
 * is paused, which still requires one to exist).
 */
import { createHash } from 'node:crypto';
import { ValidationError } from './errors.js';
import {
  present,
  readBoolean,
  readDuration,
  readEnum,
  readInstant,
  readInteger,
  readObject,
  readPayload,
  readString,
  readStringMap,
  type JsonObject,
} from './json-readers.js';
import { CATCHUP_MODES, OVERLAP_POLICIES, type CatchupMode, type JsonValue, type OverlapPolicy } from './closed-sets.js';
import {
  DEFAULT_RUN_TIMEOUT_MS,
  MAX_RUN_TIMEOUT_MS,
  readRetryPolicy,
  readTarget,
  type RetryPolicy,
  type Target,
} from './run-policy.js';
import {
  CronSyntaxError,
  DEFAULT_DST_POLICY,
  DST_GAP_POLICIES,
  DST_OVERLAP_POLICIES,
  isValidTimeZone,
  nextFireAfter,
  parseCron,
  type DstPolicy,
  type Recurrence,
} from './time/index.js';

export type Timing = { kind: 'cron'; cron: string } | { kind: 'every'; everyMs: number } | { kind: 'at'; atMs: number };

export interface CatchupPolicy {
  mode: CatchupMode;
  /** Missed slots older than this are not fired. Null: no window. */
  windowMs: number | null;
  /** At most this many missed slots fire (the newest). Null: no limit. */
  limit: number | null;
}

export interface ScheduleSpec {
  name: string | null;
  timing: Timing;
  timezone: string;
  dst: DstPolicy;
  catchup: CatchupPolicy;
  overlap: OverlapPolicy;
  target: Target;
  payload: JsonValue | null;
  retry: RetryPolicy;
  timeoutMs: number;
  startAtMs: number | null;
  endAtMs: number | null;
  maxRuns: number | null;
  jitterMs: number;
  labels: Record<string, string>;
}

/** What a create request carries beside the definition. */
export interface ScheduleCreateRequest {
  spec: ScheduleSpec;
  paused: boolean;
  idempotencyKey: string | null;
}

export const DEFAULT_CATCHUP: CatchupPolicy = Object.freeze({ mode: 'latest', windowMs: null, limit: null });
export const MIN_EVERY_MS = 1_000;
export const MAX_CATCHUP_LIMIT = 1_000;

/** The fields of a definition; a PATCH may send any of them (and `paused`). */
export const SPEC_FIELDS = [
  'name',
  'cron',
  'every',
  'at',
  'in',
  'timezone',
  'dst',
  'catchup',
  'overlap',
  'target',
  'payload',
  'retry',
  'timeout',
  'startAt',
  'endAt',
  'maxRuns',
  'jitter',
  'labels',
] as const;
const CREATE_FIELDS = [...SPEC_FIELDS, 'paused', 'idempotencyKey'] as const;

/** The ways to say when a schedule fires; a body gives exactly one. */
const TIMING_FIELDS = ['cron', 'every', 'at', 'in'] as const;

const NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:-]*$/;

/** A schedule's name under `name` in `obj`, if given; also checks the name a path carries. */
export function readScheduleName(obj: JsonObject): string | undefined {
  return readString(obj, 'name', '', {
    maxLength: 200,
    pattern: NAME_PATTERN,
    patternHint: 'may contain letters, digits, ".", "_", ":" and "-", and must start with a letter or digit',
  });
}

/** Reads a POST /v1/schedules (or PUT by-name) body. `nowMs` resolves `in` and checks for a future fire. */
export function parseScheduleCreate(body: unknown, nowMs: number): ScheduleCreateRequest {
  const obj = readObject(body, '', CREATE_FIELDS);
  const spec = readSpec(obj, nowMs);
  return {
    spec,
    paused: readBoolean(obj, 'paused', '') ?? false,
    idempotencyKey: readString(obj, 'idempotencyKey', '', { maxLength: 200 }) ?? null,
  };
}

function readSpec(obj: JsonObject, nowMs: number): ScheduleSpec {
  const timing = readTiming(obj, nowMs);
  const timezone = readString(obj, 'timezone', '', { maxLength: 64 }) ?? 'UTC';
  if (!isValidTimeZone(timezone)) {
    throw new ValidationError(
      'INVALID_TIMEZONE',
      'timezone',
      `unknown time zone "${timezone}"; use an IANA name such as "Europe/Berlin" or "UTC"`,
    );
  }
  const spec: ScheduleSpec = {
    name: readScheduleName(obj) ?? null,
    timing,
    timezone,
    dst: readDst(obj),
    catchup: readCatchup(obj),
    overlap: readEnum(obj, 'overlap', '', OVERLAP_POLICIES) ?? 'skip',
    target: readTarget(obj, 'target'),
    payload: readPayload(obj, 'payload', ''),
    retry: readRetryPolicy(obj, 'retry'),
    timeoutMs: readDuration(obj, 'timeout', '', { minMs: 1, maxMs: MAX_RUN_TIMEOUT_MS }) ?? DEFAULT_RUN_TIMEOUT_MS,
    startAtMs: readInstant(obj, 'startAt', '') ?? null,
    endAtMs: readInstant(obj, 'endAt', '') ?? null,
    maxRuns: readInteger(obj, 'maxRuns', '', 1, Number.MAX_SAFE_INTEGER) ?? null,
    jitterMs: readDuration(obj, 'jitter', '', { maxMs: 24 * 3_600_000 }) ?? 0,
    labels: readStringMap(obj, 'labels', '', { maxEntries: 64, maxValueLength: 256 }) ?? {},
  };
  if (spec.startAtMs !== null && spec.endAtMs !== null && spec.endAtMs <= spec.startAtMs) {
    throw new ValidationError('VALIDATION_FAILED', 'endAt', 'endAt must be later than startAt');
  }
  if (firstFireAt(spec, nowMs) === null) {
    // Name the field the caller wrote: an `in` timer is stored as `at`, and a future instant
    // that startAt or endAt rules out is not "in the past".
    const field = TIMING_FIELDS.find((k) => present(obj, k))!;
    throw new ValidationError(
      'NO_FUTURE_FIRE',
      field,
      spec.timing.kind === 'at' && spec.timing.atMs <= nowMs
        ? `${field} is in the past; give a future instant`
        : 'this schedule never fires after now within its bounds (check the expression, startAt and endAt)',
    );
  }
  return spec;
}

function readTiming(obj: JsonObject, nowMs: number): Timing {
  const given = TIMING_FIELDS.filter((k) => present(obj, k));
  if (given.length === 0) {
    throw new ValidationError(
      'MISSING_FIELD',
      'cron',
      'a schedule needs exactly one of "cron", "every", "at" or "in"',
    );
  }
  if (given.length > 1) {
    throw new ValidationError(
      'CONFLICTING_FIELDS',
      given[1]!,
      `give exactly one of "cron", "every", "at" or "in"; this request has ${given.map((g) => `"${g}"`).join(' and ')}`,
    );
  }
  switch (given[0]!) {
    case 'cron': {
      const cron = readString(obj, 'cron', '', { maxLength: 256 })!;
      try {
        parseCron(cron);
      } catch (error) {
        if (error instanceof CronSyntaxError) {
          throw new ValidationError('INVALID_CRON', 'cron', error.message);
        }
        throw error;
      }
      return { kind: 'cron', cron };
    }
    case 'every':
      return { kind: 'every', everyMs: readDuration(obj, 'every', '', { minMs: MIN_EVERY_MS })! };
    case 'at':
      return { kind: 'at', atMs: readInstant(obj, 'at', '')! };
    case 'in':
      return { kind: 'at', atMs: nowMs + readDuration(obj, 'in', '', { minMs: 1 })! };
  }
}

function readDst(obj: JsonObject): DstPolicy {
  if (!present(obj, 'dst')) return DEFAULT_DST_POLICY;
  const dst = readObject(obj.dst, 'dst', ['gap', 'overlap']);
  return {
    gap: readEnum(dst, 'gap', 'dst', DST_GAP_POLICIES) ?? DEFAULT_DST_POLICY.gap,
    overlap: readEnum(dst, 'overlap', 'dst', DST_OVERLAP_POLICIES) ?? DEFAULT_DST_POLICY.overlap,
  };
}

function readCatchup(obj: JsonObject): CatchupPolicy {
  if (!present(obj, 'catchup')) return DEFAULT_CATCHUP;
  const c = readObject(obj.catchup, 'catchup', ['mode', 'window', 'limit']);
  return {
    mode: readEnum(c, 'mode', 'catchup', CATCHUP_MODES) ?? DEFAULT_CATCHUP.mode,
    windowMs: readDuration(c, 'window', 'catchup', { minMs: 1 }) ?? null,
    limit: readInteger(c, 'limit', 'catchup', 1, MAX_CATCHUP_LIMIT) ?? null,
  };
}

/**
 * The recurrence a spec describes. `createdAtMs` anchors an `every` schedule without a startAt;
 * the anchor is stored as the schedule's creation instant so it never drifts on re-evaluation.
 */
export function recurrenceOf(spec: ScheduleSpec, anchorMs: number): Recurrence {
  switch (spec.timing.kind) {
    case 'cron':
      return { kind: 'cron', cron: parseCron(spec.timing.cron), timezone: spec.timezone, dst: spec.dst };
    case 'every':
      return { kind: 'every', everyMs: spec.timing.everyMs, anchorMs: spec.startAtMs ?? anchorMs };
    case 'at':
      return { kind: 'at', atMs: spec.timing.atMs };
  }
}

/**
 * The first slot strictly after `afterMs` that lies inside the schedule's bounds, or null when the
 * schedule has nothing left to fire. Slots before startAt do not exist; a slot after endAt ends it.
 */
export function nextSlotWithinBounds(spec: ScheduleSpec, rec: Recurrence, afterMs: number): number | null {
  const from = spec.startAtMs !== null ? Math.max(afterMs, spec.startAtMs - 1) : afterMs;
  const slot = nextFireAfter(rec, from);
  if (slot === null) return null;
  if (spec.endAtMs !== null && slot > spec.endAtMs) return null;
  return slot;
}

/** The first slot of a schedule created at `nowMs`. */
export function firstFireAt(spec: ScheduleSpec, nowMs: number): number | null {
  return nextSlotWithinBounds(spec, recurrenceOf(spec, nowMs), nowMs);
}

/**
 * A stable hash of the definition, so re-applying an unchanged spec is recognisably a no-op.
 * Keys are sorted recursively; the payload is hashed as given.
 */
export function specHash(spec: ScheduleSpec): string {
  return createHash('sha256').update(canonicalJson(spec)).digest('hex');
}

/** JSON with object keys sorted, so equal values serialize equally whatever order their keys came in. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

