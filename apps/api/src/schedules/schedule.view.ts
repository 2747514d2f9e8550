/** The wire shape of a schedule, as REST and GraphQL return it: the definition with defaults filled in, and its cursor; and of its ticks. */
import { DEFAULT_PRIORITY, formatDuration, formatInstant, formatOptionalInstant, isStepsTarget, type FlowControl, type ScheduleSpec } from '@kairos/domain';
import type { ScheduleRow, TickRow } from '@kairos/ledger';
import type { Schedule, Tick } from '@kairos/domain/wire';
import type { z } from 'zod';
import { dstView, executableView, iso, retryView, stepsView, targetView } from '../wire/policy.view.js';

export type ScheduleView = z.output<typeof Schedule>;
export type TickView = z.output<typeof Tick>;

export function scheduleView(row: ScheduleRow, deduped = false): ScheduleView {
  return {
    id: row.id,
    name: row.name,
    cron: row.cron,
    every: row.everyMs === null ? null : formatDuration(row.everyMs),
    at: iso(row.at),
    on: row.onEvent === null ? null : { event: row.onEvent, match: row.onMatch ?? {} },
    ...flowControlView(row.flow),
    timezone: row.timezone,
    dst: dstView(row.cron, { gap: row.dstGap, overlap: row.dstOverlap }),
    catchup: {
      mode: row.catchupMode,
      window: row.catchupWindowMs === null ? null : formatDuration(row.catchupWindowMs),
      limit: row.catchupLimit,
    },
    overlap: row.overlap,
    ...executableView(row.target),
    payload: row.payload,
    retry: retryView(row.retry),
    timeout: formatDuration(row.timeoutMs),
    concurrency: row.concurrency,
    priority: row.priority,
    fairness: row.fairness,
    startAt: iso(row.startAt),
    endAt: iso(row.endAt),
    maxRuns: row.maxRuns,
    jitter: formatDuration(row.jitterMs),
    expect: row.expectSucceededWithinMs === null ? null : { succeededWithin: formatDuration(row.expectSucceededWithinMs) },
    calendar: row.calendar,
    lateSince: iso(row.lateSince),
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

/**
 * A definition in wire form, as GET /v1/schedules/:id shows it (defaults filled in): the base a
 * PATCH is applied to, what a version records, and what a plan compares.
 */
export function specDefinition(spec: ScheduleSpec): Record<string, unknown> {
  return {
    name: spec.name,
    ...(spec.timing.kind === 'cron' ? { cron: spec.timing.cron } : {}),
    ...(spec.timing.kind === 'every' ? { every: formatDuration(spec.timing.everyMs) } : {}),
    ...(spec.timing.kind === 'at' ? { at: formatInstant(spec.timing.atMs) } : {}),
    ...(spec.timing.kind === 'event' ? { on: { event: spec.timing.event, match: spec.timing.match } } : {}),
    // Shown only when set, so a definition made before flow control existed compares unchanged.
    ...Object.fromEntries(Object.entries(flowControlView(spec.flow)).filter(([, value]) => value !== null)),
    timezone: spec.timezone,
    // As declared (`auto` stays `auto`), as the view shows it.
    dst: { gap: spec.dst.gap, overlap: spec.dst.overlap },
    catchup: {
      mode: spec.catchup.mode,
      ...(spec.catchup.windowMs === null ? {} : { window: formatDuration(spec.catchup.windowMs) }),
      ...(spec.catchup.limit === null ? {} : { limit: spec.catchup.limit }),
    },
    overlap: spec.overlap,
    ...(isStepsTarget(spec.target) ? { steps: stepsView(spec.target) } : { target: targetView(spec.target) }),
    payload: spec.payload,
    retry: retryView(spec.retry),
    timeout: formatDuration(spec.timeoutMs),
    // Shown only when set, so a definition made before keys existed compares unchanged.
    ...(spec.concurrency === null ? {} : { concurrency: spec.concurrency }),
    ...(spec.priority === DEFAULT_PRIORITY ? {} : { priority: spec.priority }),
    ...(spec.fairness === null ? {} : { fairness: spec.fairness }),
    startAt: formatOptionalInstant(spec.startAtMs === null ? null : new Date(spec.startAtMs)),
    endAt: formatOptionalInstant(spec.endAtMs === null ? null : new Date(spec.endAtMs)),
    maxRuns: spec.maxRuns,
    jitter: formatDuration(spec.jitterMs),
    labels: spec.labels,
    // Shown only when set, so a definition made before deadlines existed compares unchanged.
    ...(spec.expect === null ? {} : { expect: { succeededWithin: formatDuration(spec.expect.succeededWithinMs) } }),
    ...(spec.calendar === null ? {} : { calendar: spec.calendar }),
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

/** A schedule's flow controls in wire form, each null when not declared. */
export function flowControlView(flow: FlowControl | null): Pick<ScheduleView, 'debounce' | 'throttle' | 'rateLimit' | 'batch'> {
  const windowed = (spec: { key: string | null; limit: number; periodMs: number } | null) => spec && { key: spec.key, limit: spec.limit, period: formatDuration(spec.periodMs) };
  return {
    debounce: flow?.debounce ? { key: flow.debounce.key, period: formatDuration(flow.debounce.periodMs), maxWait: flow.debounce.maxWaitMs === null ? null : formatDuration(flow.debounce.maxWaitMs) } : null,
    throttle: windowed(flow?.throttle ?? null),
    rateLimit: windowed(flow?.rateLimit ?? null),
    batch: flow?.batch ? { key: flow.batch.key, maxSize: flow.batch.maxSize, timeout: formatDuration(flow.batch.timeoutMs) } : null,
  };
}
