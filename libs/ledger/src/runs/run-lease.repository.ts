/**
 * The worker's hot path in SQL: claiming runs, renewing their leases, and writing fenced verdicts
 * (the happy path on the run row, the rest as run_events rows).
 * Every write by a lease holder carries its epoch: a stale epoch matches zero rows and changes
 * nothing. Claims, verdicts and retries take a batch per statement and run as prepared statements
 * (see the worker's batched ledger), so their text stays fixed.
 */
import { storableText, type JsonValue, type ReasonCode, type RunState } from '@kairos/domain';
import { jsonText, jsonbText, pgConstraint, pgErrorCode, uuidArray, type Queryable } from '../database.js';
import type { ClaimedRun } from './run-row.js';
import { NEXT_EVENT_ID, deadLetterCte } from './run-sql.js';

/** What became of one run a worker tried to claim. */
export type ClaimResult =
  | { kind: 'claimed'; run: ClaimedRun }
  /** Another exclusive run of its schedule is running: try again later. */
  | { kind: 'blocked' }
  /** Not queued, not due, or a cancellation is waiting: the run's snapshot says which. */
  | { kind: 'unclaimable' };

const BLOCKED: ClaimResult = { kind: 'blocked' };
const UNCLAIMABLE: ClaimResult = { kind: 'unclaimable' };

function claimResult(run: ClaimedRun | undefined): ClaimResult {
  return run ? { kind: 'claimed', run } : UNCLAIMABLE;
}

/** The claim would have put a second exclusive run of one schedule into `running`. */
function isExclusiveRunConflict(error: unknown): boolean {
  return pgErrorCode(error) === '23505' && pgConstraint(error) === 'runs_one_exclusive_running';
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

export class RunLeaseRepository {
  /**
   * Claims each due, queued run among `runIds` for `owner`: running, epoch + 1, lease until
   * now + ttl, the first claim of a run recorded on its row, a later one as a `claimed` event. The answer has one result per id, in order. A run that
   * would become a second exclusive running run of its schedule is `blocked`; one that is not
   * queued, not due, or has a cancellation waiting is `unclaimable` (its snapshot says which).
   */
  async claimMany(db: Queryable, runIds: readonly string[], owner: string, ttlMs: number): Promise<ClaimResult[]> {
    try {
      const claimed = new Map((await this.claimStatement(db, runIds, owner, ttlMs)).map((r) => [r.id, r]));
      return runIds.map((id) => claimResult(claimed.get(id)));
    } catch (error) {
      if (!isExclusiveRunConflict(error)) throw error;
    }
    // One run of the batch would be a second exclusive run of its schedule: claim them one by one
    // so only that one waits.
    const results: ClaimResult[] = [];
    for (const id of runIds) {
      try {
        results.push(claimResult((await this.claimStatement(db, [id], owner, ttlMs))[0]));
      } catch (error) {
        if (!isExclusiveRunConflict(error)) throw error;
        results.push(BLOCKED);
      }
    }
    return results;
  }

  /** The claim in one statement; throws the unique violation of runs_one_exclusive_running when a claim is blocked. */
  private async claimStatement(db: Queryable, runIds: readonly string[], owner: string, ttlMs: number): Promise<ClaimedRun[]> {
    const { rows } = await db.query<ClaimedRun>({
      name: 'kairos.runs.claim',
      text: `WITH claimed AS (
           UPDATE runs SET state = 'running', lease_owner = $2, lease_epoch = lease_epoch + 1,
                  lease_expires_at = now() + $3 * interval '1 millisecond', heartbeat_at = now(),
                  started_at = coalesce(started_at, now()), updated_at = now(),
                  -- The first claim is recorded on the row; the columns keep it when later claims move the lease.
                  claimed_event_id = CASE WHEN started_at IS NULL THEN ${NEXT_EVENT_ID} ELSE claimed_event_id END,
                  claimed_by = CASE WHEN started_at IS NULL THEN $2 ELSE claimed_by END,
                  claimed_epoch = CASE WHEN started_at IS NULL THEN lease_epoch + 1 ELSE claimed_epoch END,
                  claimed_attempt = CASE WHEN started_at IS NULL THEN attempt ELSE claimed_attempt END,
                  claimed_until = CASE WHEN started_at IS NULL THEN now() + $3 * interval '1 millisecond' ELSE claimed_until END
           WHERE id = ANY($1::uuid[]) AND state = 'queued' AND available_at <= now() + interval '20 milliseconds'
             AND cancel_requested_at IS NULL
           RETURNING *
         ), event AS (
           INSERT INTO run_events (run_id, kind, from_state, to_state, lease_epoch, actor, detail)
           SELECT id, 'claimed', 'queued', 'running', lease_epoch, $2,
                  jsonb_build_object('attempt', attempt, 'leaseExpiresAt', lease_expires_at)
           FROM claimed WHERE claimed_epoch IS DISTINCT FROM lease_epoch
         )
         SELECT c.id, c.namespace_id AS "namespaceId", c.schedule_id AS "scheduleId", c.scheduled_for AS "scheduledFor",
                c.attempt, c.max_attempts AS "maxAttempts", c.target, c.payload, c.retry, c.timeout_ms AS "timeoutMs",
                c.lease_epoch AS "leaseEpoch", c.trace_parent AS "traceParent", c.trace_state AS "traceState",
                coalesce(s.overlap IN ('buffer_one', 'buffer_all', 'replace')
                         OR EXISTS (SELECT 1 FROM runs p WHERE p.schedule_id = c.schedule_id AND p.state = 'queued'
                                    AND p.available_at = 'infinity'), false) AS "mayReleaseParked"
         FROM claimed c LEFT JOIN schedules s ON s.id = c.schedule_id`,
      values: [uuidArray(runIds), owner, ttlMs],
    });
    return rows;
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
   * Writes final verdicts, each fenced by the epoch it was claimed at, in one statement, recorded
   * on the run row (with the error and the HTTP response; the run story reads them as the verdict's
   * event). Returns the ids written; a run
   * missing from the answer had lost its lease (reaped, reclaimed, or ended) and nothing changed.
   */
  async finishMany(db: Queryable, owner: string, verdicts: readonly FinishedRun[]): Promise<Set<string>> {
    if (verdicts.length === 0) return new Set();
    const { rows } = await db.query<{ id: string }>({
      name: 'kairos.runs.finish',
      text: `WITH v AS (
         SELECT * FROM json_to_recordset($2::json)
           AS v(id uuid, epoch bigint, state text, result text, error text, reason_code text, reason_text text, response text)
       ), done AS (
         UPDATE runs r SET state = v.state, result = v.result::json, error = v.error::jsonb, reason_code = v.reason_code,
                reason_text = v.reason_text, response = v.response::jsonb, finished_at = now(), updated_at = now(),
                lease_owner = NULL, lease_expires_at = NULL, finished_event_id = ${NEXT_EVENT_ID}, finished_by = $1
         FROM v WHERE r.id = v.id AND r.lease_epoch = v.epoch AND r.lease_owner = $1 AND r.state = 'running'
         RETURNING r.id, r.namespace_id, r.schedule_id, r.state, v.reason_code, v.reason_text
       ), ${deadLetterCte('done')}
       SELECT id FROM done`,
      values: [
        owner,
        JSON.stringify(
          verdicts.map(({ runId, epoch, verdict: v }) => ({
            id: runId,
            epoch,
            state: v.state,
            result: jsonText(v.result),
            error: jsonbText(v.error),
            reason_code: v.reasonCode,
            reason_text: v.reasonText && storableText(v.reasonText),
            response: jsonbText(v.response),
          })),
        ),
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
         SELECT * FROM json_to_recordset($2::json) AS v(id uuid, epoch bigint, delay_ms bigint, error text, reason_code text, detail text)
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
        JSON.stringify(
          retries.map(({ runId, epoch, retry: r }) => ({
            id: runId,
            epoch,
            delay_ms: r.delayMs,
            error: jsonbText(r.error),
            reason_code: r.reasonCode,
            detail: jsonbText(eventDetail(r.reasonText, r.error, r.response)),
          })),
        ),
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
}
