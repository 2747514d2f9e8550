/**
 * Queue limits of a namespace (queue_limits): at most max_running of a queue's runs running at
 * once, at most rate_max starts in any window of rate_per_ms. The claim enforces them in the
 * database (kairos_admit); this is where they are set and read, with what runs, waits and is held
 * on each queue, and how many workers serve it.
 */
import type { Queryable } from '../database.js';
import { targetQueueSql } from '../runs/target-queue.js';

export interface QueueLimits {
  maxRunning: number | null;
  rate: { max: number; perMs: number } | null;
}

/** A queue of a namespace as the API shows it: its limits (null without), and its counts now. */
export interface QueueRow {
  name: string;
  maxRunning: number | null;
  rateMax: number | null;
  ratePerMs: number | null;
  /** When its limits were last set; null without limits. */
  updatedAt: Date | null;
  running: number;
  /** Due, waiting for a worker, not held back. */
  queued: number;
  /** Held back by a limit until a place frees. */
  held: number;
  /** Live workers of the queue (kairos_worker_live). */
  workers: number;
}

/**
 * The queues of a namespace ($1), or the one named $2: those with limits, those of its active runs
 * and those of live workers, each with its limits and counts, by name.
 */
const QUEUES_SQL = `
  WITH limits AS (
    SELECT l.queue, l.max_running, l.rate_max, l.rate_per_ms, l.updated_at FROM queue_limits l
    WHERE l.namespace_id = $1 AND ($2::text IS NULL OR l.queue = $2)
  ), active AS (
    -- A graph's own run holds no place in a queue: its steps do.
    SELECT ${targetQueueSql('r')} AS queue,
           count(*) FILTER (WHERE r.state = 'running')::int AS running,
           count(*) FILTER (WHERE r.state = 'queued' AND r.held_at IS NULL AND r.available_at <= now())::int AS queued,
           count(*) FILTER (WHERE r.held_at IS NOT NULL)::int AS held
    FROM runs r
    WHERE r.namespace_id = $1 AND r.state IN ('queued', 'running', 'sleeping', 'waiting') AND r.target->>'type' <> 'steps'
      AND ($2::text IS NULL OR ${targetQueueSql('r')} = $2)
    GROUP BY 1
  ), live AS (
    SELECT w.queue, count(*)::int AS workers FROM workers w
    WHERE kairos_worker_live(w.last_seen_at, w.stopped_at) AND ($2::text IS NULL OR w.queue = $2)
    GROUP BY w.queue
  ), names AS (
    SELECT queue FROM limits UNION SELECT queue FROM active UNION SELECT queue FROM live UNION SELECT $2::text WHERE $2::text IS NOT NULL
  )
  SELECT n.queue AS name, l.max_running AS "maxRunning", l.rate_max AS "rateMax", l.rate_per_ms AS "ratePerMs", l.updated_at AS "updatedAt",
         coalesce(a.running, 0) AS running, coalesce(a.queued, 0) AS queued, coalesce(a.held, 0) AS held, coalesce(w.workers, 0) AS workers
  FROM names n
  LEFT JOIN limits l ON l.queue = n.queue
  LEFT JOIN active a ON a.queue = n.queue
  LEFT JOIN live w ON w.queue = n.queue
  ORDER BY n.queue COLLATE "C"`;

/** The most held runs one release frees (kairos_release_held's own bound when nothing limits the queue). */
const RELEASE_BATCH = 1000;

export class QueueLimitRepository {
  /**
   * Sets the limits of `queue` in the namespace (none: its row is deleted), then releases as many
   * of its held runs as the new limits leave places for, all in the caller's transaction; the
   * release wakes the scheduler's relay when it commits. Returns how many runs it released.
   */
  async set(tx: Queryable, namespaceId: string, queue: string, limits: QueueLimits, actor: string): Promise<number> {
    if (limits.maxRunning === null && limits.rate === null) {
      await tx.query(`DELETE FROM queue_limits WHERE namespace_id = $1 AND queue = $2`, [namespaceId, queue]);
    } else {
      await tx.query(
        `INSERT INTO queue_limits (namespace_id, queue, max_running, rate_max, rate_per_ms, updated_at, updated_by)
         VALUES ($1, $2, $3, $4, $5, now(), $6)
         ON CONFLICT (namespace_id, queue) DO UPDATE
           SET max_running = EXCLUDED.max_running, rate_max = EXCLUDED.rate_max, rate_per_ms = EXCLUDED.rate_per_ms,
               updated_at = now(), updated_by = EXCLUDED.updated_by`,
        [namespaceId, queue, limits.maxRunning, limits.rate?.max ?? null, limits.rate?.perMs ?? null, actor],
      );
    }
    return this.releaseHeld(tx, namespaceId, queue, actor, limits.maxRunning === null && limits.rate === null);
  }

  /**
   * Releases the held runs of `queue` its limits leave places for. Without limits every held run
   * is released, a batch at a time; with limits, one release (a place taken by a released run
   * counts once it runs, so a second one could release more than there are places).
   */
  private async releaseHeld(tx: Queryable, namespaceId: string, queue: string, actor: string, unlimited: boolean): Promise<number> {
    let released = 0;
    for (;;) {
      const { rows } = await tx.query<{ released: number }>(`SELECT kairos_release_held($1, NULL, $2, $3) AS released`, [namespaceId, queue, actor]);
      const batch = rows[0]!.released;
      released += batch;
      if (!unlimited || batch < RELEASE_BATCH) return released;
    }
  }

  /** The queues of the namespace with limits, active runs or live workers, each with its limits and counts, by name. */
  async list(db: Queryable, namespaceId: string): Promise<QueueRow[]> {
    const { rows } = await db.query<QueueRow>(QUEUES_SQL, [namespaceId, null]);
    return rows;
  }

  /** One queue of the namespace, any valid name: without limits, runs or workers its counts are zero. */
  async get(db: Queryable, namespaceId: string, queue: string): Promise<QueueRow> {
    const { rows } = await db.query<QueueRow>(QUEUES_SQL, [namespaceId, queue]);
    return rows[0]!;
  }
}
