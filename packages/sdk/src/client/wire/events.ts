/** Events: what starts a schedule (its `on`) and the flow control of such a schedule, the events sent, and what each started. */
import type { DurationInput, Instant, JsonValue } from './shared.js';

/**
 * The events that start a schedule (its `on`, instead of cron, every, at or in): each event of that
 * name whose values match starts one run, in the transaction that stores the event. Such a schedule
 * has no slots (no calendar, expect, startAt, endAt, maxRuns, catchup or jitter), and its payload, if
 * any, is an object: each run gets it with the event added under `event`.
 */
export interface EventTriggerInput {
  /** The event name: 1 to 128 letters, digits, ".", "_", ":" or "-", e.g. "order.paid". */
  event: string;
  /** Dotted paths into the event (`data.plan`, `name`, `id`) and the JSON value each must equal; at most 32. Absent or empty: every event of the name. */
  match?: Record<string, JsonValue> | null;
}
/**
 * Flow control of a schedule started by events. Each control's `key` is a template over the event
 * (`account-{{event.data.accountId}}`) or the payload; absent: one key for the schedule. An event
 * whose key cannot be resolved makes no run (skipped FLOW_KEY_UNRESOLVED).
 */
export interface DebounceInput {
  key?: string | null;
  /** How long without a new event before the run starts, e.g. "30s"; at most 7d. */
  period: DurationInput;
  /** The run starts at most this long after the first event of the burst. Default: no bound. */
  maxWait?: DurationInput | null;
}
/** A throttle (runs started) or rate limit (runs made): at most `limit` (1 to 100,000) per key in any window of `period`. */
export interface WindowLimitInput {
  key?: string | null;
  limit: number;
  /** The window, e.g. "1m"; at most 7d. */
  period: DurationInput;
}
export interface BatchInput {
  key?: string | null;
  /** 1 to 1,000 events per run. */
  maxSize: number;
  /** How long after the first event of a batch its run starts, full or not; at most 7d. */
  timeout: DurationInput;
}
export interface Debounce {
  key: string | null;
  period: string;
  maxWait: string | null;
}
export interface WindowLimit {
  key: string | null;
  limit: number;
  period: string;
}
export interface Batch {
  key: string | null;
  maxSize: number;
  timeout: string;
}
/** A schedule's `on`, with its default filled in. */
export interface EventTrigger {
  event: string;
  /** Empty: every event of the name. */
  match: Record<string, JsonValue>;
}

/** An event to send (POST /v1/events, one item of events.sendMany). */
export interface EventInput {
  /** 1 to 128 letters, digits, ".", "_", ":" or "-", e.g. "order.paid"; schedules whose `on.event` is this name start. */
  name: string;
  /** Any JSON, at most the payload limit serialized. Default null. */
  data?: JsonValue;
  /** Your id for the event (at most 200 characters): sent again within the retention window (KAIROS_EVENT_RETENTION), it answers the first event with `deduped: true` and starts nothing. Default: a new id. */
  id?: string | null;
}
/** A schedule the event matched that made no run for it, and why (SCHEDULE_PAUSED, OVERLAP_SKIPPED, CONCURRENCY_KEY_UNRESOLVED, RATE_LIMITED, FLOW_KEY_UNRESOLVED). */
export interface EventSkip {
  scheduleId: string;
  reasonCode: string;
}
/** An event, with what it started. */
export interface Event {
  /** Yours, or the one Kairos gave it. */
  id: string;
  name: string;
  /** As sent. */
  data: JsonValue | null;
  receivedAt: Instant;
  /** True when the id was seen before: this is the first event with it, and nothing ran again. */
  deduped: boolean;
  /** The runs it started, one per matching schedule. */
  runs: string[];
  skipped: EventSkip[];
  /** The runs waiting for it (ctx.waitForEvent) that it resumed. */
  resumed: string[];
}
export interface EventListFilter {
  /** Only events of this exact name. */
  name?: string;
  /** Page size. */
  limit?: number;
  /** Start after this page: a nextCursor of GET /v1/events. */
  cursor?: string;
}
