/**
 * What waits on the queues of a namespace, by priority and by fairness key: its runs in state
 * queued (due or not, held or not), counted per queue and priority, and the fairness keys with the
 * most of them. One statement for every queue of a listing.
 *
 * Every queued run is in one of two partial indexes of queued runs, runs_unenqueued (not handed to
 * the transport) and runs_queued_enqueued (handed over); the statement names both halves so the
 * planner reads the two indexes (a bitmap OR) instead of every run of the namespace. A graph's own
 * run waits on no queue (its steps do) and is left out, as the other counts of a queue leave it out.
 */
import { MAX_PRIORITY, MIN_PRIORITY } from '@kairos/domain';
import { QUEUE_VIEW_FAIRNESS_KEYS } from '@kairos/domain/wire';
import { targetQueueSql, type Queryable } from '@kairos/ledger';

/** A queue's queued runs: per priority (index 0 is priority 1), and its top fairness keys, most first. */
export interface QueueBacklog {
  queuedByPriority: { priority: number; queued: number }[];
  fairnessKeys: { key: string; queued: number }[];
}

/**
 * Per queue, priority and key first; then the sums per priority, and the top keys per queue (ties by
 * key, in byte order as queue names are). A row is either a priority's count (key null) or a key's
 * (priority null).
 */
const BACKLOG_SQL = `
  WITH queued AS (
    SELECT ${targetQueueSql('r')} AS queue, r.priority, r.fairness_key AS key, count(*)::int AS n
    FROM runs r
    WHERE r.state = 'queued' AND (r.enqueued_at IS NULL OR r.enqueued_at IS NOT NULL)
      AND r.namespace_id = $1 AND r.target->>'type' <> 'steps'
      AND ($2::text IS NULL OR ${targetQueueSql('r')} = $2)
    GROUP BY 1, 2, 3
  ), keys AS (
    SELECT q.queue, q.key, sum(q.n)::int AS n,
           row_number() OVER (PARTITION BY q.queue ORDER BY sum(q.n) DESC, q.key COLLATE "C") AS rank
    FROM queued q
    WHERE q.key IS NOT NULL
    GROUP BY q.queue, q.key
  )
  SELECT q.queue, q.priority::int AS priority, NULL::text AS key, sum(q.n)::int AS queued, NULL::bigint AS rank FROM queued q GROUP BY q.queue, q.priority
  UNION ALL
  SELECT k.queue, NULL::int, k.key, k.n, k.rank FROM keys k WHERE k.rank <= ${QUEUE_VIEW_FAIRNESS_KEYS}
  ORDER BY rank`;

/** Zero runs at every priority, and no key: a queue without queued runs. */
export function emptyBacklog(): QueueBacklog {
  const queuedByPriority = [];
  for (let priority = MIN_PRIORITY; priority <= MAX_PRIORITY; priority++) queuedByPriority.push({ priority, queued: 0 });
  return { queuedByPriority, fairnessKeys: [] };
}

/**
 * The queued runs of the namespace's queues (of `queue` alone when given), by queue; a queue
 * without queued runs is not in the map (see emptyBacklog).
 */
export async function queueBacklogs(db: Queryable, namespaceId: string, queue: string | null = null): Promise<Map<string, QueueBacklog>> {
  const { rows } = await db.query<{ queue: string; priority: number | null; key: string | null; queued: number }>(BACKLOG_SQL, [namespaceId, queue]);
  const backlogs = new Map<string, QueueBacklog>();
  for (const row of rows) {
    let backlog = backlogs.get(row.queue);
    if (!backlog) backlogs.set(row.queue, (backlog = emptyBacklog()));
    if (row.key !== null) backlog.fairnessKeys.push({ key: row.key, queued: row.queued });
    else backlog.queuedByPriority[row.priority! - MIN_PRIORITY]!.queued = row.queued;
  }
  return backlogs;
}
