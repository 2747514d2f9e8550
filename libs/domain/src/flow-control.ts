/**
 * Flow control of schedules started by events: how the runs their events ask for are gathered,
 * spaced or refused, per key (a template over the event's payload, as concurrency keys are; no
 * key: one key for the schedule). Pure: the planning of each event's run against what the ledger
 * holds for its key, decided inside the transaction that stores the event.
 */
import { resolveConcurrencyKey } from './concurrency.js';
import type { JsonValue } from './closed-sets.js';

/** One run per key once `periodMs` passed with no new event (the last wins), at most `maxWaitMs` after the first. */
export interface DebounceSpec {
  key: string | null;
  periodMs: number;
  maxWaitMs: number | null;
}

/** Every event gets its run, but at most `limit` runs per key start in any window of `periodMs`. */
export interface ThrottleSpec {
  key: string | null;
  limit: number;
  periodMs: number;
}

/** At most `limit` runs per key are made in any window of `periodMs`; further events make none. */
export type RateLimitSpec = ThrottleSpec;

/** Events gathered per key into one run when `maxSize` are in, or `timeoutMs` after the first. */
export interface BatchSpec {
  key: string | null;
  maxSize: number;
  timeoutMs: number;
}

export interface FlowControl {
  debounce: DebounceSpec | null;
  throttle: ThrottleSpec | null;
  rateLimit: RateLimitSpec | null;
  batch: BatchSpec | null;
}

export const FLOW_CONTROLS = ['debounce', 'throttle', 'rateLimit', 'batch'] as const;
export type FlowControlName = (typeof FLOW_CONTROLS)[number];

/** The longest period, wait or timeout a control may take. */
export const MAX_FLOW_PERIOD_MS = 7 * 86_400_000;
export const MAX_FLOW_LIMIT = 100_000;
export const MAX_BATCH_SIZE = 1_000;

/** The key a control's template gives a run's payload (the event under `event`), or null when it cannot be resolved. */
export function flowKeyOf(template: string | null, payload: JsonValue): string | null {
  if (template === null) return '';
  const resolution = resolveConcurrencyKey(template, payload);
  return resolution.kind === 'resolved' ? resolution.key : null;
}

/** True when a rate limit admits one more run: fewer than `limit` were made in the window ending at `nowMs`. */
export function rateLimitAdmits(spec: RateLimitSpec, madeAtMs: readonly number[], nowMs: number): boolean {
  return madeAtMs.filter((at) => at > nowMs - spec.periodMs && at <= nowMs).length < spec.limit;
}

/**
 * When a throttled run may start: at `nowMs`, unless `limit` starts are already planned within a
 * window ending then or later; then one period after the limit-th latest of them. Planned in
 * order, no window of the period ever holds more than `limit` planned starts.
 */
export function throttledStart(spec: ThrottleSpec, plannedMs: readonly number[], nowMs: number): number {
  const sorted = [...plannedMs].sort((a, b) => a - b);
  if (sorted.length < spec.limit) return nowMs;
  return Math.max(nowMs, sorted[sorted.length - spec.limit]! + spec.periodMs);
}

/** When a debounced run is due after an event at `nowMs`, its window opened at `openedAtMs`. */
export function debouncedDue(spec: DebounceSpec, openedAtMs: number, nowMs: number): number {
  const quiet = nowMs + spec.periodMs;
  return spec.maxWaitMs === null ? quiet : Math.min(quiet, openedAtMs + spec.maxWaitMs);
}
