/** The sensors tables' rows as SQL returns them. */
import type { CallTarget, ConcurrencySpec, FairnessSpec, JsonValue, RetryPolicy, Target } from '@kairos/domain';

/** What a sensor's runs execute and how: frozen into each run it asks for. */
export interface SensorRunSpec {
  /** One call or a graph of steps (a StepsTarget). */
  target: Target;
  retry: RetryPolicy;
  timeoutMs: number;
  concurrency: ConcurrencySpec | null;
  /** Absent (a sensor stored before priorities): 3. */
  priority?: number;
  /** Absent: none. */
  fairness?: FairnessSpec | null;
}

export interface SensorRow {
  id: string;
  namespaceId: string;
  name: string;
  everyMs: number;
  /** The evaluation: a handler target. */
  target: CallTarget;
  /** Of one evaluation. */
  timeoutMs: number;
  run: SensorRunSpec;
  payload: JsonValue | null;
  labels: Record<string, string>;
  paused: boolean;
  cursor: JsonValue | null;
  cursorVersion: number;
  nextEvaluationAt: Date;
  /** The evaluation under way, if any. */
  evaluationRunId: string | null;
  source: string | null;
  createdAt: Date;
  updatedAt: Date;
}

export const SENSOR_COLUMNS = `
  s.id, s.namespace_id AS "namespaceId", s.name, s.every_ms AS "everyMs", s.target, s.timeout_ms AS "timeoutMs",
  s.run, s.payload, s.labels, s.paused, s.cursor, s.cursor_version AS "cursorVersion",
  s.next_evaluation_at AS "nextEvaluationAt", s.evaluation_run_id AS "evaluationRunId", s.source,
  s.created_at AS "createdAt", s.updated_at AS "updatedAt"`;

export const SENSOR_TICK_STATES = ['evaluating', 'succeeded', 'failed', 'skipped'] as const;
export type SensorTickState = (typeof SENSOR_TICK_STATES)[number];

/** One evaluation of a sensor and what came of it. */
export interface SensorTickRow {
  id: string;
  sensorId: string;
  evaluationRunId: string;
  state: SensorTickState;
  /** The cursor version read when the evaluation started; its commit needs it to still hold. */
  cursorVersion: number;
  cursorBefore: JsonValue | null;
  cursorAfter: JsonValue | null;
  requested: number;
  created: number;
  deduplicated: number;
  runIds: string[];
  reasonCode: string | null;
  reasonText: string | null;
  startedAt: Date;
  finishedAt: Date | null;
}

export const SENSOR_TICK_COLUMNS = `
  t.id, t.sensor_id AS "sensorId", t.evaluation_run_id AS "evaluationRunId", t.state, t.cursor_version AS "cursorVersion",
  t.cursor_before AS "cursorBefore", t.cursor_after AS "cursorAfter", t.requested, t.created, t.deduplicated,
  t.run_ids::text[] AS "runIds", t.reason_code AS "reasonCode", t.reason_text AS "reasonText",
  t.started_at AS "startedAt", t.finished_at AS "finishedAt"`;
