/** Sensors: a sensor with its defaults filled in, and its evaluations. */
import type { Concurrency, Fairness, JsonValue, RetryPolicy, Step, Target } from './shared.js';

/** evaluating: the evaluation run has not ended; succeeded: what it asked for was committed; failed: nothing was; skipped: it was not started. */
export type SensorTickState = 'evaluating' | 'succeeded' | 'failed' | 'skipped';

/** One evaluation of a sensor and what came of it. */
export interface SensorTick {
  id: string;
  sensorId: string;
  /** The evaluation run. */
  runId: string;
  state: SensorTickState;
  requested: number;
  created: number;
  deduplicated: number;
  /** The runs created. */
  runIds: string[];
  cursorBefore: JsonValue;
  cursorAfter: JsonValue;
  reasonCode: string | null;
  reason: string | null;
  startedAt: string;
  finishedAt: string | null;
  durationMs: number | null;
}

/** A sensor: its definition with defaults filled in, its cursor, and its newest evaluation. */
export interface Sensor {
  id: string;
  name: string;
  every: string;
  /** The handler that evaluates it. */
  target: Extract<Target, { type: 'handler' }>;
  /** Of one evaluation. */
  timeout: string;
  /** What each run it asks for executes. */
  run: { target: Target | null; steps: Step[] | null; retry: RetryPolicy; timeout: string; concurrency: Concurrency | null; priority: number; fairness: Fairness | null };
  payload: JsonValue;
  paused: boolean;
  labels: Record<string, string>;
  cursor: JsonValue;
  cursorVersion: number;
  /** Null while paused. */
  nextEvaluationAt: string | null;
  evaluating: boolean;
  lastTick: SensorTick | null;
  source: string | null;
  createdAt: string;
  updatedAt: string;
}
