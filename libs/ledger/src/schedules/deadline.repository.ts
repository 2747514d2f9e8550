/**
 * Deadlines (expect.succeededWithin), judged by the leader from the ledger: each slot of a
 * schedule that expects something is judged once its deadline has passed, in slot order, from the
 * slot after the last one judged. A slot is on time when its run succeeded by the deadline; it is
 * late otherwise (its run still queued, running, retrying or dead, skipped, or never made because
 * the slot was missed). Slots of a backfill are not judged, nor slots that fell due while the
 * schedule was paused (their ticks are written after the resume: missed, or fired by catch-up), nor
 * the dates a calendar excludes.
 */
import type { Queryable, Tx } from '../database.js';

/** A slot past its deadline, and what its run had done. */
export interface DueSlot {
  scheduleId: string;
  namespaceId: string;
  name: string;
  withinMs: number;
  lateSince: Date | null;
  scheduledFor: Date;
  outcome: string;
  runId: string | null;
  runState: string | null;
  finishedAt: Date | null;
  /** The slot fell due while the schedule was paused: someone chose not to run it then. */
  duringPause: boolean;
}

export class DeadlineRepository {
  /** Schedules with at least one slot past its deadline and not judged yet, at most `limit`. */
  async schedulesDue(db: Queryable, limit: number): Promise<string[]> {
    const { rows } = await db.query<{ id: string }>(
      `SELECT s.id FROM schedules s
       WHERE s.expect_succeeded_within_ms IS NOT NULL AND s.deleted_at IS NULL
         AND EXISTS (SELECT 1 FROM ticks t WHERE t.schedule_id = s.id AND t.origin = 'schedule' AND t.reason_code <> 'CALENDAR_EXCLUDED'
                       AND t.scheduled_for > coalesce(s.deadline_checked_through, s.created_at - interval '1 millisecond')
                       AND t.scheduled_for <= now() - s.expect_succeeded_within_ms * interval '1 millisecond')
       LIMIT $1`,
      [limit],
    );
    return rows.map((r) => r.id);
  }

  /**
   * The slots of these schedules past their deadline and not judged yet, oldest first, with the
   * schedules locked (one another transaction holds is skipped: it is judged on the next pass).
   */
  async lockDueSlots(tx: Tx, scheduleIds: readonly string[], perSchedule: number): Promise<DueSlot[]> {
    const { rows } = await tx.query<DueSlot>(
      `WITH s AS (
         SELECT id, namespace_id, name, expect_succeeded_within_ms, late_since, deadline_checked_through, created_at, resumed_at FROM schedules
         WHERE id = ANY($1::uuid[]) AND expect_succeeded_within_ms IS NOT NULL AND deleted_at IS NULL
         ORDER BY id FOR UPDATE SKIP LOCKED
       )
       SELECT s.id AS "scheduleId", s.namespace_id AS "namespaceId", s.name, s.expect_succeeded_within_ms AS "withinMs",
              s.late_since AS "lateSince", t.scheduled_for AS "scheduledFor", t.outcome, t.run_id AS "runId",
              r.state AS "runState", r.finished_at AS "finishedAt",
              coalesce(t.scheduled_for < s.resumed_at AND t.created_at >= s.resumed_at, false) AS "duringPause"
       FROM s CROSS JOIN LATERAL (
         SELECT scheduled_for, outcome, run_id, created_at FROM ticks t
         WHERE t.schedule_id = s.id AND t.origin = 'schedule' AND t.reason_code <> 'CALENDAR_EXCLUDED'
           AND t.scheduled_for > coalesce(s.deadline_checked_through, s.created_at - interval '1 millisecond')
           AND t.scheduled_for <= now() - s.expect_succeeded_within_ms * interval '1 millisecond'
         ORDER BY t.scheduled_for LIMIT $2
       ) t
       LEFT JOIN runs r ON r.id = t.run_id
       ORDER BY s.id, t.scheduled_for`,
      [scheduleIds, perSchedule],
    );
    return rows;
  }

  /** Records how far a schedule's slots were judged, and the lateness under way (null: none). */
  async markJudged(tx: Tx, scheduleId: string, through: Date, lateSince: Date | null): Promise<void> {
    await tx.query(`UPDATE schedules SET deadline_checked_through = $2, late_since = $3 WHERE id = $1`, [scheduleId, through, lateSince]);
  }
}
