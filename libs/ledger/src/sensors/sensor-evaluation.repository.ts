/**
 * A sensor's evaluations as the scheduler's sensor loop drives them: an evaluation starts as a run
 * of the sensor's handler on the workers (with the sensor and its cursor in its target) and a tick
 * `evaluating`; when the run ends, its answer is committed in one transaction with the tick: one
 * run per run key the sensor has not seen (sensor_run_keys), the new cursor, and the tick's
 * counts, only if the cursor version the evaluation started from still holds. A crash anywhere
 * before that commit leaves the tick evaluating and the run's result stored: the next pass commits
 * it; a crash of the evaluation itself is the reaper's, as for any run.
 */
import {
  checkKeysResolve,
  DEFAULT_PRIORITY,
  fairnessOver,
  DEFAULT_RETRY_POLICY,
  isStepsTarget,
  newId,
  readSensorResult,
  ValidationError,
  type CallTarget,
  type DispatchItem,
  type JsonValue,
  type ReasonCode,
  type RunState,
} from '@kairos/domain';
import { inTransaction, type Db, type Queryable, type Tx } from '../database.js';
import { declaredConcurrency, type NewRun } from '../runs/run-row.js';
import { RunRepository } from '../runs/run.repository.js';
import { SENSOR_COLUMNS, SENSOR_TICK_COLUMNS, type SensorRow, type SensorTickRow } from './sensor-row.js';

/** How long past its timeout an evaluation may stay unfinished (waiting for a worker, or one that died) before it is abandoned. */
export const EVALUATION_GRACE_MS = 30_000;

/** An evaluation whose run ended, or that outlived its timeout and grace, with what its run came to. */
export interface EndedEvaluation {
  tick: SensorTickRow;
  runState: RunState;
  result: JsonValue | null;
  runReasonCode: ReasonCode | null;
  runReasonText: string | null;
  /** True when the run is still active past its timeout and grace: the evaluation is abandoned. */
  overdue: boolean;
}

export interface CommittedEvaluation {
  state: SensorTickRow['state'];
  reasonCode: ReasonCode | null;
  dispatch: DispatchItem[];
}

const TERMINAL = `('succeeded', 'failed', 'cancelled', 'dead')`;

export class SensorEvaluationRepository {
  constructor(private readonly runs: RunRepository) {}

  /**
   * Starts an evaluation of each due sensor (at most `limit`): its run, due now, and its tick; the
   * sensor marked as evaluating and due again `every` later. Sensors another scheduler is starting
   * are skipped. Returns what to hand the transport once committed.
   */
  async startDue(db: Db, limit: number, actor: string): Promise<DispatchItem[]> {
    return inTransaction(db, async (tx) => {
      const { rows: sensors } = await tx.query<SensorRow>(
        `SELECT ${SENSOR_COLUMNS} FROM sensors s
         WHERE NOT s.paused AND s.evaluation_run_id IS NULL AND s.next_evaluation_at <= now()
         ORDER BY s.next_evaluation_at LIMIT $1 FOR UPDATE SKIP LOCKED`,
        [limit],
      );
      if (sensors.length === 0) return [];
      const now = new Date((await tx.query<{ now: Date }>('SELECT now()')).rows[0]!.now);
      const evaluations = sensors.map((sensor): NewRun => evaluationRun(sensor, now, actor));
      const { dispatch } = await this.runs.insertRuns(tx, evaluations);
      await tx.query(
        `WITH e AS (SELECT * FROM json_to_recordset($1::json) AS e(sensor uuid, run uuid, tick uuid)),
         ticks AS (
           INSERT INTO sensor_ticks (id, sensor_id, evaluation_run_id, state, cursor_version, cursor_before)
           SELECT e.tick, s.id, e.run, 'evaluating', s.cursor_version, s.cursor FROM e JOIN sensors s ON s.id = e.sensor
         )
         UPDATE sensors s SET evaluation_run_id = e.run, next_evaluation_at = now() + s.every_ms * interval '1 millisecond'
         FROM e WHERE s.id = e.sensor`,
        [JSON.stringify(sensors.map((s, i) => ({ sensor: s.id, run: evaluations[i]!.id, tick: newId() })))],
      );
      return dispatch;
    });
  }

  /** Evaluations whose run ended, and those overdue, oldest first. */
  async ended(db: Queryable, limit: number): Promise<EndedEvaluation[]> {
    const { rows } = await db.query<EndedEvaluation & { tick: SensorTickRow }>(
      `SELECT row_to_json(x) AS tick, r.state AS "runState", r.result, r.reason_code AS "runReasonCode", r.reason_text AS "runReasonText",
              r.state NOT IN ${TERMINAL} AS overdue
       FROM (SELECT ${SENSOR_TICK_COLUMNS} FROM sensor_ticks t WHERE t.state = 'evaluating' ORDER BY t.started_at LIMIT $1) x
       JOIN runs r ON r.id = x."evaluationRunId"
       WHERE r.state IN ${TERMINAL}
          OR r.created_at < now() - (r.timeout_ms + $2) * interval '1 millisecond'`,
      [limit, EVALUATION_GRACE_MS],
    );
    return rows.map((r) => ({ ...r, tick: { ...r.tick, startedAt: new Date(r.tick.startedAt), finishedAt: null } }));
  }

  /** Milliseconds until the next sensor is due (null: none is). */
  async msUntilNextDue(db: Queryable): Promise<number | null> {
    const { rows } = await db.query<{ ms: number | null }>(
      `SELECT (extract(epoch FROM min(next_evaluation_at) - now()) * 1000)::float8 AS ms FROM sensors WHERE NOT paused AND evaluation_run_id IS NULL`,
    );
    return rows[0]?.ms ?? null;
  }

  /**
   * Commits what an ended evaluation answered, in one transaction: under the sensor's row lock,
   * its tick is settled and the sensor freed for its next evaluation; when the run succeeded with
   * a readable answer and the cursor version it started from still holds, the runs of the run keys
   * not seen before are created and the cursor moves. An overdue evaluation is cancelled and
   * recorded as abandoned. Nothing is done twice: a tick no longer evaluating is left alone.
   */
  async commit(db: Db, ended: EndedEvaluation, actor: string): Promise<CommittedEvaluation | null> {
    return inTransaction(db, async (tx) => {
      const { rows: sensors } = await tx.query<SensorRow>(`SELECT ${SENSOR_COLUMNS} FROM sensors s WHERE s.id = $1 FOR UPDATE`, [ended.tick.sensorId]);
      const sensor = sensors[0];
      const { rows: ticks } = await tx.query<{ state: string }>(`SELECT state FROM sensor_ticks WHERE id = $1 FOR UPDATE`, [ended.tick.id]);
      if (!sensor || ticks[0]?.state !== 'evaluating') return null;
      const settle = (outcome: Omit<TickOutcome, 'cursorAfter'> & { cursorAfter?: JsonValue | null }) =>
        this.settle(tx, sensor, ended.tick, { cursorAfter: sensor.cursor, ...outcome });

      if (ended.overdue) {
        await this.runs.requestCancel(tx, [ended.tick.evaluationRunId], actor, 'CANCELLED_BY_USER', 'the sensor evaluation outlived its timeout and was abandoned');
        return settle({ state: 'failed', reasonCode: 'SENSOR_EVALUATION_ABANDONED', reasonText: `no result within the evaluation timeout of ${sensor.timeoutMs} ms (run ${ended.runState})` });
      }
      if (ended.runState !== 'succeeded') {
        const timedOut = ended.runReasonCode === 'TIMEOUT';
        return settle({
          state: 'failed',
          reasonCode: timedOut ? 'SENSOR_EVALUATION_ABANDONED' : 'SENSOR_EVALUATION_FAILED',
          reasonText: `the evaluation run ended ${ended.runState} (${ended.runReasonCode ?? '?'}${ended.runReasonText ? `: ${ended.runReasonText}` : ''})`,
        });
      }
      const reading = readSensorResult(ended.result);
      if (reading.kind === 'invalid') return settle({ state: 'failed', reasonCode: 'SENSOR_RESULT_INVALID', reasonText: reading.reason });
      const requested = reading.result.runs.length;
      if (sensor.cursorVersion !== ended.tick.cursorVersion) {
        return settle({
          state: 'failed',
          requested,
          reasonCode: 'SENSOR_CURSOR_MOVED',
          reasonText: `the cursor moved to version ${sensor.cursorVersion} while the evaluation of version ${ended.tick.cursorVersion} ran`,
        });
      }

      // One run per run key the sensor has not seen; a key repeated in one answer counts once.
      const firsts = new Map(reading.result.runs.map((r) => [r.runKey, r] as const));
      const proposed = [...firsts.values()].map((r) => ({ runKey: r.runKey, payload: r.payload, runId: newId() }));
      const { rows: fresh } = await tx.query<{ runKey: string }>(
        `INSERT INTO sensor_run_keys (sensor_id, run_key, run_id)
         SELECT $1, k.run_key, k.run_id FROM json_to_recordset($2::json) AS k(run_key text, run_id uuid)
         ON CONFLICT (sensor_id, run_key) DO NOTHING RETURNING run_key AS "runKey"`,
        [sensor.id, JSON.stringify(proposed.map((p) => ({ run_key: p.runKey, run_id: p.runId })))],
      );
      const freshKeys = new Set(fresh.map((f) => f.runKey));
      const now = new Date((await tx.query<{ now: Date }>('SELECT now()')).rows[0]!.now);
      const made = proposed.filter((p) => freshKeys.has(p.runKey)).map((p) => requestedRun(sensor, p, now, actor));
      const { dispatch } = await this.runs.insertRuns(tx, made.map((m) => m.run));
      const unresolved = made.filter((m) => m.unresolved !== null);
      if (unresolved.length > 0) await this.failUnresolved(tx, unresolved, actor);
      const failedIds = new Set(unresolved.map((u) => u.run.id));
      const cursorAfter = reading.result.cursor === undefined ? sensor.cursor : reading.result.cursor;
      const committed = await settle({
        state: requested === 0 ? 'skipped' : 'succeeded',
        requested,
        created: made.length,
        deduplicated: requested - made.length,
        runIds: made.map((m) => m.run.id),
        cursorAfter,
        moveCursor: true,
        reasonCode: null,
        reasonText: null,
      });
      // A failed run's steps were handed over by the insert before it failed; they are cancelled and go nowhere.
      const { rows: failedSteps } = await tx.query<{ id: string }>(`SELECT id FROM runs WHERE parent_run_id = ANY($1::uuid[])`, [[...failedIds]]);
      const dropped = new Set([...failedIds, ...failedSteps.map((s) => s.id)]);
      return { ...committed, dispatch: dispatch.filter((d) => !dropped.has(d.id)) };
    });
  }

  /** Ends the tick and frees the sensor for its next evaluation; moves the cursor (version + 1) when told to. */
  private async settle(tx: Tx, sensor: SensorRow, tick: SensorTickRow, outcome: TickOutcome): Promise<CommittedEvaluation> {
    await tx.query(
      `UPDATE sensor_ticks SET state = $2, requested = $3, created = $4, deduplicated = $5, run_ids = $6::uuid[], cursor_after = $7::jsonb,
              reason_code = $8, reason_text = $9, finished_at = clock_timestamp()
       WHERE id = $1`,
      [
        tick.id,
        outcome.state,
        outcome.requested ?? 0,
        outcome.created ?? 0,
        outcome.deduplicated ?? 0,
        outcome.runIds ?? [],
        JSON.stringify(outcome.cursorAfter ?? null),
        outcome.reasonCode,
        outcome.reasonText,
      ],
    );
    await tx.query(
      `UPDATE sensors SET evaluation_run_id = NULL,
              cursor = CASE WHEN $2 THEN $3::jsonb ELSE cursor END,
              cursor_version = cursor_version + CASE WHEN $2 THEN 1 ELSE 0 END,
              next_evaluation_at = greatest(next_evaluation_at, now())
       WHERE id = $1 AND evaluation_run_id = $4`,
      [sensor.id, outcome.moveCursor === true, JSON.stringify(outcome.cursorAfter ?? null), tick.evaluationRunId],
    );
    return { state: outcome.state, reasonCode: outcome.reasonCode, dispatch: [] };
  }

  /** Runs whose concurrency key their payload cannot resolve fail at once, with their steps, and are never handed over. */
  private async failUnresolved(tx: Tx, made: readonly RequestedRun[], actor: string): Promise<void> {
    await tx.query(
      `WITH f AS (SELECT * FROM json_to_recordset($1::json) AS f(id uuid, reason text)),
       failed AS (
         UPDATE runs r SET state = 'failed', reason_code = 'CONCURRENCY_KEY_UNRESOLVED', reason_text = f.reason, finished_at = now(),
                enqueued_at = NULL, updated_at = now()
         FROM f WHERE r.id = f.id
         RETURNING r.id, r.lease_epoch, f.reason
       ), events AS (
         INSERT INTO run_events (run_id, kind, from_state, to_state, lease_epoch, actor, reason_code, detail)
         SELECT x.id, 'failed', 'queued', 'failed', x.lease_epoch, $2, 'CONCURRENCY_KEY_UNRESOLVED', jsonb_build_object('reasonText', x.reason) FROM failed x
       )
       UPDATE runs s SET state = 'cancelled', reason_code = 'UPSTREAM_FAILED', reason_text = 'its run failed before it started',
              finished_at = now(), enqueued_at = NULL, updated_at = now()
       FROM f WHERE s.parent_run_id = f.id AND s.state = 'queued'`,
      [JSON.stringify(made.map((m) => ({ id: m.run.id, reason: m.unresolved }))), actor],
    );
  }
}

interface TickOutcome {
  state: SensorTickRow['state'];
  requested?: number;
  created?: number;
  deduplicated?: number;
  runIds?: string[];
  cursorAfter: JsonValue | null;
  moveCursor?: boolean;
  reasonCode: ReasonCode | null;
  reasonText: string | null;
}

/** An evaluation of `sensor`: its handler, once (the next interval evaluates again), with the sensor and its cursor in the target. */
function evaluationRun(sensor: SensorRow, now: Date, actor: string): NewRun {
  const handler = sensor.target as Extract<CallTarget, { type: 'handler' }>;
  return {
    id: newId(now.getTime()),
    namespaceId: sensor.namespaceId,
    scheduleId: null,
    origin: 'sensor',
    sourceRunId: null,
    scheduledFor: now,
    availableAt: now,
    deferReason: null,
    exclusive: false,
    maxAttempts: 1,
    target: { ...handler, evaluation: { sensor: { id: sensor.id, name: sensor.name }, cursor: sensor.cursor } },
    payload: sensor.payload,
    retry: { ...DEFAULT_RETRY_POLICY, maxAttempts: 1 },
    timeoutMs: sensor.timeoutMs,
    idempotencyKey: null,
    actor,
    reasonCode: null,
    detail: { sensorId: sensor.id, evaluation: true },
    sensorId: sensor.id,
  };
}

interface RequestedRun {
  run: NewRun;
  /** Why its concurrency keys cannot be resolved over its payload; null when they can. */
  unresolved: string | null;
}

/** A run the sensor asked for under `runKey`, as its `run` declaration says. */
function requestedRun(sensor: SensorRow, asked: { runKey: string; payload: JsonValue | null; runId: string }, now: Date, actor: string): RequestedRun {
  const spec = sensor.run;
  let unresolved: string | null = null;
  try {
    checkKeysResolve({ concurrency: spec.concurrency, target: spec.target, payload: asked.payload }, 'run.');
  } catch (error) {
    if (!(error instanceof ValidationError)) throw error;
    unresolved = error.message;
  }
  const target =
    unresolved !== null && isStepsTarget(spec.target)
      ? { ...spec.target, steps: spec.target.steps.map(({ concurrency: _, ...step }) => step) }
      : spec.target;
  const run: NewRun = {
    id: asked.runId,
    namespaceId: sensor.namespaceId,
    scheduleId: null,
    origin: 'sensor',
    sourceRunId: null,
    scheduledFor: now,
    availableAt: now,
    deferReason: null,
    exclusive: false,
    maxAttempts: spec.retry.maxAttempts,
    target,
    payload: asked.payload,
    retry: spec.retry,
    timeoutMs: spec.timeoutMs,
    idempotencyKey: null,
    actor,
    reasonCode: null,
    detail: { sensorId: sensor.id, runKey: asked.runKey },
    concurrency: unresolved === null ? declaredConcurrency(spec.concurrency, asked.payload) : null,
    priority: spec.priority ?? DEFAULT_PRIORITY,
    fairness: fairnessOver(spec.fairness ?? null, asked.payload),
    sensorId: sensor.id,
    runKey: asked.runKey,
  };
  return { run, unresolved };
}

