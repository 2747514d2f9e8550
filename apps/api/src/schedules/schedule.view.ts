/** The wire shape of a schedule (DESIGN.md section 7): the definition with defaults filled in, and its cursor; and of its ticks. */
import { formatDuration, type JsonValue, type RetryPolicy, type Target, formatInstant, formatOptionalInstant, queueOf } from '@kairos/domain';
import type { ScheduleRow, TickRow } from '@kairos/ledger';

export interface ScheduleView {
  id: string;
  name: string;
  cron: string | null;
  every: string | null;
  at: string | null;
  timezone: string;
  dst: { gap: string; overlap: string };
  catchup: { mode: string; window: string | null; limit: number | null };
  overlap: string;
  target: Record<string, unknown>;
  payload: JsonValue | null;
  retry: { maxAttempts: number; backoff: { type: string; base: string; max: string; jitter: number } };
  timeout: string;
  startAt: string | null;
  endAt: string | null;
  maxRuns: number | null;
  jitter: string;
  paused: boolean;
  idempotencyKey: string | null;
  labels: Record<string, string>;
  status: string;
  nextFireAt: string | null;
  lastFireAt: string | null;
  fireCount: number;
  createdAt: string;
  updatedAt: string;
  deduped: boolean;
}

export const iso = formatOptionalInstant;

export function targetView(target: Target): Record<string, unknown> {
  return target.type === 'handler'
    ? { type: 'handler', name: target.name, queue: queueOf(target) }
    : { type: 'http', url: target.url, method: target.method, headers: target.headers, timeout: formatDuration(target.timeoutMs) };
}

export function retryView(retry: RetryPolicy): ScheduleView['retry'] {
  const { backoff } = retry;
  return {
    maxAttempts: retry.maxAttempts,
    backoff: { type: backoff.type, base: formatDuration(backoff.baseMs), max: formatDuration(backoff.maxMs), jitter: backoff.jitter },
  };
}

export function scheduleView(row: ScheduleRow, deduped = false): ScheduleView {
  return {
    id: row.id,
    name: row.name,
    cron: row.cron,
    every: row.everyMs === null ? null : formatDuration(row.everyMs),
    at: iso(row.at),
    timezone: row.timezone,
    dst: { gap: row.dstGap, overlap: row.dstOverlap },
    catchup: {
      mode: row.catchupMode,
      window: row.catchupWindowMs === null ? null : formatDuration(row.catchupWindowMs),
      limit: row.catchupLimit,
    },
    overlap: row.overlap,
    target: targetView(row.target),
    payload: row.payload,
    retry: retryView(row.retry),
    timeout: formatDuration(row.timeoutMs),
    startAt: iso(row.startAt),
    endAt: iso(row.endAt),
    maxRuns: row.maxRuns,
    jitter: formatDuration(row.jitterMs),
    paused: row.status === 'paused',
    idempotencyKey: row.idempotencyKey,
    labels: row.labels,
    status: row.status,
    nextFireAt: iso(row.nextFireAt),
    lastFireAt: iso(row.lastFireAt),
    fireCount: row.fireCount,
    createdAt: formatInstant(row.createdAt),
    updatedAt: formatInstant(row.updatedAt),
    deduped,
  };
}

/** One evaluated slot of a schedule and what came of it. */
export function tickView(tick: TickRow) {
  return {
    scheduledFor: formatInstant(tick.scheduledFor),
    outcome: tick.outcome,
    reasonCode: tick.reasonCode,
    reasonText: tick.reasonText,
    runId: tick.runId,
    origin: tick.origin,
    createdAt: formatInstant(tick.createdAt),
  };
}

export type TickView = ReturnType<typeof tickView>;
