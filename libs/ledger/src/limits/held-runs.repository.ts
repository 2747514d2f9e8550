/**
 * Runs that concurrency keys and queue limits hold back, runs held until a worker of their
 * version runs, and queues' fair-share backlogs, as the scheduler's limits loop sees them. A place that frees releases held runs in
 * the same transaction (the trigger of migration 0018), and a worker that registers releases the
 * runs waiting for its version; this loop releases what no such change will: the places a rate
 * window gives back as it slides, and any release missed (a limit raised by hand in SQL, a key
 * whose runs all ended before a hold, a worker that registered while a claim was holding a run
 * for want of it, a fair-share window left short).
 */
import type { Queryable } from '../database.js';

export interface HeldScope {
  namespaceId: string;
  /** A concurrency key's runs, or (null) a queue's. */
  key: string | null;
  queue: string | null;
  /** The queue's runs held for their version (VERSION_UNAVAILABLE) rather than by a limit. */
  version: boolean;
  /** The queue's backlog of runs waiting for their fairness key's turn (FAIR_SHARE). */
  fair?: boolean;
}

export class HeldRunsRepository {
  /** Keys and queues that hold runs back, and queues whose runs wait for their version, at most `limit` of each. */
  async heldScopes(db: Queryable, limit: number): Promise<HeldScope[]> {
    const { rows } = await db.query<HeldScope>(
      `(SELECT DISTINCT namespace_id AS "namespaceId", concurrency_key AS key, NULL AS queue, false AS version, false AS fair FROM runs
        WHERE held_at IS NOT NULL AND defer_reason = 'CONCURRENCY_LIMIT' LIMIT $1)
       UNION ALL
       (SELECT DISTINCT namespace_id, NULL, coalesce(target->>'queue', 'default'), false, false FROM runs
        WHERE held_at IS NOT NULL AND defer_reason IN ('QUEUE_LIMIT', 'QUEUE_RATE_LIMIT') LIMIT $1)
       UNION ALL
       (SELECT DISTINCT namespace_id, NULL, coalesce(target->>'queue', 'default'), true, false FROM runs
        WHERE held_at IS NOT NULL AND defer_reason = 'VERSION_UNAVAILABLE' LIMIT $1)
       UNION ALL
       (SELECT namespace_id, NULL, queue, false, true FROM fair_keys GROUP BY namespace_id, queue LIMIT $1)`,
      [limit],
    );
    return rows;
  }

  /**
   * Releases as many held runs of one key or queue as there are places free, or the runs of a
   * queue waiting for their version that a live worker serves; how many. Its own statement: it
   * takes one lock.
   */
  async release(db: Queryable, scope: HeldScope, actor: string): Promise<number> {
    if (scope.fair) {
      const { rows } = await db.query<{ released: number }>(`SELECT count(*)::int AS released FROM kairos_fair_fill($1, $2, false)`, [scope.namespaceId, scope.queue]);
      return rows[0]!.released;
    }
    const { rows } = scope.version
      ? await db.query<{ released: number }>(`SELECT kairos_release_version_held($1, $2, $3) AS released`, [scope.namespaceId, scope.queue, actor])
      : await db.query<{ released: number }>(`SELECT kairos_release_held($1, $2, $3, $4) AS released`, [scope.namespaceId, scope.key, scope.queue, actor]);
    return rows[0]!.released;
  }

  /** Milliseconds until the rate window of a queue holding runs back next gives a place back; null when none waits on a window. */
  async msUntilWindowFrees(db: Queryable): Promise<number | null> {
    const { rows } = await db.query<{ ms: number | null }>(
      `SELECT (extract(epoch FROM min(s.started_at + l.rate_per_ms * interval '1 millisecond') - now()) * 1000)::float8 AS ms
       FROM queue_limits l
       JOIN queue_starts s ON s.namespace_id = l.namespace_id AND s.queue = l.queue
         AND s.started_at > now() - l.rate_per_ms * interval '1 millisecond'
       WHERE l.rate_max IS NOT NULL
         AND EXISTS (SELECT 1 FROM runs h WHERE h.namespace_id = l.namespace_id AND coalesce(h.target->>'queue', 'default') = l.queue
                     AND h.held_at IS NOT NULL AND h.defer_reason = 'QUEUE_RATE_LIMIT')`,
    );
    return rows[0]?.ms ?? null;
  }
}
