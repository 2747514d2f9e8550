/**
 * A schedule's definition as the user declared it, and the timing rules (cron syntax, zone, one
 * timing, bounds, a future fire) the wire's schedule body checks it with at the edge: once read,
 * the definition is valid and has a future fire (or is paused, which still requires one to exist).
 */
import { dayExclusionOf, type CalendarDefinition, type CalendarRule } from './calendars.js';
import type { ConcurrencySpec } from './concurrency.js';
import { DEFAULT_PRIORITY, type FairnessSpec } from './priority.js';
import type { FlowControl } from './flow-control.js';
import { createHash } from 'node:crypto';
import { ValidationError } from './errors.js';
import { present, readString, type JsonObject } from './json-readers.js';
import type { CatchupMode, JsonValue, OverlapPolicy } from './closed-sets.js';
import type { RetryPolicy } from './run-policy.js';
import type { Target } from './steps.js';
import { CronSyntaxError, isValidTimeZone, nextFireAfter, parseCron, type DstPolicy, type PlainRecurrence, type Recurrence } from './time/index.js';

export type Timing = ClockTiming | EventTiming;
/** A schedule that fires on slots of the clock. */
export type ClockTiming = { kind: 'cron'; cron: string } | { kind: 'every'; everyMs: number } | { kind: 'at'; atMs: number };
/**
 * A schedule started by events (`on`): each event of that name whose values equal every entry of
 * `match` (a dotted path into the event, `data.plan`, to a JSON value) makes one run.
 */
export type EventTiming = { kind: 'event'; event: string; match: Record<string, JsonValue> };

/** True for a schedule that fires on the clock, with slots to plan; false for one started by events. */
export function isClockSpec(spec: ScheduleSpec): boolean {
  return spec.timing.kind !== 'event';
}

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
  /** At most `limit` runs holding the key (resolved from the payload) run at once. */
  concurrency: ConcurrencySpec | null;
  /** 1 (starts first) to 5. */
  priority: number;
  /** The key (resolved from the payload) whose turns its runs take, and its weight. */
  fairness: FairnessSpec | null;
  startAtMs: number | null;
  endAtMs: number | null;
  maxRuns: number | null;
  jitterMs: number;
  labels: Record<string, string>;
  /** A slot whose run has not succeeded this long after the slot is late (schedule.late). */
  expect: ScheduleExpectation | null;
  /** The local dates that hold no slot, and what becomes of a slot on one. */
  calendar: CalendarRule | null;
  /** How the runs its events ask for are gathered, spaced or refused (schedules with `on` only). */
  flow: FlowControl | null;
}

/** What a schedule promises of each slot's run. */
export interface ScheduleExpectation {
  succeededWithinMs: number;
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
export const MAX_JITTER_MS = 24 * 3_600_000;
export const LABEL_LIMITS = { maxEntries: 64, maxValueLength: 256 };

/** The ways to say when a schedule fires; a body gives exactly one. */
export const TIMING_FIELDS = ['cron', 'every', 'at', 'in', 'on'] as const;

export const NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:-]*$/;
export const NAME_PATTERN_HINT = 'may contain letters, digits, ".", "_", ":" and "-", and must start with a letter or digit';

/** A schedule's name under `name` in `obj`, if given; also checks the name a path carries. */
export function readScheduleName(obj: JsonObject): string | undefined {
  return readString(obj, 'name', '', {
    maxLength: 200,
    pattern: NAME_PATTERN,
    patternHint: NAME_PATTERN_HINT,
  });
}

/** endAt, when given with startAt, lies after it. */
export function checkBounds(startAtMs: number | null, endAtMs: number | null): void {
  if (startAtMs !== null && endAtMs !== null && endAtMs <= startAtMs) {
    throw new ValidationError('VALIDATION_FAILED', 'endAt', 'endAt must be later than startAt');
  }
}

/**
 * A new definition fires at least once after `nowMs`. `field` is the timing field the caller
 * wrote: an `in` timer is stored as `at`, and a future instant that startAt or endAt rules out is
 * not "in the past".
 */
export function checkFutureFire(spec: ScheduleSpec, nowMs: number, field: string): void {
  if (isClockSpec(spec) && firstFireAt(spec, nowMs) === null) {
    throw new ValidationError(
      'NO_FUTURE_FIRE',
      field,
      spec.timing.kind === 'at' && spec.timing.atMs <= nowMs
        ? `${field} is in the past; give a future instant`
        : 'this schedule never fires after now within its bounds (check the expression, startAt and endAt)',
    );
  }
}

/** A time zone the zone database knows. */
export function checkTimeZone(timezone: string, field: string): void {
  if (!isValidTimeZone(timezone)) {
    throw new ValidationError('INVALID_TIMEZONE', field, `unknown time zone "${timezone}"; use an IANA name such as "Europe/Berlin" or "UTC"`);
  }
}

/** A cron expression Kairos can evaluate. */
export function checkCron(cron: string, field: string): void {
  try {
    parseCron(cron);
  } catch (error) {
    if (error instanceof CronSyntaxError) throw new ValidationError('INVALID_CRON', field, error.message);
    throw error;
  }
}

/** A body says when its schedule fires in exactly one way (null counts as not saying). */
export function checkOneTiming(obj: JsonObject): void {
  const given = TIMING_FIELDS.filter((k) => present(obj, k));
  if (given.length === 0) {
    throw new ValidationError(
      'MISSING_FIELD',
      'cron',
      'a schedule needs exactly one of "cron", "every", "at", "in" or "on"',
    );
  }
  if (given.length > 1) {
    throw new ValidationError(
      'CONFLICTING_FIELDS',
      given[1]!,
      `give exactly one of "cron", "every", "at", "in" or "on"; this request has ${given.map((g) => `"${g}"`).join(' and ')}`,
    );
  }
}

/**
 * The recurrence a spec describes. `createdAtMs` anchors an `every` schedule without a startAt;
 * the anchor is stored as the schedule's creation instant so it never drifts on re-evaluation.
 * `calendars` are the namespace's calendars the spec's calendar rule names (see calendars.ts), and
 * `originMs` is when the schedule was last planned from (made, resumed, redefined): an excluded
 * date is marked at its first slot after it (see CalendarWalk). A walk over past ranges (backfill)
 * passes -Infinity, so each excluded date is marked at its first slot.
 */
export function recurrenceOf(spec: ScheduleSpec, anchorMs: number, calendars: readonly CalendarDefinition[] = [], originMs = anchorMs): Recurrence {
  const base = plainRecurrenceOf(spec, anchorMs);
  if (spec.calendar === null || base.kind === 'at') return base;
  return { kind: 'calendar', base, timezone: spec.timezone, dst: spec.dst, onExcluded: spec.calendar.onExcluded, excluded: dayExclusionOf(spec.calendar, calendars), originMs };
}

function plainRecurrenceOf(spec: ScheduleSpec, anchorMs: number): PlainRecurrence {
  switch (spec.timing.kind) {
    case 'cron':
      return { kind: 'cron', cron: parseCron(spec.timing.cron), timezone: spec.timezone, dst: spec.dst };
    case 'every':
      return { kind: 'every', everyMs: spec.timing.everyMs, anchorMs: spec.startAtMs ?? anchorMs };
    case 'at':
      return { kind: 'at', atMs: spec.timing.atMs };
    case 'event':
      // Callers plan slots only for clock schedules (isClockSpec): reaching here is a bug, not input.
      throw new Error(`schedule ${spec.name ?? ''} is started by events and has no slots to plan`);
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

/** The first slot of a schedule created at `nowMs` (a calendar's marker of an excluded date counts). */
export function firstFireAt(spec: ScheduleSpec, nowMs: number, calendars: readonly CalendarDefinition[] = []): number | null {
  return nextSlotWithinBounds(spec, recurrenceOf(spec, nowMs, calendars), nowMs);
}

/**
 * A stable hash of the definition, so re-applying an unchanged spec is recognisably a no-op.
 * Keys are sorted recursively; the payload is hashed as given.
 */
export function specHash(spec: ScheduleSpec): string {
  // Without a concurrency key, an expectation, a calendar, a priority or a fairness key a spec hashes as it did before they existed.
  // Object.assign, not a spread with fields after it: V8 takes that slow path at several µs a spec.
  const hashed = Object.assign({}, spec, {
    concurrency: spec.concurrency ?? undefined,
    expect: spec.expect ?? undefined,
    calendar: spec.calendar ?? undefined,
    flow: spec.flow ?? undefined,
    priority: spec.priority === DEFAULT_PRIORITY ? undefined : spec.priority,
    fairness: spec.fairness ?? undefined,
  });
  return createHash('sha256').update(canonicalJson(hashed)).digest('hex');
}

/**
 * JSON with object keys sorted, so equal values serialize equally whatever order their keys came in.
 * A key whose value is undefined is left out; an undefined item of an array is written as nothing
 * (`[1,]`), as Array.prototype.join writes it. Stored hashes depend on this exact text.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i++) {
      if (i > 0) out += ',';
      // JSON.stringify answers undefined (not a string) for undefined, a function or a symbol.
      out += (canonicalJson(value[i]) as string | undefined) ?? '';
    }
    return `${out}]`;
  }
  const record = value as Record<string, unknown>;
  // The default sort orders strings by UTF-16 code units, as the < comparison does.
  const keys = Object.keys(record).sort();
  let out = '{';
  for (const key of keys) {
    const v = record[key];
    if (v === undefined) continue;
    if (out.length > 1) out += ',';
    out += `${JSON.stringify(key)}:${canonicalJson(v)}`;
  }
  return `${out}}`;
}
