/**
 * A worker handing a claimed run back because it cannot execute it (its handler is not registered
 * in that worker: a deploy skew). The run returns to `queued`, due after `delayMs`, the attempt and
 * the crash budget untouched, and the epoch rises so nothing from this claim can land later.
 */
import type { ReasonCode } from '@kairos/domain';
import type { Queryable } from '../database.js';

/** False when the lease at `epoch` had already been lost. */
export async function handBackRun(
  db: Queryable,
  hand: { runId: string; epoch: number; owner: string; delayMs: number; reasonCode: ReasonCode; reasonText: string },
): Promise<Date | null> {
  const { rows } = await db.query<{ availableAt: Date }>(
    `WITH back AS (
       UPDATE runs SET state = 'queued', lease_epoch = lease_epoch + 1, lease_owner = NULL, lease_expires_at = NULL,
              available_at = now() + $4 * interval '1 millisecond', defer_reason = $6, enqueued_at = now(), updated_at = now()
       WHERE id = $1 AND lease_epoch = $2 AND lease_owner = $3 AND state = 'running'
       RETURNING id, lease_epoch, available_at
     ), event AS (
       INSERT INTO run_events (run_id, kind, from_state, to_state, lease_epoch, actor, reason_code, detail)
       SELECT id, 'handed_back', 'running', 'queued', lease_epoch, $3, $5,
              jsonb_build_object('reasonText', $6::text, 'availableAt', available_at)
       FROM back
     )
     SELECT available_at AS "availableAt" FROM back`,
    [hand.runId, hand.epoch, hand.owner, hand.delayMs, hand.reasonCode, hand.reasonText],
  );
  return rows[0]?.availableAt ?? null;
}
