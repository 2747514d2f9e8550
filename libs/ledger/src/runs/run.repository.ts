/**
 * The run lifecycle in SQL: creation, the relay's hand-off to Redis, the worker's claim, lease
 * renewal and fenced verdicts, and the reaper. Every state change appends its run_events row in
 * the same statement or transaction. Every write by a lease holder carries its epoch: a stale
 * epoch matches zero rows and changes nothing.
 */
import { formatInstant, isUuid, type ActiveRun, type JsonValue, type ReasonCode, type RetryPolicy, type RunState, type Target } from '@kairos/domain';
import { inTransaction, pgConstraint, pgErrorCode, type Db, type Queryable, type Tx } from '../database.js';
import { decodeCursor, toPage, type Page } from '../pagination.js';
import { RUN_COLUMNS, type RunEventRow, type RunRow } from './run-row.js';
import { runQueueSql } from './run-queue.js';

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
}

/** An ad-hoc run, as `POST /v1/runs` creates it: no schedule, due at `availableAt`, attempts as its retry policy allows. */
export function manualRun(
  fields: Pick<NewRun, 'id' | 'namespaceId' | 'target' | 'payload' | 'retry' | 'timeoutMs' | 'idempotencyKey' | 'actor'> & { availableAt: Date },
): NewRun {
  return {
    ...fields,
    scheduleId: null,
    origin: 'manual',
    sourceRunId: null,
    scheduledFor: fields.availableAt,
    deferReason: null,
    exclusive: false,
    maxAttempts: fields.retry.maxAttempts,
    reasonCode: null,
    detail: {},
  };
}

/** What a worker needs to execute the run it just claimed. */
export interface ClaimedRun {
  id: string;
  namespaceId: string;
  scheduleId: string | null;
  scheduledFor: Date;
  attempt: number;
  maxAttempts: number;
  target: Target;
  payload: JsonValue | null;
  retry: RetryPolicy;
  timeoutMs: number;
  leaseEpoch: number;
  /** True when ending this run may have to release a run parked behind it (overlap buffer or replace). */
  mayReleaseParked: boolean;
}

export interface RunSnapshot {
  state: RunState;
  /** Milliseconds until the run is due (negative when overdue); null when parked behind another run. */
  dueInMs: number | null;
  cancelRequested: boolean;
  leaseExpiresInMs: number | null;
}

export type FinalVerdict = {
  state: Extract<RunState, 'succeeded' | 'failed' | 'cancelled' | 'dead'>;
  result: JsonValue | null;
  error: Record<string, unknown> | null;
  reasonCode: ReasonCode;
  reasonText: string | null;
  /** What an HTTP target answered, kept in the verdict event (the attempt view reads it from there). */
  response: Record<string, unknown> | null;
};

export interface RetryVerdict {
  delayMs: number;
  error: Record<string, unknown>;
  reasonCode: ReasonCode;
  reasonText: string | null;
  response: Record<string, unknown> | null;
}

export interface LeaseRenewal {
  id: string;
  epoch: number;
  cancelRequested: boolean;
  cancelRequestedBy: string | null;
}

/** A final verdict for one run, written by the holder of its lease at `epoch`. */
export interface FinishedRun {
  runId: string;
  epoch: number;
  verdict: FinalVerdict;
}

/** A failed attempt to retry, written by the holder of its lease at `epoch`. */
export interface RetriedRun {
  runId: string;
  epoch: number;
  retry: RetryVerdict;
}

/** The detail of a verdict event: the story explain tells about the attempt that ended. */
function eventDetail(reasonText: string | null, error: Record<string, unknown> | null, response: Record<string, unknown> | null) {
  return { ...(reasonText ? { reasonText } : {}), ...(error ? { error } : {}), ...(response ? { response } : {}) };
}

/** A run to hand to the queue: its id, when it is due, and the queue it travels on. */
export interface DispatchItem {
  id: string;
  availableAt: Date;
  queue: string;
}

/** The claim would put a second exclusive run of one schedule into `running`. */
export class RunBlockedError extends Error {
  constructor(readonly runIds: readonly string[]) {
    super(`run ${runIds.join(', ')} must wait: another run of its schedule is running`);
    this.name = 'RunBlockedError';
  }
}

const INFINITY = 'infinity';

export interface RunFilter {
  scheduleId?: string;
  state?: RunState;
}

export class RunRepository {
  async get(db: Queryable, namespaceId: string, id: string): Promise<RunRow | null> {
    if (!isUuid(id)) return null;
    const { rows } = await db.query<RunRow>(`SELECT ${RUN_COLUMNS} FROM runs r WHERE r.namespace_id = $1 AND r.id = $2`, [
      namespaceId,
      id,
    ]);
    return rows[0] ?? null;
  }

  /** The runs with these ids, in the order given. */
  async getMany(db: Queryable, ids: readonly string[]): Promise<RunRow[]> {
    if (ids.length === 0) return [];
    const { rows } = await db.query<RunRow>(`SELECT ${RUN_COLUMNS} FROM runs r WHERE r.id = ANY($1::uuid[])`, [ids]);
    const byId = new Map(rows.map((r) => [r.id, r]));
    return ids.map((id) => byId.get(id)!);
  }

  async findByIdempotencyKey(db: Queryable, namespaceId: string, key: string): Promise<RunRow | null> {
    const { rows } = await db.query<RunRow>(
      `SELECT ${RUN_COLUMNS} FROM runs r WHERE r.namespace_id = $1 AND r.idempotency_key = $2`,
      [namespaceId, key],
    );
    return rows[0] ?? null;
  }

  /** Newest first, keyset-paginated on id. */
  async list(db: Queryable, namespaceId: string, filter: RunFilter, limit: number, cursor?: string): Promise<Page<RunRow>> {
    const params: unknown[] = [namespaceId, limit + 1];
    const where = ['r.namespace_id = $1'];
    if (cursor !== undefined) {
      params.push(decodeCursor(cursor, isUuid));
      where.push(`r.id < $${params.length}`);
    }
    if (filter.scheduleId !== undefined) {
      params.push(filter.scheduleId);
      where.push(`r.schedule_id = $${params.length}`);
    }
    if (filter.state !== undefined) {
      params.push(filter.state);
      where.push(`r.state = $${params.length}`);
    }
    const { rows } = await db.query<RunRow>(
      `SELECT ${RUN_COLUMNS} FROM runs r WHERE ${where.join(' AND ')} ORDER BY r.id DESC LIMIT $2`,
      params,
    );
    return toPage(rows, limit, (r) => r.id);
  }

  /** A run's transition history, oldest first: the backbone of explain. `afterId` skips the events a follower has already seen. */
  async events(db: Queryable, runId: string, afterId = 0): Promise<RunEventRow[]> {
    const { rows } = await db.query<RunEventRow>(
      `SELECT id, at, kind, from_state AS "fromState", to_state AS "toState", lease_epoch AS "leaseEpoch", actor,
              reason_code AS "reasonCode", detail
       FROM run_events WHERE run_id = $1 AND id > $2 ORDER BY id`,
      [runId, afterId],
    );
    return rows;
  }

  /** Every queued run of a schedule, parked ones included. */
  async queuedIdsOfSchedule(tx: Queryable, scheduleId: string): Promise<string[]> {
    const { rows } = await tx.query<{ id: string }>(`SELECT id FROM runs WHERE schedule_id = $1 AND state = 'queued'`, [scheduleId]);
    return rows.map((r) => r.id);
  }

  /** The queued and running runs of each schedule, oldest slot first: the input of overlap decisions. */
  async activeBySchedule(tx: Queryable, scheduleIds: readonly string[]): Promise<Map<string, ActiveRun[]>> {
    const active = new Map<string, ActiveRun[]>();
    if (scheduleIds.length === 0) return active;
    const { rows } = await tx.query<ActiveRun & { scheduleId: string }>(
      `SELECT schedule_id AS "scheduleId", id, state, available_at = 'infinity' AS buffered FROM runs
       WHERE schedule_id = ANY($1::uuid[]) AND state IN ('queued', 'running')
       ORDER BY scheduled_for, id`,
      [scheduleIds],
    );
    for (const { scheduleId, ...run } of rows) {
      const list = active.get(scheduleId) ?? [];
      list.push(run);
      active.set(scheduleId, list);
    }
    return active;
  }

  /**
   * Records a cancellation request durably. The first request stands. Queued runs are cancelled
   * at once (in the same transaction); running ones are stopped by their holder, which sees the
   * request on its next lease renewal. Returns the ids that ended here.
   */
  async requestCancel(tx: Tx, ids: readonly string[], actor: string, reasonCode: ReasonCode, reasonText: string): Promise<string[]> {
    if (ids.length === 0) return [];
    const { rows } = await tx.query<{ id: string }>(
      `WITH requested AS (
         UPDATE runs SET cancel_requested_at = coalesce(cancel_requested_at, now()),
                cancel_requested_by = coalesce(cancel_requested_by, $2), updated_at = now(),
                state = CASE WHEN state = 'queued' THEN 'cancelled' ELSE state END,
                reason_code = CASE WHEN state = 'queued' THEN $3 ELSE reason_code END,
                reason_text = CASE WHEN state = 'queued' THEN $4 ELSE reason_text END,
                finished_at = CASE WHEN state = 'queued' THEN now() ELSE finished_at END
         WHERE id = ANY($1::uuid[]) AND state IN ('queued', 'running')
         RETURNING id, state, lease_epoch
       ), events AS (
         INSERT INTO run_events (run_id, kind, from_state, to_state, lease_epoch, actor, reason_code, detail)
         SELECT id, 'cancel_requested', NULL, NULL, lease_epoch, $2, $3, jsonb_build_object('reasonText', $4::text) FROM requested
         UNION ALL
         SELECT id, 'cancelled', 'queued', 'cancelled', lease_epoch, $2, $3, '{}'::jsonb FROM requested WHERE state = 'cancelled'
       )
       SELECT id FROM requested WHERE state = 'cancelled'`,
      [ids, actor, reasonCode, reasonText],
    );
    return rows.map((r) => r.id);
  }
  /**
   * Inserts runs and their `queued` events. The caller's transaction decides overlap first. Runs
   * that are due (not parked) are marked enqueued: the caller hands them to Redis right after the
   * commit, resets the mark if Redis refuses (the relay then retries), and if it crashes in between
   * the reconciler finds the run overdue with no job and re-creates it.
   */
  async insertRuns(tx: Queryable, runs: readonly NewRun[]): Promise<void> {
    if (runs.length === 0) return;
    await tx.query({
      name: 'kairos.runs.insert',
      text: `INSERT INTO runs (id, namespace_id, schedule_id, origin, source_run_id, scheduled_for, available_at,
                         defer_reason, state, exclusive, max_attempts, target, payload, retry, timeout_ms,
                         idempotency_key, enqueued_at)
       SELECT id, ns, sched, origin, src, slot, avail, defer, 'queued', excl, maxa, tgt::jsonb, pl::json, rt::jsonb, tmo, ikey,
              CASE WHEN avail < 'infinity' THEN now() END
       FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::text[], $5::uuid[], $6::timestamptz[], $7::timestamptz[],
                   $8::text[], $9::boolean[], $10::int[], $11::text[], $12::text[], $13::text[], $14::bigint[], $15::text[])
         AS t(id, ns, sched, origin, src, slot, avail, defer, excl, maxa, tgt, pl, rt, tmo, ikey)`,
      values: [
        runs.map((r) => r.id),
        runs.map((r) => r.namespaceId),
        runs.map((r) => r.scheduleId),
        runs.map((r) => r.origin),
        runs.map((r) => r.sourceRunId),
        runs.map((r) => r.scheduledFor),
        runs.map((r) => r.availableAt ?? INFINITY),
        runs.map((r) => r.deferReason),
        runs.map((r) => r.exclusive),
        runs.map((r) => r.maxAttempts),
        runs.map((r) => JSON.stringify(r.target)),
        runs.map((r) => (r.payload === null ? null : JSON.stringify(r.payload))),
        runs.map((r) => JSON.stringify(r.retry)),
        runs.map((r) => r.timeoutMs),
        runs.map((r) => r.idempotencyKey),
      ],
    });
    await tx.query({
      name: 'kairos.runs.insert-events',
      text: `INSERT INTO run_events (run_id, kind, to_state, lease_epoch, actor, reason_code, detail)
       SELECT id, 'queued', 'queued', 0, actor, reason, detail::jsonb
       FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[]) AS t(id, actor, reason, detail)`,
      values: [
        runs.map((r) => r.id),
        runs.map((r) => r.actor),
        runs.map((r) => r.reasonCode),
        runs.map((r) => JSON.stringify({ origin: r.origin, scheduledFor: formatInstant(r.scheduledFor), ...r.detail })),
      ],
    });
  }

  /** Committed runs that Redis has not been given yet, oldest due first. Parked runs wait for release. */
  async listUndispatched(db: Queryable, limit: number): Promise<DispatchItem[]> {
    const { rows } = await db.query<DispatchItem>(
      `SELECT id, available_at AS "availableAt", ${runQueueSql('runs')} AS queue FROM runs
       WHERE state = 'queued' AND enqueued_at IS NULL AND available_at < 'infinity'
       ORDER BY available_at LIMIT $1`,
      [limit],
    );
    return rows;
  }

  /** Marks runs as handed to Redis, before the relay or the reconciler hands them over. Returns the ids still queued. */
  async markEnqueued(db: Queryable, ids: readonly string[]): Promise<string[]> {
    if (ids.length === 0) return [];
    const { rows } = await db.query<{ id: string }>(
      `UPDATE runs SET enqueued_at = now() WHERE id = ANY($1::uuid[]) AND state = 'queued' RETURNING id`,
      [ids],
    );
    return rows.map((r) => r.id);
  }

  /** Undoes markEnqueued for runs Redis refused, so the relay hands them over on its next pass. */
  async markUndispatched(db: Queryable, ids: readonly string[]): Promise<void> {
    if (ids.length === 0) return;
    await db.query(`UPDATE runs SET enqueued_at = NULL WHERE id = ANY($1::uuid[]) AND state = 'queued'`, [ids]);
  }

  /**
   * Queued runs Redis should already hold that are overdue by more than `graceMs`: the reconciler's
   * list, oldest due first, one page at a time after `after` (the last item of the previous page).
   */
  async listOverdueEnqueued(db: Queryable, graceMs: number, limit: number, after: DispatchItem | null = null): Promise<DispatchItem[]> {
    const { rows } = await db.query<DispatchItem>(
      `SELECT id, available_at AS "availableAt", ${runQueueSql('runs')} AS queue FROM runs
       WHERE state = 'queued' AND enqueued_at IS NOT NULL
         AND available_at < now() - $1 * interval '1 millisecond'
         AND enqueued_at < now() - $1 * interval '1 millisecond'
         AND ($3::timestamptz IS NULL OR (available_at, id) > ($3, $4::uuid))
       ORDER BY available_at, id LIMIT $2`,
      [graceMs, limit, after?.availableAt ?? null, after?.id ?? null],
    );
    return rows;
  }

  /**
   * Claims each due, queued run among `runIds` for `owner` in one statement: running, epoch + 1,
   * lease until now + ttl, one `claimed` event each. Runs not claimable (not queued, not due,
   * cancellation waiting) are simply absent from the answer. Throws RunBlockedError when one of
   * them would become a second exclusive running run of its schedule; claim them one by one then.
   */
  async claimMany(db: Queryable, runIds: readonly string[], owner: string, ttlMs: number): Promise<ClaimedRun[]> {
    try {
      const { rows } = await db.query<ClaimedRun>({
        name: 'kairos.runs.claim',
        text: `WITH claimed AS (
           UPDATE runs SET state = 'running', lease_owner = $2, lease_epoch = lease_epoch + 1,
                  lease_expires_at = now() + $3 * interval '1 millisecond', heartbeat_at = now(),
                  started_at = coalesce(started_at, now()), updated_at = now()
           WHERE id = ANY($1::uuid[]) AND state = 'queued' AND available_at <= now() + interval '20 milliseconds'
             AND cancel_requested_at IS NULL
           RETURNING *
         ), event AS (
           INSERT INTO run_events (run_id, kind, from_state, to_state, lease_epoch, actor, detail)
           SELECT id, 'claimed', 'queued', 'running', lease_epoch, $2,
                  jsonb_build_object('attempt', attempt, 'leaseExpiresAt', lease_expires_at)
           FROM claimed
         )
         SELECT c.id, c.namespace_id AS "namespaceId", c.schedule_id AS "scheduleId", c.scheduled_for AS "scheduledFor",
                c.attempt, c.max_attempts AS "maxAttempts", c.target, c.payload, c.retry, c.timeout_ms AS "timeoutMs",
                c.lease_epoch AS "leaseEpoch",
                coalesce(s.overlap IN ('buffer_one', 'buffer_all', 'replace')
                         OR EXISTS (SELECT 1 FROM runs p WHERE p.schedule_id = c.schedule_id AND p.state = 'queued'
                                    AND p.available_at = 'infinity'), false) AS "mayReleaseParked"
         FROM claimed c LEFT JOIN schedules s ON s.id = c.schedule_id`,
        values: [runIds, owner, ttlMs],
      });
      return rows;
    } catch (error) {
      if (pgErrorCode(error) === '23505' && pgConstraint(error) === 'runs_one_exclusive_running') {
        throw new RunBlockedError(runIds);
      }
      throw error;
    }
  }

  /** Why a claim found nothing to take. */
  async snapshot(db: Queryable, runId: string): Promise<RunSnapshot | null> {
    const { rows } = await db.query<RunSnapshot>(
      `SELECT state,
              CASE WHEN available_at = 'infinity' THEN NULL
                   ELSE (extract(epoch FROM available_at - now()) * 1000)::float8 END AS "dueInMs",
              cancel_requested_at IS NOT NULL AS "cancelRequested",
              (extract(epoch FROM lease_expires_at - now()) * 1000)::float8 AS "leaseExpiresInMs"
       FROM runs WHERE id = $1`,
      [runId],
    );
    return rows[0] ?? null;
  }

  /**
   * Writes final verdicts, each fenced by the epoch it was claimed at, in one statement, with one
   * event each (its detail keeps the error and the HTTP response). Returns the ids written; a run
   * missing from the answer had lost its lease (reaped, reclaimed, or ended) and nothing changed.
   */
  async finishMany(db: Queryable, owner: string, verdicts: readonly FinishedRun[]): Promise<Set<string>> {
    if (verdicts.length === 0) return new Set();
    const { rows } = await db.query<{ id: string }>({
      name: 'kairos.runs.finish',
      text: `WITH v AS (
         SELECT * FROM unnest($2::uuid[], $3::bigint[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[])
           AS v(id, epoch, state, result, error, reason_code, reason_text, detail)
       ), done AS (
         UPDATE runs r SET state = v.state, result = v.result::json, error = v.error::jsonb, reason_code = v.reason_code,
                reason_text = v.reason_text, finished_at = now(), updated_at = now(), lease_owner = NULL, lease_expires_at = NULL
         FROM v WHERE r.id = v.id AND r.lease_epoch = v.epoch AND r.lease_owner = $1 AND r.state = 'running'
         RETURNING r.id, r.namespace_id, r.schedule_id, r.lease_epoch, r.state, v.reason_code, v.reason_text, v.detail
       ), event AS (
         INSERT INTO run_events (run_id, kind, from_state, to_state, lease_epoch, actor, reason_code, detail)
         SELECT id, state, 'running', state, lease_epoch, $1, reason_code, detail::jsonb FROM done
       ), dead_letter AS (
         INSERT INTO outbox (namespace_id, topic, aggregate_id, payload)
         SELECT namespace_id, 'run.dead', id,
                jsonb_build_object('runId', id, 'scheduleId', schedule_id, 'reasonCode', reason_code, 'reasonText', reason_text)
         FROM done WHERE state = 'dead'
       )
       SELECT id FROM done`,
      values: [
        owner,
        verdicts.map((v) => v.runId),
        verdicts.map((v) => v.epoch),
        verdicts.map((v) => v.verdict.state),
        verdicts.map((v) => (v.verdict.result === null ? null : JSON.stringify(v.verdict.result))),
        verdicts.map((v) => (v.verdict.error === null ? null : JSON.stringify(v.verdict.error))),
        verdicts.map((v) => v.verdict.reasonCode),
        verdicts.map((v) => v.verdict.reasonText),
        verdicts.map((v) => JSON.stringify(eventDetail(v.verdict.reasonText, v.verdict.error, v.verdict.response))),
      ],
    });
    return new Set(rows.map((r) => r.id));
  }

  /**
   * Returns failed attempts to the queue for their next attempt, each due after its delay, fenced
   * like finishMany. The caller keeps each Redis job and delays it, so the runs stay enqueued.
   * Returns when each requeued run is due; runs missing from the answer had lost their lease.
   */
  async requeueMany(db: Queryable, owner: string, retries: readonly RetriedRun[]): Promise<Map<string, Date>> {
    if (retries.length === 0) return new Map();
    const { rows } = await db.query<{ id: string; availableAt: Date }>({
      name: 'kairos.runs.requeue',
      text: `WITH v AS (
         SELECT * FROM unnest($2::uuid[], $3::bigint[], $4::bigint[], $5::text[], $6::text[], $7::text[])
           AS v(id, epoch, delay_ms, error, reason_code, detail)
       ), requeued AS (
         UPDATE runs r SET state = 'queued', attempt = r.attempt + 1,
                available_at = now() + v.delay_ms * interval '1 millisecond', defer_reason = 'retry backoff',
                error = v.error::jsonb, lease_owner = NULL, lease_expires_at = NULL, enqueued_at = now(), updated_at = now()
         FROM v WHERE r.id = v.id AND r.lease_epoch = v.epoch AND r.lease_owner = $1 AND r.state = 'running'
         RETURNING r.id, r.lease_epoch, r.attempt, r.available_at, v.delay_ms, v.reason_code, v.detail
       ), event AS (
         INSERT INTO run_events (run_id, kind, from_state, to_state, lease_epoch, actor, reason_code, detail)
         SELECT id, 'retry_scheduled', 'running', 'queued', lease_epoch, $1, reason_code,
                detail::jsonb || jsonb_build_object('nextAttempt', attempt, 'delayMs', delay_ms, 'availableAt', available_at)
         FROM requeued
       )
       SELECT id, available_at AS "availableAt" FROM requeued`,
      values: [
        owner,
        retries.map((r) => r.runId),
        retries.map((r) => r.epoch),
        retries.map((r) => r.retry.delayMs),
        retries.map((r) => JSON.stringify(r.retry.error)),
        retries.map((r) => r.retry.reasonCode),
        retries.map((r) => JSON.stringify(eventDetail(r.retry.reasonText, r.retry.error, r.retry.response))),
      ],
    });
    return new Map(rows.map((r) => [r.id, r.availableAt]));
  }

  /**
   * The batched heartbeat: extends every lease `owner` still holds among `held`, in one statement.
   * The answer lists the leases still held and whether cancellation was requested; a run missing
   * from it was lost, and its executor must stop and write nothing.
   */
  async renewLeases(
    db: Queryable,
    owner: string,
    held: readonly { id: string; epoch: number }[],
    ttlMs: number,
  ): Promise<LeaseRenewal[]> {
    if (held.length === 0) return [];
    const { rows } = await db.query<LeaseRenewal>(
      `UPDATE runs r SET lease_expires_at = now() + $4 * interval '1 millisecond', heartbeat_at = now()
       FROM unnest($2::uuid[], $3::bigint[]) AS h(id, epoch)
       WHERE r.id = h.id AND r.lease_epoch = h.epoch AND r.lease_owner = $1 AND r.state = 'running'
       RETURNING r.id, r.lease_epoch AS epoch, r.cancel_requested_at IS NOT NULL AS "cancelRequested",
                 r.cancel_requested_by AS "cancelRequestedBy"`,
      [owner, held.map((h) => h.id), held.map((h) => h.epoch), ttlMs],
    );
    return rows;
  }

  /**
   * Hands a claimed run back at a clean stop of its worker: queued and due now, the attempt not
   * counted, no crash counted. The epoch rises so nothing from the drained attempt can land later.
   * The caller keeps the Redis job and re-delays it. False when the lease was already lost.
   */
  async drain(db: Queryable, runId: string, epoch: number, owner: string): Promise<boolean> {
    const { rowCount } = await db.query(
      `WITH drained AS (
         UPDATE runs SET state = 'queued', lease_epoch = lease_epoch + 1, lease_owner = NULL, lease_expires_at = NULL,
                available_at = now(), enqueued_at = now(), updated_at = now()
         WHERE id = $1 AND lease_epoch = $2 AND lease_owner = $3 AND state = 'running'
         RETURNING id, lease_epoch
       )
       INSERT INTO run_events (run_id, kind, from_state, to_state, lease_epoch, actor, detail)
       SELECT id, 'drained', 'running', 'queued', lease_epoch, $3, '{"why":"worker shutting down"}'::jsonb FROM drained`,
      [runId, epoch, owner],
    );
    return rowCount === 1;
  }

  /** Records that a holder's write was refused because its lease had moved on. The run row is untouched. */
  async recordLeaseLost(db: Queryable, runId: string, epoch: number, owner: string, detail: Record<string, unknown>): Promise<void> {
    await db.query(
      `INSERT INTO run_events (run_id, kind, lease_epoch, actor, reason_code, detail)
       SELECT id, 'lease_lost', $2, $3, 'LEASE_LOST', $4::jsonb FROM runs WHERE id = $1`,
      [runId, epoch, owner, JSON.stringify(detail)],
    );
  }

  /** Cancels a queued run whose cancellation was requested before any worker claimed it. */
  async cancelQueued(db: Queryable, runId: string, actor: string): Promise<boolean> {
    const { rowCount } = await db.query(
      `WITH done AS (
         UPDATE runs SET state = 'cancelled', reason_code = 'CANCELLED_BY_USER',
                reason_text = 'cancelled before it started', finished_at = now(), updated_at = now()
         WHERE id = $1 AND state = 'queued' AND cancel_requested_at IS NOT NULL
         RETURNING id, lease_epoch
       )
       INSERT INTO run_events (run_id, kind, from_state, to_state, lease_epoch, actor, reason_code)
       SELECT id, 'cancelled', 'queued', 'cancelled', lease_epoch, $2, 'CANCELLED_BY_USER' FROM done`,
      [runId, actor],
    );
    return rowCount === 1;
  }

  /**
   * Releases the oldest run parked behind schedule `scheduleId` once no exclusive run of it is
   * active. It takes the schedule's row lock first, so a tick cannot park another run behind a run
   * that is ending while this looks for one. Returns the released run, to be dispatched.
   */
  async releaseParked(db: Db, scheduleId: string, actor: string): Promise<DispatchItem[]> {
    return inTransaction(db, async (tx) => {
      await tx.query('SELECT 1 FROM schedules WHERE id = $1 FOR NO KEY UPDATE', [scheduleId]);
      return this.releaseParkedLocked(tx, scheduleId, actor);
    });
  }

  private async releaseParkedLocked(tx: Tx, scheduleId: string, actor: string): Promise<DispatchItem[]> {
    const { rows } = await tx.query<DispatchItem>(
      `WITH next AS (
         SELECT id FROM runs
         WHERE schedule_id = $1 AND state = 'queued' AND available_at = 'infinity'
           AND NOT EXISTS (SELECT 1 FROM runs a WHERE a.schedule_id = $1 AND a.exclusive
                           AND (a.state = 'running' OR (a.state = 'queued' AND a.available_at < 'infinity')))
         ORDER BY scheduled_for, id LIMIT 1
       ), released AS (
         UPDATE runs r SET available_at = greatest(r.scheduled_for, now()), enqueued_at = now(), updated_at = now()
         FROM next WHERE r.id = next.id
         RETURNING r.id, r.available_at, r.lease_epoch, ${runQueueSql('r')} AS queue
       ), event AS (
         INSERT INTO run_events (run_id, kind, from_state, to_state, lease_epoch, actor, detail)
         SELECT id, 'released', 'queued', 'queued', lease_epoch, $2, '{}'::jsonb FROM released
       )
       SELECT id, available_at AS "availableAt", queue FROM released`,
      [scheduleId, actor],
    );
    return rows;
  }

  /**
   * Schedules with parked runs and no active exclusive run: the safety net for releases that were
   * missed. A parked run was never handed to Redis, so it is found through the relay's index.
   */
  async listStrandedParkedSchedules(db: Queryable, limit: number): Promise<string[]> {
    const { rows } = await db.query<{ scheduleId: string }>(
      `SELECT DISTINCT p.schedule_id AS "scheduleId" FROM runs p
       WHERE p.state = 'queued' AND p.enqueued_at IS NULL AND p.available_at = 'infinity'
         AND NOT EXISTS (SELECT 1 FROM runs a WHERE a.schedule_id = p.schedule_id AND a.exclusive
                         AND (a.state = 'running' OR (a.state = 'queued' AND a.available_at < 'infinity')))
       LIMIT $1`,
      [limit],
    );
    return rows.map((r) => r.scheduleId);
  }

  /**
   * The reaper: runs whose lease expired more than `skewMs` ago lost their executor. Each is
   * requeued (epoch + 1, crash_count + 1, due after `backoffMs`) or, once its crash count reaches
   * `crashBudget`, ended as dead with POISONED. Returns what was requeued so it can be dispatched.
   */
  async reapExpired(
    db: Queryable,
    opts: { skewMs: number; backoffMs: number; crashBudget: number; limit: number; actor: string },
  ): Promise<{ requeued: DispatchItem[]; poisoned: string[] }> {
    const { rows } = await db.query<{ id: string; state: RunState; availableAt: Date; queue: string }>(
      `WITH expired AS (
         SELECT id FROM runs
         WHERE state = 'running' AND lease_expires_at < now() - $1 * interval '1 millisecond'
         ORDER BY lease_expires_at LIMIT $4
         FOR UPDATE SKIP LOCKED
       ), reaped AS (
         UPDATE runs r SET
           crash_count = r.crash_count + 1,
           lease_epoch = r.lease_epoch + 1,
           lease_owner = NULL, lease_expires_at = NULL, updated_at = now(),
           state = CASE WHEN r.crash_count + 1 >= $3 THEN 'dead' ELSE 'queued' END,
           available_at = CASE WHEN r.crash_count + 1 >= $3 THEN r.available_at
                               ELSE now() + $2 * interval '1 millisecond' END,
           defer_reason = CASE WHEN r.crash_count + 1 >= $3 THEN r.defer_reason ELSE 'requeued after its executor died' END,
           enqueued_at = CASE WHEN r.crash_count + 1 >= $3 THEN r.enqueued_at ELSE now() END,
           reason_code = CASE WHEN r.crash_count + 1 >= $3 THEN 'POISONED' ELSE NULL END,
           reason_text = CASE WHEN r.crash_count + 1 >= $3
                              THEN 'lease expired ' || (r.crash_count + 1) || ' times; crash budget is ' || $3 ELSE NULL END,
           finished_at = CASE WHEN r.crash_count + 1 >= $3 THEN now() ELSE NULL END
         FROM expired WHERE r.id = expired.id
         RETURNING r.id, r.namespace_id, r.schedule_id, r.state, r.available_at, r.lease_epoch, r.crash_count, r.reason_code, r.reason_text,
                   ${runQueueSql('r')} AS queue
       ), dead_letter AS (
         INSERT INTO outbox (namespace_id, topic, aggregate_id, payload)
         SELECT namespace_id, 'run.dead', id,
                jsonb_build_object('runId', id, 'scheduleId', schedule_id, 'reasonCode', reason_code, 'reasonText', reason_text)
         FROM reaped WHERE state = 'dead'
       ), event AS (
         INSERT INTO run_events (run_id, kind, from_state, to_state, lease_epoch, actor, reason_code, detail)
         SELECT id, CASE WHEN state = 'dead' THEN 'poisoned' ELSE 'reaped' END, 'running', state, lease_epoch, $5,
                CASE WHEN state = 'dead' THEN 'POISONED' ELSE 'LEASE_EXPIRED' END,
                jsonb_build_object('crashCount', crash_count)
         FROM reaped
       )
       SELECT id, state, available_at AS "availableAt", queue FROM reaped`,
      [opts.skewMs, opts.backoffMs, opts.crashBudget, opts.limit, opts.actor],
    );
    return {
      requeued: rows.filter((r) => r.state === 'queued').map((r) => ({ id: r.id, availableAt: r.availableAt, queue: r.queue })),
      poisoned: rows.filter((r) => r.state === 'dead').map((r) => r.id),
    };
  }
}
