/**
 * Runs as the recovery loops see them: the runs the transport refused, which the relay hands over
 * again; the reconciler's overdue runs (marked enqueued, yet without a job: a crash between commit
 * and enqueue, or a transport that lost its jobs) and stranded ones; the release of parked runs; and
 * the reaper. Every state change appends its run_events row in the same statement or transaction.
 */
import type { DispatchItem, RunState } from '@kairos/domain';
import type { Queryable } from '../database.js';
import { targetQueueSql } from './target-queue.js';
import { deadLetterCte, noActiveExclusiveRun } from './run-sql.js';

/** The job id of a run a limit held and released (DispatchItem.jobId); null (the run id) for the rest. */
const HELD_JOB_ID = `CASE WHEN hold_count > 0 THEN id || '-h' || hold_count END`;

export class RunRecoveryRepository {
  /**
   * Active runs not marked enqueued (the transport refused them, a step became ready and no worker
   * took it, or a limit released a run it held), oldest due first. Parked and held runs wait for
   * their release; a graph's own run is never handed over.
   */
  async listUndispatched(db: Queryable, limit: number): Promise<DispatchItem[]> {
    const { rows } = await db.query<DispatchItem>(
      `SELECT id, available_at AS "availableAt", ${targetQueueSql('runs')} AS queue, ${HELD_JOB_ID} AS "jobId", priority FROM runs
       WHERE state IN ('queued', 'sleeping', 'waiting') AND enqueued_at IS NULL AND held_at IS NULL AND available_at < 'infinity'
         AND target->>'type' <> 'steps'
       ORDER BY available_at LIMIT $1`,
      [limit],
    );
    return rows;
  }

  /**
   * Fills the fair-share window of every queue with runs waiting their turn (FAIR_SHARE), by
   * weighted turns: the runs let in, marked enqueued, to hand over.
   */
  async fillFairShare(db: Queryable): Promise<DispatchItem[]> {
    const { rows } = await db.query<DispatchItem>({ name: 'kairos.fair.fill-all', text: `SELECT * FROM kairos_fair_fill_all()` });
    return rows;
  }

  /** Marks runs as handed to the transport, before the relay or the reconciler hands them over. Returns the ids still queued. */
  async markEnqueued(db: Queryable, ids: readonly string[]): Promise<string[]> {
    if (ids.length === 0) return [];
    const { rows } = await db.query<{ id: string }>(
      `UPDATE runs SET enqueued_at = now() WHERE id = ANY($1::uuid[]) AND state IN ('queued', 'sleeping', 'waiting') RETURNING id`,
      [ids],
    );
    return rows.map((r) => r.id);
  }

  /** Undoes markEnqueued for runs the transport refused, so the relay hands them over on its next pass. */
  async markUndispatched(db: Queryable, ids: readonly string[]): Promise<void> {
    if (ids.length === 0) return;
    await db.query(`SELECT kairos_worker.mark_undispatched($1::uuid[])`, [ids]);
  }

  /**
   * Queued runs, and parked ones past their wake instant, that Redis should already hold and that are overdue by more than `graceMs`: the reconciler's
   * list, oldest due first, one page at a time after `after` (the last item of the previous page).
   */
  async listOverdueEnqueued(db: Queryable, graceMs: number, limit: number, after: DispatchItem | null = null): Promise<DispatchItem[]> {
    const { rows } = await db.query<DispatchItem>(
      `SELECT id, available_at AS "availableAt", ${targetQueueSql('runs')} AS queue, ${HELD_JOB_ID} AS "jobId", priority FROM runs
       WHERE state IN ('queued', 'sleeping', 'waiting') AND enqueued_at IS NOT NULL
         AND available_at < now() - $1 * interval '1 millisecond'
         AND enqueued_at < now() - $1 * interval '1 millisecond'
         AND ($3::timestamptz IS NULL OR (available_at, id) > ($3, $4::uuid))
       ORDER BY available_at, id LIMIT $2`,
      [graceMs, limit, after?.availableAt ?? null, after?.id ?? null],
    );
    return rows;
  }

  /**
   * Releases the oldest run parked behind schedule `scheduleId` once no exclusive run of it is
   * active (the worker protocol's release_parked, which holds the schedule's row lock meanwhile).
   * Returns the released run, to be dispatched. The worker calls it after the verdict of a run that
   * may hold others back; the reconciler calls it for the releases that were missed.
   */
  async releaseParked(db: Queryable, scheduleId: string, actor: string): Promise<DispatchItem[]> {
    const { rows } = await db.query<DispatchItem>(`SELECT * FROM kairos_worker.release_parked($1, $2)`, [scheduleId, actor]);
    return rows;
  }

  /**
   * Schedules with parked runs and no active exclusive run: the safety net for releases that were
   * missed. A parked run was never handed to the transport, so it is found through the relay's index.
   */
  async listStrandedParkedSchedules(db: Queryable, limit: number): Promise<string[]> {
    const { rows } = await db.query<{ scheduleId: string }>(
      `SELECT DISTINCT p.schedule_id AS "scheduleId" FROM runs p
       WHERE p.state = 'queued' AND p.enqueued_at IS NULL AND p.available_at = 'infinity' AND p.schedule_id IS NOT NULL
         AND ${noActiveExclusiveRun('p.schedule_id')}
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
    const { rows } = await db.query<{ id: string; state: RunState; availableAt: Date; queue: string; priority: number }>(
      `WITH expired AS (
         SELECT id FROM runs
         -- A multi-step run is never leased: the running runs that may hold one are read through runs_running_by_queue.
         WHERE state = 'running' AND target->>'type' <> 'steps' AND lease_expires_at < now() - $1 * interval '1 millisecond'
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
                   ${targetQueueSql('r')} AS queue, r.priority
       ), ${deadLetterCte('reaped')}, event AS (
         INSERT INTO run_events (run_id, kind, from_state, to_state, lease_epoch, actor, reason_code, detail)
         SELECT id, CASE WHEN state = 'dead' THEN 'poisoned' ELSE 'reaped' END, 'running', state, lease_epoch, $5,
                CASE WHEN state = 'dead' THEN 'POISONED' ELSE 'LEASE_EXPIRED' END,
                jsonb_build_object('crashCount', crash_count)
         FROM reaped
       )
       SELECT id, state, available_at AS "availableAt", queue, priority FROM reaped`,
      [opts.skewMs, opts.backoffMs, opts.crashBudget, opts.limit, opts.actor],
    );
    return {
      requeued: rows.filter((r) => r.state === 'queued').map((r) => ({ id: r.id, availableAt: r.availableAt, queue: r.queue, priority: r.priority })),
      poisoned: rows.filter((r) => r.state === 'dead').map((r) => r.id),
    };
  }
}
