/**
 * The wire shape of a sensor, as REST and GraphQL return it: the definition with defaults filled
 * in, its cursor and its newest tick; of its ticks; and of its definition in wire form, which a
 * PATCH is applied to and an apply plan compares.
 */
import { DEFAULT_PRIORITY, definitionChanges, formatDuration, formatInstant, formatOptionalInstant, isStepsTarget, queueOf, type CallTarget, type FieldChange } from '@kairos/domain';
import type { SensorSpec, SensorTick, SensorView as SensorShape } from '@kairos/domain/wire';
import type { SensorRow, SensorTickRow } from '@kairos/ledger';
import type { z } from 'zod';
import { executableView, retryView, stepsView, targetView } from '../wire/policy.view.js';

export type SensorView = z.output<typeof SensorShape>;
export type SensorTickView = z.output<typeof SensorTick>;
export type SensorRunView = SensorView['run'];

export function sensorView(row: SensorRow, lastTick: SensorTickRow | null): SensorView {
  return {
    id: row.id,
    name: row.name,
    every: formatDuration(row.everyMs),
    target: evaluationTargetView(row.target),
    timeout: formatDuration(row.timeoutMs),
    run: {
      ...executableView(row.run.target),
      retry: retryView(row.run.retry),
      timeout: formatDuration(row.run.timeoutMs),
      concurrency: row.run.concurrency ?? null,
      priority: row.run.priority ?? DEFAULT_PRIORITY,
      fairness: row.run.fairness ?? null,
    },
    payload: row.payload,
    paused: row.paused,
    labels: row.labels,
    cursor: row.cursor,
    cursorVersion: row.cursorVersion,
    nextEvaluationAt: row.paused ? null : formatInstant(row.nextEvaluationAt),
    evaluating: row.evaluationRunId !== null,
    lastTick: lastTick === null ? null : sensorTickView(lastTick),
    source: row.source,
    createdAt: formatInstant(row.createdAt),
    updatedAt: formatInstant(row.updatedAt),
  };
}

/** The handler that evaluates a sensor; the API stores no other kind of evaluation target. */
function evaluationTargetView(target: CallTarget): SensorView['target'] {
  if (target.type !== 'handler') throw new Error(`a sensor's evaluation target is a handler, not ${target.type}`);
  return { type: 'handler', name: target.name, queue: queueOf(target) };
}

/** One evaluation of a sensor and what came of it. */
export function sensorTickView(tick: SensorTickRow): SensorTickView {
  return {
    id: tick.id,
    sensorId: tick.sensorId,
    runId: tick.evaluationRunId,
    state: tick.state,
    requested: tick.requested,
    created: tick.created,
    deduplicated: tick.deduplicated,
    runIds: tick.runIds,
    cursorBefore: tick.cursorBefore,
    cursorAfter: tick.cursorAfter,
    reasonCode: tick.reasonCode as SensorTickView['reasonCode'],
    reason: tick.reasonText,
    startedAt: formatInstant(tick.startedAt),
    finishedAt: formatOptionalInstant(tick.finishedAt),
    durationMs: tick.finishedAt === null ? null : Math.max(0, tick.finishedAt.getTime() - tick.startedAt.getTime()),
  };
}

/** The definition a stored sensor holds. */
export function sensorSpecOf(row: SensorRow): SensorSpec {
  return {
    name: row.name,
    everyMs: row.everyMs,
    target: row.target,
    timeoutMs: row.timeoutMs,
    run: {
      target: row.run.target,
      retry: row.run.retry,
      timeoutMs: row.run.timeoutMs,
      concurrency: row.run.concurrency ?? null,
      priority: row.run.priority ?? DEFAULT_PRIORITY,
      fairness: row.run.fairness ?? null,
    },
    payload: row.payload,
    labels: row.labels,
  };
}

/**
 * A definition in wire form, as GET /v1/sensors/:id shows it (defaults filled in): the base a
 * PATCH is applied to, and what an apply plan compares. Re-read as a body, it gives the same spec.
 */
export function sensorDefinition(spec: SensorSpec): Record<string, unknown> {
  const run = spec.run;
  return {
    name: spec.name,
    every: formatDuration(spec.everyMs),
    target: targetView(spec.target),
    timeout: formatDuration(spec.timeoutMs),
    run: {
      ...(isStepsTarget(run.target) ? { steps: stepsView(run.target) } : { target: targetView(run.target) }),
      retry: retryView(run.retry),
      timeout: formatDuration(run.timeoutMs),
      concurrency: run.concurrency,
      priority: run.priority ?? DEFAULT_PRIORITY,
      fairness: run.fairness ?? null,
    },
    payload: spec.payload,
    labels: spec.labels,
  };
}

/** A value with the keys of every object sorted, so two equal definitions compare equal whatever order jsonb gave their keys. */
function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((key) => [key, canonical((value as Record<string, unknown>)[key])]),
  );
}

/**
 * The fields that differ from `from` (null: none yet) to `to`, as dotted paths of their wire form;
 * none when the definitions are equal. The payload is the user's JSON and compares whole, as given.
 */
export function sensorChanges(from: SensorSpec | null, to: SensorSpec): FieldChange[] {
  const wire = (spec: SensorSpec): Record<string, unknown> => {
    const { payload, ...rest } = sensorDefinition(spec);
    return { ...(canonical(rest) as Record<string, unknown>), payload };
  };
  return definitionChanges(from === null ? null : wire(from), wire(to));
}
