/** The wire shape of a schedule, as REST and GraphQL return it: the definition with defaults filled in, and its cursor; and of its ticks. */
import { formatDuration, formatInstant } from '@kairos/domain';
import type { ScheduleRow, TickRow } from '@kairos/ledger';
import type { Schedule, Tick } from '@kairos/domain/wire';
import type { z } from 'zod';
import { dstView, iso, retryView, targetView } from '../wire/policy.view.js';

export type ScheduleView = z.output<typeof Schedule>;
export type TickView = z.output<typeof Tick>;

export function scheduleView(row: ScheduleRow, deduped = false): ScheduleView {
  return {
    id: row.id,
    name: row.name,
    cron: row.cron,
    every: row.everyMs === null ? null : formatDuration(row.everyMs),
    at: iso(row.at),
    timezone: row.timezone,
    dst: dstView(row.cron, { gap: row.dstGap, overlap: row.dstOverlap }),
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
export function tickView(tick: TickRow): TickView {
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
