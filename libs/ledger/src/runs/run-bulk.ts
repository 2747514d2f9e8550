/**
 * The pages of a bulk action on runs (POST /v1/runs/bulk): the ids of the runs of one namespace a
 * filter matches, oldest first, keyset-paginated on id, so an action on 100,000 runs reads and
 * writes them 500 at a time and never holds the ledger for long. As the listing does, a step run
 * is never matched itself: its graph's run is.
 */
import { ACTIVE_RUN_STATES, RETRYABLE_RUN_STATES, type ReasonCode, type RunState } from '@kairos/domain';
import type { Queryable } from '../database.js';
import { targetQueueSql } from './target-queue.js';

export type RunBulkKind = 'cancel' | 'retry';

export interface RunBulkSelection {
  namespaceId: string;
  kind: RunBulkKind;
  scheduleId?: string;
  /** Only these states; absent: every state the action acts on. */
  state?: readonly RunState[];
  reasonCode?: ReasonCode;
  queue?: string;
  createdAfter?: Date;
  createdBefore?: Date;
  /** The instant the action began: runs created later (a retry's own fresh runs among them) are never matched. */
  createdUpTo: Date;
}

/**
 * The runs an action acts on: cancel the active ones; retry those POST /v1/runs/:id/retry accepts
 * (ended without succeeding: failed, dead or cancelled). An SQL condition on runs alias `r`.
 */
export function runBulkEligibleSql(kind: RunBulkKind): string {
  return `r.state IN (${(kind === 'cancel' ? ACTIVE_RUN_STATES : RETRYABLE_RUN_STATES).map((s) => `'${s}'`).join(', ')})`;
}

/** The ids of up to `limit` runs the selection matches with an id above `afterId`, in id order. */
export async function runBulkPage(db: Queryable, selection: RunBulkSelection, afterId: string | null, limit: number): Promise<string[]> {
  const params: unknown[] = [selection.namespaceId, limit, selection.createdUpTo];
  const where = ['r.namespace_id = $1', 'r.parent_run_id IS NULL', 'r.created_at <= $3', runBulkEligibleSql(selection.kind)];
  const add = (value: unknown, condition: (param: string) => string) => {
    params.push(value);
    where.push(condition(`$${params.length}`));
  };
  if (afterId !== null) add(afterId, (p) => `r.id > ${p}::uuid`);
  if (selection.state !== undefined) add(selection.state, (p) => `r.state = ANY(${p}::text[])`);
  if (selection.scheduleId !== undefined) add(selection.scheduleId, (p) => `r.schedule_id = ${p}::uuid`);
  if (selection.reasonCode !== undefined) add(selection.reasonCode, (p) => `r.reason_code = ${p}`);
  if (selection.createdAfter !== undefined) add(selection.createdAfter, (p) => `r.created_at >= ${p}`);
  if (selection.createdBefore !== undefined) add(selection.createdBefore, (p) => `r.created_at < ${p}`);
  if (selection.queue !== undefined) {
    // A multi-step run travels on no queue of its own: it is on each queue one of its steps is.
    add(
      selection.queue,
      (p) => `(CASE WHEN r.target->>'type' = 'steps'
                    THEN EXISTS (SELECT 1 FROM runs s WHERE s.parent_run_id = r.id AND ${targetQueueSql('s')} = ${p})
                    ELSE ${targetQueueSql('r')} = ${p} END)`,
    );
  }
  const { rows } = await db.query<{ id: string }>(`SELECT r.id FROM runs r WHERE ${where.join(' AND ')} ORDER BY r.id LIMIT $2`, params);
  return rows.map((r) => r.id);
}

/**
 * Of `ids` (a page just cancelled in transaction `tx`), those the cancellation acted on: ended by
 * it, or running and asked to stop by it (their request is this transaction's: now() is its start).
 */
export async function cancelledInTransaction(tx: Queryable, ids: readonly string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const { rows } = await tx.query<{ id: string }>(`SELECT id FROM runs WHERE id = ANY($1::uuid[]) AND cancel_requested_at = now()`, [ids]);
  return new Set(rows.map((r) => r.id));
}
