/** Schedules as code: a source's declaration for POST /v1/apply, its plan, and the versions of a schedule's definition. */
import type { Instant, JsonValue } from './shared.js';
import type { ScheduleInput } from './schedules.js';
import type { SensorInput } from './sensors.js';
import type { CalendarInput } from './calendars.js';

/** A source's declaration of schedules for POST /v1/apply. */
export interface ApplyInput {
  /** Who declares these schedules; a prune deletes only this source's schedules. */
  source: string;
  /** Each a schedule body with its name (no idempotencyKey, no paused). */
  schedules?: ScheduleInput[];
  /** Each a sensor body (no paused), found by its name; a prune deletes only this source's sensors. */
  sensors?: SensorInput[];
  /** Each a calendar body, found by its name and written before the schedules, which may name them; a prune never deletes one. */
  calendars?: CalendarInput[];
  prune?: boolean;
  dryRun?: boolean;
}

export interface FieldChange {
  field: string;
  from: JsonValue;
  to: JsonValue;
}

export interface ApplyPlanItem {
  kind: 'schedule' | 'sensor' | 'calendar';
  name: string;
  action: 'create' | 'update' | 'unchanged' | 'delete';
  changes: FieldChange[];
}

export interface ApplyResult {
  plan: ApplyPlanItem[];
  /** False for a dry run. */
  applied: boolean;
}

/** One version of a schedule's definition. */
export interface ScheduleVersion {
  version: number;
  specHash: string;
  source: string | null;
  actor: string;
  appliedAt: Instant;
  changes: FieldChange[];
}
