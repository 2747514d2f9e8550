/** Sensors: a sensor's body, the runs it asks for, and its evaluations. */
import type { Concurrency, DurationInput, Executable, Fairness, FairnessInput, HandlerTarget, Instant, JsonValue, RetryPolicy, RetryPolicyInput, Step, StepInput, Target, TargetInput } from './shared.js';

/** How each run a sensor asks for runs (what it executes is `target` or `steps`, see SensorRunInput). */
export interface SensorRunFields {
  retry?: RetryPolicyInput;
  /** Of each attempt; at most 24h. Default 5m. */
  timeout?: DurationInput;
  /** A concurrency key over each run's payload (e.g. "customer-{{payload.customerId}}") and its limit (default 1). */
  concurrency?: { key: string; limit?: number } | null;
  /** Each run's priority, 1 (starts first) to 5. Default 3. */
  priority?: number | null;
  /** A fairness key over each run's payload and its weight. Default: none. */
  fairness?: FairnessInput | null;
}
/** What each run a sensor asks for executes: exactly one of target or steps. Its payload is what the evaluation asked with. */
export type SensorRunInput = SensorRunFields & Executable;

/** A sensor's fields but what its runs execute (see SensorInput). */
export interface SensorFields {
  /** Unique per namespace. */
  name: string;
  /** How often the sensor is evaluated; at least 1s. */
  every: DurationInput;
  /** The handler that evaluates it: it gets the cursor and payload and answers { runs: [{ runKey, payload }], cursor }. */
  target: HandlerTarget;
  /** Of one evaluation; at most 1h. Default 1m. */
  timeout?: DurationInput;
  /** Passed to each evaluation. */
  payload?: JsonValue;
  /** Default false. */
  paused?: boolean;
  labels?: Record<string, string>;
}
/** POST /v1/sensors. */
export type SensorInput = SensorFields & { run: SensorRunInput };
/** PATCH: the given fields replace the stored ones (`run` field by field; a new target replaces stored steps and vice versa). The cursor stays. */
export type SensorPatch = Partial<SensorFields> & { run?: SensorRunFields & { target?: TargetInput | null; steps?: StepInput[] | null } };

/** What each run a sensor asks for executes, with its defaults filled in. */
export interface SensorRun {
  /** Null when it runs steps. */
  target: Target | null;
  /** Null when it runs one target. */
  steps: Step[] | null;
  retry: RetryPolicy;
  timeout: string;
  concurrency: Concurrency | null;
  priority: number;
  /** The key as declared, resolved over each run's payload, and its weight; null: none. */
  fairness: Fairness | null;
}

export type SensorTickState = 'evaluating' | 'succeeded' | 'failed' | 'skipped';

/** One evaluation of a sensor and what came of it. */
export interface SensorTick {
  id: string;
  sensorId: string;
  /** The evaluation run. */
  runId: string;
  state: SensorTickState;
  /** Runs the evaluation asked for, runs created for it, and runs asked for by a run key asked for before. */
  requested: number;
  created: number;
  deduplicated: number;
  /** The runs created. */
  runIds: string[];
  cursorBefore: JsonValue | null;
  cursorAfter: JsonValue | null;
  reasonCode: string | null;
  reason: string | null;
  startedAt: Instant;
  finishedAt: Instant | null;
  /** Null while evaluating. */
  durationMs: number | null;
}

/** A sensor: its definition with defaults filled in, its cursor and its newest evaluation. */
export interface Sensor {
  id: string;
  name: string;
  every: string;
  target: Required<HandlerTarget>;
  /** Of one evaluation. */
  timeout: string;
  run: SensorRun;
  payload: JsonValue | null;
  paused: boolean;
  labels: Record<string, string>;
  cursor: JsonValue | null;
  /** Rises with every commit, cursor move and reset. */
  cursorVersion: number;
  /** Null while paused. */
  nextEvaluationAt: Instant | null;
  /** True while an evaluation is under way. */
  evaluating: boolean;
  lastTick: SensorTick | null;
  /** The apply source that declares it; null when made through the API. */
  source: string | null;
  createdAt: Instant;
  updatedAt: Instant;
}
