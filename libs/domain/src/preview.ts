/** The stateless preview: `{cron|every, timezone, dst, startAt, after, count}` to the next fire instants. */
import { ValidationError } from './errors.js';
import { present, readInstant, readInteger, readObject } from './json-readers.js';
import { parseScheduleCreate, recurrenceOf } from './schedule-spec.js';
import { slotsInRange } from './slot-range.js';
import type { DstPolicy } from './time/index.js';

export const MAX_PREVIEW_COUNT = 1_000;

export interface SpecPreview {
  fireTimes: number[];
  /** The expression previewed; null for an interval. */
  cron: string | null;
  /** The DST policy as given or defaulted (`auto` stays `auto`; resolveDstPolicy says what it means). */
  dst: DstPolicy;
}

export function previewSpec(body: unknown, nowMs: number): SpecPreview {
  const obj = readObject(body, '', ['cron', 'every', 'timezone', 'dst', 'startAt', 'after', 'count']);
  if (!present(obj, 'cron') && !present(obj, 'every')) {
    throw new ValidationError('MISSING_FIELD', 'cron', 'give "cron" or "every" to preview');
  }
  const after = readInstant(obj, 'after', '') ?? nowMs;
  const count = readInteger(obj, 'count', '', 1, MAX_PREVIEW_COUNT) ?? 10;
  const { after: _after, count: _count, ...definition } = obj;
  // Reuse the schedule reader so preview accepts exactly what a schedule would; a placeholder
  // target stands in, as a preview executes nothing.
  const { spec } = parseScheduleCreate({ ...definition, target: { type: 'handler', name: 'noop' } }, after);
  // Walk the bounded slots, as the stored schedule's preview does: a cron slot before startAt does
  // not exist, so it must not be shown.
  const fireTimes = slotsInRange(spec, recurrenceOf(spec, after), { afterMs: after, limit: count, keep: 'oldest' }).slots;
  return { fireTimes, cron: spec.timing.kind === 'cron' ? spec.timing.cron : null, dst: spec.dst };
}
