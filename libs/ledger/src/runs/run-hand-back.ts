/**
 * A worker handing a claimed run back because it cannot execute it (its handler is not registered
 * in that worker: a deploy skew). The run returns to `queued`, the attempt and the crash budget
 * untouched, and the epoch rises so nothing from this claim can land later. It is due again after
 * `delayMs`, doubled for every earlier hand-back of the run up to `maxDelayMs`, so a handler that
 * stays missing costs a few statements a minute, not a claim every few seconds.
 */
import type { ReasonCode } from '@kairos/domain';
import type { Queryable } from '../database.js';

/** False when the lease at `epoch` had already been lost. */
export async function handBackRun(
  db: Queryable,
  hand: { runId: string; epoch: number; owner: string; delayMs: number; maxDelayMs: number; reasonCode: ReasonCode; reasonText: string },
): Promise<Date | null> {
  const { rows } = await db.query<{ availableAt: Date }>(
    `WITH earlier AS (
       SELECT count(*)::int AS n FROM run_events WHERE run_id = $1 AND kind = 'handed_back'
     ), back AS (
       UPDATE runs SET state = 'queued', lease_epoch = lease_epoch + 1, lease_owner = NULL, lease_expires_at = NULL,
              available_at = now() + least($4 * power(2, least((SELECT n FROM earlier), 30)), $7) * interval '1 millisecond',
              defer_reason = $6, enqueued_at = now(), updated_at = now()
       WHERE id = $1 AND lease_epoch = $2 AND lease_owner = $3 AND state = 'running'
       RETURNING id, lease_epoch, available_at
     ), event AS (
       INSERT INTO run_events (run_id, kind, from_state, to_state, lease_epoch, actor, reason_code, detail)
       SELECT id, 'handed_back', 'running', 'queued', lease_epoch, $3, $5,
              jsonb_build_object('reasonText', $6::text, 'availableAt', available_at)
       FROM back
     )
     SELECT available_at AS "availableAt" FROM back`,
    [hand.runId, hand.epoch, hand.owner, hand.delayMs, hand.reasonCode, hand.reasonText, hand.maxDelayMs],
  );
  return rows[0]?.availableAt ?? null;
}
