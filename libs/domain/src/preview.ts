/** The stateless preview: a spec's next fire instants after a given one. */
import { ValidationError } from './errors.js';
import { present, type JsonObject } from './json-readers.js';
import type { CalendarDefinition } from './calendars.js';
import { recurrenceOf, type ScheduleSpec } from './schedule-spec.js';
import { firesInRange } from './slot-range.js';
import { isoDateOfDay, localDayOf, type DstPolicy } from './time/index.js';

export const MAX_PREVIEW_COUNT = 1_000;
/** How many instants a preview lists when the request does not say. */
export const DEFAULT_PREVIEW_COUNT = 10;

export interface SpecPreview {
  fireTimes: number[];
  /** The local dates (YYYY-MM-DD) before the last fire listed that the calendar's `skip` keeps clear of; null without a calendar. */
  excludedDates: string[] | null;
  /** The expression previewed; null for an interval. */
  cron: string | null;
  /** The DST policy as given or defaulted (`auto` stays `auto`; resolveDstPolicy says what it means). */
  dst: DstPolicy;
}

/** A preview body says what to preview with cron or every. */
export function checkPreviewTiming(obj: JsonObject): void {
  if (!present(obj, 'cron') && !present(obj, 'every')) {
    throw new ValidationError('MISSING_FIELD', 'cron', 'give "cron" or "every" to preview');
  }
}

/** The first `count` fire instants of `spec` after `afterMs`, `calendars` being the ones its calendar rule names. */
export function previewOf(spec: ScheduleSpec, afterMs: number, count: number, calendars: readonly CalendarDefinition[] = []): SpecPreview {
  // Walk the bounded slots, as the stored schedule's preview does: a cron slot before startAt does
  // not exist, so it must not be shown.
  const fires = firesInRange(spec, recurrenceOf(spec, afterMs, calendars), { afterMs, limit: count });
  return { fireTimes: fires.slots, excludedDates: spec.calendar === null ? null : excludedDatesOf(spec, fires.excluded), cron: spec.timing.kind === 'cron' ? spec.timing.cron : null, dst: spec.dst };
}

/** The local dates of a walk's exclusion markers. */
export function excludedDatesOf(spec: ScheduleSpec, markers: readonly number[]): string[] {
  return markers.map((slot) => isoDateOfDay(localDayOf(spec.timezone, slot)));
}
