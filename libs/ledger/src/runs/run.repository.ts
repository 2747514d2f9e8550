/**
 * The run lifecycle in SQL: creation, the relay's hand-off to Redis, the worker's claim, lease
 * renewal and fenced verdicts, and the reaper. Every state change appends its run_events row in
 * the same statement or transaction. Every write by a lease holder carries its epoch: a stale
 * epoch matches zero rows and changes nothing.
 */
import { isUuid, type ActiveRun, type JsonValue, type ReasonCode, type RetryPolicy, type RunOrigin, type RunState, type Target } from '@kairos/domain';
import { inTransaction, pgConstraint, pgErrorCode, type Db, type Queryable, type Tx } from '../database.js';
import { decodeCursor, toPage, type Page } from '../pagination.js';
import { RUN_COLUMNS, type RunAttemptRow, type RunEventRow, type RunRow } from './run-row.js';

export interface NewRun {
  id: string;
  namespaceId: string;
  scheduleId: string | null;
  origin: RunOrigin;
  sourceRunId: string | null;
  scheduledFor: Date;
  /** Null parks the run behind an active one (overlap buffer) until it is released. */
  availableAt: Date | null;
  deferReason: string | null;
  exclusive: boolean;
  maxAttempts: number;
  target: Target;
  payload: JsonValue | null;
  retry: RetryPolicy;
  timeoutMs: number;
  idempotencyKey: string | null;
  actor: string;
  reasonCode: ReasonCode | null;
  detail: Record<string, unknown>;
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
  /** What an HTTP target answered, kept on the attempt. */
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

/** A run to hand to the queue: its id and when it is due. */
export interface DispatchItem {
  id: string;
  availableAt: Date;
}

/** The claim would put a second exclusive run of one schedule into `running`. */
export class RunBlockedError extends Error {
  constructor(readonly runId: string) {
    super(`run ${runId} must wait: another run of its schedule is running`);
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

  /** A run's execution attempts, oldest first. */
  async attempts(db: Queryable, runId: string): Promise<RunAttemptRow[]> {
    const { rows } = await db.query<RunAttemptRow>(
      `SELECT attempt, lease_epoch AS "leaseEpoch", worker, started_at AS "startedAt", renewals,
              last_renewed_at AS "lastRenewedAt", finished_at AS "finishedAt", outcome, reason_code AS "reasonCode",
              error, response
       FROM run_attempts WHERE run_id = $1 ORDER BY lease_epoch`,
      [runId],
    );
    return rows;
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
  /** Inserts runs and their `queued` events. The caller's transaction decides overlap first. */
  async insertRuns(tx: Queryable, runs: readonly NewRun[]): Promise<void> {
    if (runs.length === 0) return;
    await tx.query(
      `INSERT INTO runs (id, namespace_id, schedule_id, origin, source_run_id, scheduled_for, available_at,
                         defer_reason, state, exclusive, max_attempts, target, payload, retry, timeout_ms,
                         idempotency_key)
       SELECT id, ns, sched, origin, src, slot, avail, defer, 'queued', excl, maxa, tgt::jsonb, pl::json, rt::jsonb, tmo, ikey
       FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::text[], $5::uuid[], $6::timestamptz[], $7::timestamptz[],
                   $8::text[], $9::boolean[], $10::int[], $11::text[], $12::text[], $13::text[], $14::bigint[], $15::text[])
         AS t(id, ns, sched, origin, src, slot, avail, defer, excl, maxa, tgt, pl, rt, tmo, ikey)`,
      [
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
    );
    await tx.query(
      `INSERT INTO run_events (run_id, kind, to_state, lease_epoch, actor, reason_code, detail)
       SELECT id, 'queued', 'queued', 0, actor, reason, detail::jsonb
       FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[]) AS t(id, actor, reason, detail)`,
      [
        runs.map((r) => r.id),
        runs.map((r) => r.actor),
        runs.map((r) => r.reasonCode),
        runs.map((r) => JSON.stringify({ origin: r.origin, scheduledFor: r.scheduledFor.toISOString(), ...r.detail })),
      ],
    );
  }

  /** Committed runs that Redis has not been given yet, oldest due first. Parked runs wait for release. */
  async listUndispatched(db: Queryable, limit: number): Promise<DispatchItem[]> {
    const { rows } = await db.query<DispatchItem>(
      `SELECT id, available_at AS "availableAt" FROM runs
       WHERE state = 'queued' AND enqueued_at IS NULL AND available_at < 'infinity'
       ORDER BY available_at LIMIT $1`,
      [limit],
    );
    return rows;
  }

  /** Records that Redis holds a job for each run (again, after a repair). */
  async markEnqueued(db: Queryable, ids: readonly string[]): Promise<void> {
    if (ids.length === 0) return;
    await db.query(`UPDATE runs SET enqueued_at = now() WHERE id = ANY($1::uuid[]) AND state = 'queued'`, [ids]);
  }

  /** Queued runs Redis should already hold that are overdue by more than `graceMs`: the reconciler's list. */
  async listOverdueEnqueued(db: Queryable, graceMs: number, limit: number): Promise<DispatchItem[]> {
    const { rows } = await db.query<DispatchItem>(
      `SELECT id, available_at AS "availableAt" FROM runs
       WHERE state = 'queued' AND enqueued_at IS NOT NULL
         AND available_at < now() - $1 * interval '1 millisecond'
         AND enqueued_at < now() - $1 * interval '1 millisecond'
       ORDER BY available_at LIMIT $2`,
      [graceMs, limit],
    );
    return rows;
  }

  /**
   * Claims a due, queued run for `owner`: running, epoch + 1, lease until now + ttl. Null when the
   * run is not claimable (not queued, not due, cancellation waiting). Throws RunBlockedError when
   * another exclusive run of the same schedule is running.
   */
  async claim(db: Queryable, runId: string, owner: string, ttlMs: number): Promise<ClaimedRun | null> {
    try {
      const { rows } = await db.query<ClaimedRun>(
        `WITH claimed AS (
           UPDATE runs SET state = 'running', lease_owner = $2, lease_epoch = lease_epoch + 1,
                  lease_expires_at = now() + $3 * interval '1 millisecond', heartbeat_at = now(),
                  started_at = coalesce(started_at, now()), updated_at = now()
           WHERE id = $1 AND state = 'queued' AND available_at <= now() + interval '20 milliseconds'
             AND cancel_requested_at IS NULL
           RETURNING *
         ), event AS (
           INSERT INTO run_events (run_id, kind, from_state, to_state, lease_epoch, actor, detail)
           SELECT id, 'claimed', 'queued', 'running', lease_epoch, $2,
                  jsonb_build_object('attempt', attempt, 'leaseExpiresAt', lease_expires_at)
           FROM claimed
         ), attempt AS (
           INSERT INTO run_attempts (run_id, lease_epoch, attempt, worker) SELECT id, lease_epoch, attempt, $2 FROM claimed
         )
         SELECT c.id, c.namespace_id AS "namespaceId", c.schedule_id AS "scheduleId", c.scheduled_for AS "scheduledFor",
                c.attempt, c.max_attempts AS "maxAttempts", c.target, c.payload, c.retry, c.timeout_ms AS "timeoutMs",
                c.lease_epoch AS "leaseEpoch",
                coalesce(s.overlap IN ('buffer_one', 'buffer_all', 'replace')
                         OR EXISTS (SELECT 1 FROM runs p WHERE p.schedule_id = c.schedule_id AND p.state = 'queued'
                                    AND p.available_at = 'infinity'), false) AS "mayReleaseParked"
         FROM claimed c LEFT JOIN schedules s ON s.id = c.schedule_id`,
        [runId, owner, ttlMs],
      );
      return rows[0] ?? null;
    } catch (error) {
      if (pgErrorCode(error) === '23505' && pgConstraint(error) === 'runs_one_exclusive_running') {
        throw new RunBlockedError(runId);
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
   * Writes the verdict of the holder at `epoch`. False when the lease was lost (another holder, a
   * reap, or the run already ended): nothing was written to the run.
   */
  async finish(db: Queryable, runId: string, epoch: number, owner: string, verdict: FinalVerdict): Promise<boolean> {
    const { rowCount } = await db.query(
      `WITH done AS (
         UPDATE runs SET state = $4, result = $5::json, error = $6::jsonb, reason_code = $7, reason_text = $8,
                finished_at = now(), updated_at = now(), lease_owner = NULL, lease_expires_at = NULL
         WHERE id = $1 AND lease_epoch = $2 AND lease_owner = $3 AND state = 'running'
         RETURNING id, lease_epoch, state
       ), attempt AS (
         UPDATE run_attempts a SET finished_at = now(), reason_code = $7, error = $6::jsonb, response = $9::jsonb,
                outcome = CASE d.state WHEN 'succeeded' THEN 'succeeded' WHEN 'cancelled' THEN 'cancelled' ELSE 'failed' END
         FROM done d WHERE a.run_id = d.id AND a.lease_epoch = d.lease_epoch
       )
       INSERT INTO run_events (run_id, kind, from_state, to_state, lease_epoch, actor, reason_code, detail)
       SELECT id, state, 'running', state, lease_epoch, $3, $7, jsonb_build_object('reasonText', $8::text) FROM done`,
      [
        runId,
        epoch,
        owner,
        verdict.state,
        verdict.result === null ? null : JSON.stringify(verdict.result),
        verdict.error === null ? null : JSON.stringify(verdict.error),
        verdict.reasonCode,
        verdict.reasonText,
        verdict.response === null ? null : JSON.stringify(verdict.response),
      ],
    );
    return rowCount === 1;
  }

  /**
   * Returns a failed attempt to the queue for its next attempt, due after `delayMs`. The caller
   * keeps the Redis job and delays it, so the run stays enqueued. False when the lease was lost.
   */
  async requeueForRetry(db: Queryable, runId: string, epoch: number, owner: string, retry: RetryVerdict): Promise<Date | null> {
    const { rows } = await db.query<{ availableAt: Date }>(
      `WITH requeued AS (
         UPDATE runs SET state = 'queued', attempt = attempt + 1,
                available_at = now() + $4 * interval '1 millisecond', defer_reason = 'retry backoff',
                error = $5::jsonb, lease_owner = NULL, lease_expires_at = NULL, enqueued_at = now(), updated_at = now()
         WHERE id = $1 AND lease_epoch = $2 AND lease_owner = $3 AND state = 'running'
         RETURNING id, lease_epoch, attempt, available_at
       ), finished_attempt AS (
         UPDATE run_attempts a SET finished_at = now(), outcome = 'failed', reason_code = $6, error = $5::jsonb, response = $8::jsonb
         FROM requeued r WHERE a.run_id = r.id AND a.lease_epoch = r.lease_epoch
       ), event AS (
         INSERT INTO run_events (run_id, kind, from_state, to_state, lease_epoch, actor, reason_code, detail)
         SELECT id, 'retry_scheduled', 'running', 'queued', lease_epoch, $3, $6,
                jsonb_build_object('nextAttempt', attempt, 'delayMs', $4::bigint, 'availableAt', available_at, 'reasonText', $7::text)
         FROM requeued
       )
       SELECT available_at AS "availableAt" FROM requeued`,
      [
        runId,
        epoch,
        owner,
        retry.delayMs,
        JSON.stringify(retry.error),
        retry.reasonCode,
        retry.reasonText,
        retry.response === null ? null : JSON.stringify(retry.response),
      ],
    );
    return rows[0]?.availableAt ?? null;
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
      `WITH renewed AS (
         UPDATE runs r SET lease_expires_at = now() + $4 * interval '1 millisecond', heartbeat_at = now()
         FROM unnest($2::uuid[], $3::bigint[]) AS h(id, epoch)
         WHERE r.id = h.id AND r.lease_epoch = h.epoch AND r.lease_owner = $1 AND r.state = 'running'
         RETURNING r.id, r.lease_epoch, r.cancel_requested_at, r.cancel_requested_by
       ), counted AS (
         UPDATE run_attempts a SET renewals = a.renewals + 1, last_renewed_at = now()
         FROM renewed WHERE a.run_id = renewed.id AND a.lease_epoch = renewed.lease_epoch
       )
       SELECT id, lease_epoch AS epoch, cancel_requested_at IS NOT NULL AS "cancelRequested",
              cancel_requested_by AS "cancelRequestedBy"
       FROM renewed`,
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
       ), finished_attempt AS (
         UPDATE run_attempts a SET finished_at = now(), outcome = 'drained'
         FROM drained d WHERE a.run_id = d.id AND a.lease_epoch = $2
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
       VALUES ($1, 'lease_lost', $2, $3, 'LEASE_LOST', $4::jsonb)`,
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
         UPDATE runs r SET available_at = greatest(r.scheduled_for, now()), enqueued_at = NULL, updated_at = now()
         FROM next WHERE r.id = next.id
         RETURNING r.id, r.available_at, r.lease_epoch
       ), event AS (
         INSERT INTO run_events (run_id, kind, from_state, to_state, lease_epoch, actor, detail)
         SELECT id, 'released', 'queued', 'queued', lease_epoch, $2, '{}'::jsonb FROM released
       )
       SELECT id, available_at AS "availableAt" FROM released`,
      [scheduleId, actor],
    );
    return rows;
  }

  /** Schedules with parked runs and no active exclusive run: the safety net for releases that were missed. */
  async listStrandedParkedSchedules(db: Queryable, limit: number): Promise<string[]> {
    const { rows } = await db.query<{ scheduleId: string }>(
      `SELECT DISTINCT p.schedule_id AS "scheduleId" FROM runs p
       WHERE p.state = 'queued' AND p.available_at = 'infinity'
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
    const { rows } = await db.query<{ id: string; state: RunState; availableAt: Date }>(
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
           enqueued_at = NULL,
           reason_code = CASE WHEN r.crash_count + 1 >= $3 THEN 'POISONED' ELSE NULL END,
           reason_text = CASE WHEN r.crash_count + 1 >= $3
                              THEN 'lease expired ' || (r.crash_count + 1) || ' times; crash budget is ' || $3 ELSE NULL END,
           finished_at = CASE WHEN r.crash_count + 1 >= $3 THEN now() ELSE NULL END
         FROM expired WHERE r.id = expired.id
         RETURNING r.id, r.state, r.available_at, r.lease_epoch, r.crash_count
       ), lost_attempt AS (
         UPDATE run_attempts a SET finished_at = now(), outcome = 'lost', reason_code = 'LEASE_EXPIRED'
         FROM reaped WHERE a.run_id = reaped.id AND a.lease_epoch = reaped.lease_epoch - 1 AND a.finished_at IS NULL
       ), event AS (
         INSERT INTO run_events (run_id, kind, from_state, to_state, lease_epoch, actor, reason_code, detail)
         SELECT id, CASE WHEN state = 'dead' THEN 'poisoned' ELSE 'reaped' END, 'running', state, lease_epoch, $5,
                CASE WHEN state = 'dead' THEN 'POISONED' ELSE 'LEASE_EXPIRED' END,
                jsonb_build_object('crashCount', crash_count)
         FROM reaped
       )
       SELECT id, state, available_at AS "availableAt" FROM reaped`,
      [opts.skewMs, opts.backoffMs, opts.crashBudget, opts.limit, opts.actor],
    );
    return {
      requeued: rows.filter((r) => r.state === 'queued').map((r) => ({ id: r.id, availableAt: r.availableAt })),
      poisoned: rows.filter((r) => r.state === 'dead').map((r) => r.id),
    };
  }
}
