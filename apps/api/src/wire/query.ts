/**
 * Reading list and lookup parameters with the same clear 400s as bodies. REST passes query-string
 * text, GraphQL passes typed arguments; both go through these so the limits and messages are one.
 */
import { MAX_PREVIEW_COUNT, RUN_STATES, SCHEDULE_STATUSES, ValidationError, checkStorableText, isUuid, parseInstant } from '@kairos/domain';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, type RunFilter, type ScheduleFilter } from '@kairos/ledger';

type Param = string | number | null | undefined;

export function pageLimit(value: Param): number {
  if (value === undefined || value === null || value === '') return DEFAULT_PAGE_SIZE;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > MAX_PAGE_SIZE) {
    throw new ValidationError('VALIDATION_FAILED', 'limit', `limit must be an integer from 1 to ${MAX_PAGE_SIZE}`);
  }
  return n;
}

export function optionalEnum<T extends string>(value: string | null | undefined, field: string, allowed: readonly T[]): T | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  if (!(allowed as readonly string[]).includes(value)) {
    throw new ValidationError('VALIDATION_FAILED', field, `${field} must be one of ${allowed.join(', ')}`);
  }
  return value as T;
}

export function optionalUuid(value: string | null | undefined, field: string): string | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  if (!isUuid(value)) throw new ValidationError('VALIDATION_FAILED', field, `${field} must be a UUID`);
  return value;
}

export function boundedInteger(value: Param, field: string, fallback: number, min: number, max: number): number {
  if (value === undefined || value === null || value === '') return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new ValidationError('VALIDATION_FAILED', field, `${field} must be an integer from ${min} to ${max}`);
  }
  return n;
}

/** An absent or empty text parameter (`?cursor=`, `name: ""`) means no value; a given one must be storable text. */
export function optionalText(value: string | null | undefined, field: string): string | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  checkStorableText(value, field);
  return value;
}

/** `label=team:billing` filters on one label. */
export function labelFilter(value: string | null | undefined): { key: string; value: string } | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  checkStorableText(value, 'label');
  const at = value.indexOf(':');
  if (at <= 0) throw new ValidationError('VALIDATION_FAILED', 'label', 'label must look like key:value');
  return { key: value.slice(0, at), value: value.slice(at + 1) };
}

/** One page of a filtered listing, read and checked. */
export interface ListQuery<F> {
  filter: F;
  limit: number;
  cursor: string | undefined;
}

export function scheduleListQuery(p: { limit?: Param; cursor?: string | null; status?: string | null; name?: string | null; label?: string | null }): ListQuery<ScheduleFilter> {
  const filter = { status: optionalEnum(p.status, 'status', SCHEDULE_STATUSES), name: optionalText(p.name, 'name'), label: labelFilter(p.label) };
  return { filter, limit: pageLimit(p.limit), cursor: optionalText(p.cursor, 'cursor') };
}

export function runListQuery(p: { scheduleId?: string | null; state?: string | null; limit?: Param; cursor?: string | null }): ListQuery<RunFilter> {
  const filter = { scheduleId: optionalUuid(p.scheduleId, 'scheduleId'), state: optionalEnum(p.state, 'state', RUN_STATES) };
  return { filter, limit: pageLimit(p.limit), cursor: optionalText(p.cursor, 'cursor') };
}

/** Dead letters are the runs that ended dead. */
export function deadLetterListQuery(p: { scheduleId?: string | null; limit?: Param; cursor?: string | null }): ListQuery<RunFilter> {
  const filter: RunFilter = { scheduleId: optionalUuid(p.scheduleId, 'scheduleId'), state: 'dead' };
  return { filter, limit: pageLimit(p.limit), cursor: optionalText(p.cursor, 'cursor') };
}

/** How many fire instants a schedule preview lists (default 10), and after which instant (default now). */
export function previewQuery(p: { count?: Param; after?: string | null }): { count: number; after: number | undefined } {
  const count = boundedInteger(p.count, 'count', 10, 1, MAX_PREVIEW_COUNT);
  return { count, after: p.after ? parseInstant(p.after, 'after') : undefined };
}
