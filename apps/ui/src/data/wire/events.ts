/** Events: what starts a schedule (its `on`), and the events applications sent with what each started. */
import type { JsonValue, ReasonCode } from './shared.js';

/** The events that start a schedule: their name, and the values they must match (dotted paths into the event; empty: every event of the name). */
export interface EventTrigger {
  event: string;
  match: Record<string, JsonValue>;
}

/** A schedule the event matched that made no run for it, and why (SCHEDULE_PAUSED, OVERLAP_SKIPPED). */
export interface EventSkip {
  scheduleId: string;
  reasonCode: ReasonCode;
}

/** An event an application sent (POST /v1/events), with the runs it started, the schedules it skipped and the waits it resumed. Not the DOM's Event. */
export interface KairosEvent {
  id: string;
  name: string;
  data: JsonValue;
  receivedAt: string;
  /** True when its id was seen before: this is the first event with it, and nothing ran again. */
  deduped: boolean;
  runs: string[];
  skipped: EventSkip[];
  /** The runs waiting for it (ctx.waitForEvent) that it resumed. */
  resumed: string[];
}
