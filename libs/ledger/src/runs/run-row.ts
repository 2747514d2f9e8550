/** The runs table's rows as SQL returns them, and the shapes runs enter and leave the ledger in. */
import { DEFAULT_PRIORITY, fairnessOver, isStepsTarget, newId, queueOf, resolveConcurrencyKey, type RunConcurrency, type RunFairness, type ConcurrencySpec, type DispatchItem, type JsonValue, type ReasonCode, type RetryPolicy, type RunEventKind, type RunOrigin, type RunState, type Target } from '@kairos/domain';

export interface RunRow {
  id: string;
  namespaceId: string;
  scheduleId: string | null;
  origin: RunOrigin;
  sourceRunId: string | null;
  scheduledFor: Date;
  /** Null while the run is parked behind another run of its schedule. */
  availableAt: Date | null;
  deferReason: string | null;
  state: RunState;
  exclusive: boolean;
  attempt: number;
  maxAttempts: number;
  target: Target;
  payload: JsonValue | null;
  retry: RetryPolicy;
  timeoutMs: number;
  leaseOwner: string | null;
  leaseEpoch: number;
  leaseExpiresAt: Date | null;
  heartbeatAt: Date | null;
  crashCount: number;
  cancelRequestedAt: Date | null;
  cancelRequestedBy: string | null;
  enqueuedAt: Date | null;
  result: JsonValue | null;
  error: Record<string, unknown> | null;
  reasonCode: ReasonCode | null;
  reasonText: string | null;
  idempotencyKey: string | null;
  createdAt: Date;
  startedAt: Date | null;
  finishedAt: Date | null;
  updatedAt: Date;
  /** For a step run: the run of its graph, and its step's name. */
  parentRunId: string | null;
  stepName: string | null;
  /** The concurrency key it holds while running, resolved from its payload, and its limit. */
  concurrency: RunConcurrency | null;
  /** Since when a limit holds it back (deferReason says which); null otherwise. */
  heldAt: Date | null;
  /** For a sensor's runs: the sensor; and for a run it asked for, its run key. */
  sensorId: string | null;
  runKey: string | null;
  /** For a run an event started: the event's id. */
  eventId: string | null;
  /** The last progress its handler reported (ctx.progress); null when it reported none. */
  progress?: JsonValue | null;
  /** The version of the worker that claimed it (pinned once it stored a checkpoint); null before its first claim and after a move to any version. */
  version: string | null;
  /** 1 (starts first) to 5. */
  priority: number;
  /** The fairness key whose turns it takes, resolved from its payload; null: the one key of runs without a key. */
  fairnessKey: string | null;
  fairnessWeight: number | null;
}

export const RUN_COLUMNS = `
  r.id, r.namespace_id AS "namespaceId", r.schedule_id AS "scheduleId", r.origin, r.source_run_id AS "sourceRunId",
  r.scheduled_for AS "scheduledFor", CASE WHEN r.available_at = 'infinity' THEN NULL ELSE r.available_at END AS "availableAt",
  r.defer_reason AS "deferReason", r.state, r.exclusive, r.attempt, r.max_attempts AS "maxAttempts", r.target, r.payload,
  r.retry, r.timeout_ms AS "timeoutMs", r.lease_owner AS "leaseOwner", r.lease_epoch AS "leaseEpoch",
  r.lease_expires_at AS "leaseExpiresAt", r.heartbeat_at AS "heartbeatAt", r.crash_count AS "crashCount",
  r.cancel_requested_at AS "cancelRequestedAt", r.cancel_requested_by AS "cancelRequestedBy",
  r.enqueued_at AS "enqueuedAt", r.result, r.error, r.reason_code AS "reasonCode", r.reason_text AS "reasonText",
  r.idempotency_key AS "idempotencyKey", r.created_at AS "createdAt", r.started_at AS "startedAt",
  r.finished_at AS "finishedAt", r.updated_at AS "updatedAt", r.parent_run_id AS "parentRunId", r.step_name AS "stepName",
  CASE WHEN r.concurrency_key IS NULL THEN NULL ELSE json_build_object('key', r.concurrency_key, 'limit', r.concurrency_limit) END AS concurrency,
  r.held_at AS "heldAt", r.sensor_id AS "sensorId", r.run_key AS "runKey", r.event_id AS "eventId", r.progress, r.version,
  r.priority, r.fairness_key AS "fairnessKey", r.fairness_weight AS "fairnessWeight"`;

export interface RunEventRow {
  id: number;
  at: Date;
  kind: RunEventKind;
  fromState: RunState | null;
  toState: RunState | null;
  leaseEpoch: number | null;
  actor: string;
  reasonCode: ReasonCode | null;
  detail: Record<string, unknown>;
  /** The hash of the API request that created the run, kept to tell a replay of its idempotency key from a reuse. */
  requestHash?: string | null;
}

/** A run to insert: its columns (availableAt null parks it behind an active run) and its queued event. */
export interface NewRun
  extends Pick<
    RunRow,
    | 'id'
    | 'namespaceId'
    | 'scheduleId'
    | 'origin'
    | 'sourceRunId'
    | 'scheduledFor'
    | 'availableAt'
    | 'deferReason'
    | 'exclusive'
    | 'maxAttempts'
    | 'target'
    | 'payload'
    | 'retry'
    | 'timeoutMs'
    | 'idempotencyKey'
  > {
  actor: string;
  reasonCode: ReasonCode | null;
  detail: Record<string, unknown>;
  /** The hash of the API request that created the run, kept to tell a replay of its idempotency key from a reuse. */
  requestHash?: string | null;
  /** For a step run: the run of its graph, and its step's name. */
  parentRunId?: string | null;
  stepName?: string | null;
  /** Resolved already (concurrencyFor, resolveConcurrencyKey). */
  concurrency?: RunConcurrency | null;
  /** 1 (starts first) to 5; absent: 3. */
  priority?: number;
  /** Resolved already (fairnessFor, fairnessOver). */
  fairness?: RunFairness | null;
  sensorId?: string | null;
  runKey?: string | null;
  eventId?: string | null;
  /** A throttled run's throttle: its key (the schedule's id and the resolved key), limit and period. */
  throttle?: { key: string; limit: number; periodMs: number } | null;
}

/**
 * The step runs of a graph's run, one per step, created with it and parked until their upstream
 * steps end: each step's own target, retry policy and timeout (the graph's where the step sets none),
 * the graph's payload and slot.
 */
export function stepRunsOf(graph: NewRun): NewRun[] {
  if (!isStepsTarget(graph.target)) return [];
  return graph.target.steps.map((step) => {
    const retry = step.retry ?? graph.retry;
    return {
      id: newId(),
      namespaceId: graph.namespaceId,
      scheduleId: null,
      origin: graph.origin,
      sourceRunId: null,
      scheduledFor: graph.scheduledFor,
      availableAt: null,
      deferReason: null,
      exclusive: false,
      maxAttempts: retry.maxAttempts,
      target: step.target,
      payload: graph.payload,
      retry,
      timeoutMs: step.timeoutMs ?? graph.timeoutMs,
      idempotencyKey: null,
      actor: graph.actor,
      reasonCode: null,
      detail: {},
      parentRunId: graph.id,
      stepName: step.name,
      // A step holds its own key, else its run's: a graph's own run never runs, its steps do.
      concurrency: step.concurrency ? declaredConcurrency(step.concurrency, graph.payload) : (graph.concurrency ?? null),
      priority: step.priority ?? graph.priority ?? DEFAULT_PRIORITY,
      // A key the payload cannot resolve (a graph an event started) puts the step with the runs without a key.
      fairness: step.fairness ? fairnessOver(step.fairness, graph.payload) : (graph.fairness ?? null),
      sensorId: graph.sensorId ?? null,
      eventId: graph.eventId ?? null,
    };
  });
}

/**
 * A declaration's concurrency over a run's payload. Declarations are checked to resolve over the
 * payloads they are given (checkKeysResolve); a sensor's runs are checked before they are made.
 */
export function declaredConcurrency(spec: ConcurrencySpec | null, payload: JsonValue | null): RunConcurrency | null {
  if (spec === null) return null;
  const resolution = resolveConcurrencyKey(spec.key, payload);
  if (resolution.kind === 'unresolved') throw new Error(resolution.reason);
  return { key: resolution.key, limit: spec.limit };
}

/**
 * What to hand the transport for a run just written, once its transaction has committed: nothing
 * for a parked run, nor for a graph's run, whose ready steps the insert answers instead.
 */
export function dispatchItemOf(run: Pick<NewRun, 'id' | 'availableAt' | 'target' | 'priority'>): DispatchItem | null {
  if (run.availableAt === null || isStepsTarget(run.target)) return null;
  return { id: run.id, availableAt: run.availableAt, queue: queueOf(run.target), priority: run.priority ?? DEFAULT_PRIORITY };
}

/** An ad-hoc run, as `POST /v1/runs` creates it: no schedule, due at `availableAt`, attempts as its retry policy allows. */
export function manualRun(
  fields: Pick<NewRun, 'id' | 'namespaceId' | 'target' | 'payload' | 'retry' | 'timeoutMs' | 'idempotencyKey' | 'actor' | 'concurrency' | 'priority' | 'fairness'> & { availableAt: Date },
): NewRun {
  // Built field by field rather than spread from `fields`: the spread cost 15-18 µs a run on Node 20
  // (the bench's producer and POST /v1/runs make one per run). The optional fields stay absent when absent.
  const run: NewRun = {
    id: fields.id,
    namespaceId: fields.namespaceId,
    scheduleId: null,
    origin: 'manual',
    sourceRunId: null,
    scheduledFor: fields.availableAt,
    availableAt: fields.availableAt,
    deferReason: null,
    exclusive: false,
    maxAttempts: fields.retry.maxAttempts,
    target: fields.target,
    payload: fields.payload,
    retry: fields.retry,
    timeoutMs: fields.timeoutMs,
    idempotencyKey: fields.idempotencyKey,
    actor: fields.actor,
    reasonCode: null,
    detail: {},
  };
  if (fields.concurrency !== undefined) run.concurrency = fields.concurrency;
  if (fields.priority !== undefined) run.priority = fields.priority;
  if (fields.fairness !== undefined) run.fairness = fields.fairness;
  return run;
}
