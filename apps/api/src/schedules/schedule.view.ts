/** The wire shape of a schedule, as REST and GraphQL return it: the definition with defaults filled in, and its cursor; and of its ticks. */
import { DEFAULT_PRIORITY, formatDuration, formatInstant, formatOptionalInstant, isStepsTarget, type FlowControl, type ScheduleSpec } from '@kairos/domain';
import type { ScheduleRow, TickRow } from '@kairos/ledger';
import type { Schedule, Tick } from '@kairos/domain/wire';
import type { z } from 'zod';
import { dstView, executableView, iso, retryView, stepsView, targetView } from '../wire/policy.view.js';

export type ScheduleView = z.output<typeof Schedule>;
export type TickView = z.output<typeof Tick>;

export function scheduleView(row: ScheduleRow, deduped = false): ScheduleView {
  // Spelled out rather than spread into the object with fields after them, which costs V8 several µs a view.
  const flow = flowControlView(row.flow);
  const executable = executableView(row.target);
  return {
    id: row.id,
    name: row.name,
    cron: row.cron,
    every: row.everyMs === null ? null : formatDuration(row.everyMs),
    at: iso(row.at),
    on: row.onEvent === null ? null : { event: row.onEvent, match: row.onMatch ?? {} },
    debounce: flow.debounce,
    throttle: flow.throttle,
    rateLimit: flow.rateLimit,
    batch: flow.batch,
    timezone: row.timezone,
    dst: dstView(row.cron, { gap: row.dstGap, overlap: row.dstOverlap }),
    catchup: {
      mode: row.catchupMode,
      window: row.catchupWindowMs === null ? null : formatDuration(row.catchupWindowMs),
      limit: row.catchupLimit,
    },
    overlap: row.overlap,
    target: executable.target,
    steps: executable.steps,
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
  // Built field by field in the order the wire shows them; spreads of optional fields cost V8 several µs a definition.
  const definition: Record<string, unknown> = { name: spec.name };
  const { timing } = spec;
  if (timing.kind === 'cron') definition['cron'] = timing.cron;
  else if (timing.kind === 'every') definition['every'] = formatDuration(timing.everyMs);
  else if (timing.kind === 'at') definition['at'] = formatInstant(timing.atMs);
  else definition['on'] = { event: timing.event, match: timing.match };
  // Shown only when set, so a definition made before flow control existed compares unchanged.
  const flow = flowControlView(spec.flow);
  for (const key of FLOW_CONTROLS) if (flow[key] !== null) definition[key] = flow[key];
  definition['timezone'] = spec.timezone;
  // As declared (`auto` stays `auto`), as the view shows it.
  definition['dst'] = { gap: spec.dst.gap, overlap: spec.dst.overlap };
  const catchup: Record<string, unknown> = { mode: spec.catchup.mode };
  if (spec.catchup.windowMs !== null) catchup['window'] = formatDuration(spec.catchup.windowMs);
  if (spec.catchup.limit !== null) catchup['limit'] = spec.catchup.limit;
  definition['catchup'] = catchup;
  definition['overlap'] = spec.overlap;
  if (isStepsTarget(spec.target)) definition['steps'] = stepsView(spec.target);
  else definition['target'] = targetView(spec.target);
  definition['payload'] = spec.payload;
  definition['retry'] = retryView(spec.retry);
  definition['timeout'] = formatDuration(spec.timeoutMs);
  // Shown only when set, so a definition made before keys existed compares unchanged.
  if (spec.concurrency !== null) definition['concurrency'] = spec.concurrency;
  if (spec.priority !== DEFAULT_PRIORITY) definition['priority'] = spec.priority;
  if (spec.fairness !== null) definition['fairness'] = spec.fairness;
  definition['startAt'] = formatOptionalInstant(spec.startAtMs === null ? null : new Date(spec.startAtMs));
  definition['endAt'] = formatOptionalInstant(spec.endAtMs === null ? null : new Date(spec.endAtMs));
  definition['maxRuns'] = spec.maxRuns;
  definition['jitter'] = formatDuration(spec.jitterMs);
  definition['labels'] = spec.labels;
  // Shown only when set, so a definition made before deadlines existed compares unchanged.
  if (spec.expect !== null) definition['expect'] = { succeededWithin: formatDuration(spec.expect.succeededWithinMs) };
  if (spec.calendar !== null) definition['calendar'] = spec.calendar;
  return definition;
}

const FLOW_CONTROLS = ['debounce', 'throttle', 'rateLimit', 'batch'] as const;

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
