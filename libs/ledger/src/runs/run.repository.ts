/**
 * Runs as the API reads and creates them: lookups, listings, event histories, the active runs an
 * overlap decision reads, inserts and cancellation requests. Every state change appends its
 * run_events row in the same statement or transaction.
 */
import { formatInstant, isUuid, storableText, type ActiveRun, type ReasonCode, type RunState } from '@kairos/domain';
import { traceContextOf } from '@kairos/telemetry/trace-context';
import { inTransaction, jsonText, jsonbText, pgConstraint, pgErrorCode, type Db, type Queryable, type Tx } from '../database.js';
import { decodeCursor, toPage, type Page } from '../pagination.js';
import { RUN_COLUMNS, type NewRun, type RunEventRow, type RunRow } from './run-row.js';

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

  /** The run that first used the idempotency key, with the hash of the request that created it. */
  private async findByIdempotencyKey(db: Queryable, namespaceId: string, key: string): Promise<(RunRow & { requestHash: string | null }) | null> {
    const { rows } = await db.query<RunRow & { requestHash: string | null }>(
      `SELECT ${RUN_COLUMNS}, r.request_hash AS "requestHash" FROM runs r WHERE r.namespace_id = $1 AND r.idempotency_key = $2`,
      [namespaceId, key],
    );
    return rows[0] ?? null;
  }

  /** Records the hash of the API request that created the run (kept off the hot insert, which never has one). */
  private async setRequestHash(tx: Queryable, id: string, hash: string): Promise<void> {
    await tx.query(`UPDATE runs SET request_hash = $2 WHERE id = $1`, [id, hash]);
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

  /** The queued runs the tick made ahead of a slot that is not due yet (parked ones included). */
  async aheadIdsOfSchedule(tx: Queryable, scheduleId: string): Promise<string[]> {
    const { rows } = await tx.query<{ id: string }>(
      `SELECT id FROM runs WHERE schedule_id = $1 AND origin = 'schedule' AND state = 'queued' AND scheduled_for > now()`,
      [scheduleId],
    );
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
   * that are due (not parked) are marked enqueued: the caller hands them to the transport right
   * after the commit, resets the mark if the transport refuses (the relay then retries), and if it
   * crashes in between the reconciler finds the run overdue with no job and re-creates it.
   */
  async insertRuns(tx: Queryable, runs: readonly NewRun[]): Promise<void> {
    if (runs.length === 0) return;
    // The span creating the runs (a tick, an API request) is their trace: the worker continues it.
    const trace = traceContextOf();
    await tx.query({
      name: 'kairos.runs.insert',
      text: `INSERT INTO runs (id, namespace_id, schedule_id, origin, source_run_id, scheduled_for, available_at,
                         defer_reason, state, exclusive, max_attempts, target, payload, retry, timeout_ms,
                         idempotency_key, enqueued_at, trace_parent, trace_state)
       SELECT id, ns, sched, origin, src, slot, avail, defer, 'queued', excl, maxa, tgt::jsonb, pl::json, rt::jsonb, tmo, ikey,
              CASE WHEN avail < 'infinity' THEN now() END, $2::text, $3::text
       FROM json_to_recordset($1::json)
         AS t(id uuid, ns uuid, sched uuid, origin text, src uuid, slot timestamptz, avail timestamptz, defer text, excl boolean,
              maxa int, tgt text, pl text, rt text, tmo bigint, ikey text)`,
      values: [
        JSON.stringify(
          runs.map((r) => ({
            id: r.id,
            ns: r.namespaceId,
            sched: r.scheduleId,
            origin: r.origin,
            src: r.sourceRunId,
            slot: r.scheduledFor,
            avail: r.availableAt ?? INFINITY,
            defer: r.deferReason && storableText(r.deferReason),
            excl: r.exclusive,
            maxa: r.maxAttempts,
            tgt: jsonbText(r.target),
            pl: jsonText(r.payload),
            rt: jsonbText(r.retry),
            tmo: r.timeoutMs,
            ikey: r.idempotencyKey && storableText(r.idempotencyKey),
          })),
        ),
        trace.traceParent,
        trace.traceState,
      ],
    });
    await tx.query({
      name: 'kairos.runs.insert-events',
      text: `INSERT INTO run_events (run_id, kind, to_state, lease_epoch, actor, reason_code, detail)
       SELECT id, 'queued', 'queued', 0, actor, reason, detail::jsonb
       FROM json_to_recordset($1::json) AS t(id uuid, actor text, reason text, detail text)`,
      values: [
        JSON.stringify(
          runs.map((r) => ({
            id: r.id,
            actor: storableText(r.actor),
            reason: r.reasonCode,
            detail: jsonbText({ origin: r.origin, scheduledFor: formatInstant(r.scheduledFor), ...r.detail }),
          })),
        ),
      ],
    });
  }

  /**
   * Creates one run in its own transaction and returns it as written, with the hash of the API
   * request that created it when there is one. A repeated idempotency key in the namespace returns
   * the run that first used it, with `deduped: true` and the hash of that first request (the unique
   * index decides, not a read), so the caller can tell a replay from a conflicting reuse.
   */
  async create(db: Db, run: NewRun, requestHash: string | null = null): Promise<{ row: RunRow; deduped: boolean; requestHash: string | null }> {
    try {
      const row = await inTransaction(db, async (tx) => {
        await this.insertRuns(tx, [run]);
        if (requestHash !== null) await this.setRequestHash(tx, run.id, requestHash);
        return (await this.get(tx, run.namespaceId, run.id))!;
      });
      return { row, deduped: false, requestHash };
    } catch (error) {
      if (run.idempotencyKey === null || pgErrorCode(error) !== '23505' || pgConstraint(error) !== 'runs_idempotency_key') throw error;
      const { requestHash: stored, ...existing } = (await this.findByIdempotencyKey(db, run.namespaceId, run.idempotencyKey))!;
      return { row: existing, deduped: true, requestHash: stored };
    }
  }
}
