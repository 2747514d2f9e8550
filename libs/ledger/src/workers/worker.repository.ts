/**
 * The worker registry: which worker serves which queue with which handlers. Workers write their
 * row when they start and refresh it as they heartbeat (through the worker protocol); the API reads it to refuse handler
 * targets no worker has ever registered, and lists it under GET /v1/workers, and the versions it runs under GET /v1/versions.
 */
import { builtInHandlersOf } from '@kairos/domain';
import type { Queryable } from '../database.js';
import { decodeCursor, toPage, type Page } from '../pagination.js';
import { targetQueueSql } from '../runs/target-queue.js';

export interface WorkerRow {
  id: string;
  queue: string;
  handlers: string[];
  version: string;
  startedAt: Date;
  lastSeenAt: Date;
  /** The database's clock minus the worker host's, in ms, at its last heartbeat; null before it measured. */
  clockOffsetMs: number | null;
}

const COLUMNS = `id, queue, handlers, version, started_at AS "startedAt", last_seen_at AS "lastSeenAt", clock_offset_ms AS "clockOffsetMs"`;

/** A version of the code on a queue: its live workers, and the runs of a namespace that need it. */
export interface VersionRow {
  queue: string;
  version: string;
  workers: number;
  /** Runs it claimed that have not ended. */
  activeRuns: number;
  /** Of those, the runs held until a worker of their version runs (VERSION_UNAVAILABLE). */
  pinnedWaiting: number;
}

/**
 * Per queue and version, the live workers (of every namespace: workers are not namespaced) and
 * the active runs of namespace $1 claimed by that version; a pair with neither is left out.
 */
const VERSIONS_SQL = `
  WITH live AS (
    SELECT w.queue, w.version, count(*)::int AS workers FROM workers w
    WHERE kairos_worker_live(w.last_seen_at, w.stopped_at)
    GROUP BY 1, 2
  ), active AS (
    SELECT ${targetQueueSql('r')} AS queue, r.version, count(*)::int AS runs,
           count(*) FILTER (WHERE r.held_at IS NOT NULL AND r.defer_reason = 'VERSION_UNAVAILABLE')::int AS waiting
    FROM runs r
    WHERE r.namespace_id = $1 AND r.version IS NOT NULL AND r.state IN ('queued', 'running', 'sleeping', 'waiting')
    GROUP BY 1, 2
  )
  SELECT coalesce(l.queue, a.queue) AS queue, coalesce(l.version, a.version) AS version, coalesce(l.workers, 0) AS workers,
         coalesce(a.runs, 0) AS "activeRuns", coalesce(a.waiting, 0) AS "pinnedWaiting"
  FROM live l FULL JOIN active a ON a.queue = l.queue AND a.version = l.version
  ORDER BY coalesce(l.queue, a.queue) COLLATE "C", coalesce(l.version, a.version) COLLATE "C"`;

export class WorkerRepository {
  /**
   * Per queue, the smallest clock offset among its live workers: the host furthest ahead, which
   * would promote a delayed job first. Queues whose workers never measured are absent. (Workers
   * write their rows, and read this, through the worker protocol.)
   */
  async consumerClockOffsets(db: Queryable): Promise<Map<string, number>> {
    const { rows } = await db.query<{ queue: string; offset: number }>(`SELECT queue, "offset" FROM kairos_worker.consumer_clock_offsets()`);
    return new Map(rows.map((r) => [r.queue, r.offset]));
  }

  /** Every handler name known on `queue`, sorted: the built-in ones and those any worker registered there. */
  async knownHandlers(db: Queryable, queue: string): Promise<string[]> {
    const { rows } = await db.query<{ name: string }>(`SELECT DISTINCT unnest(handlers) AS name FROM workers WHERE queue = $1`, [queue]);
    return [...new Set([...builtInHandlersOf(queue), ...rows.map((r) => r.name)])].sort();
  }

  /** Every queue a worker has registered on. */
  async queues(db: Queryable): Promise<string[]> {
    const { rows } = await db.query<{ queue: string }>(`SELECT DISTINCT queue FROM workers ORDER BY queue`);
    return rows.map((r) => r.queue);
  }

  /**
   * Every queue and version with a live worker or an active run of the namespace, by queue then
   * version: when a version has no active runs left, its last worker may be stopped.
   */
  async versions(db: Queryable, namespaceId: string): Promise<VersionRow[]> {
    const { rows } = await db.query<VersionRow>(VERSIONS_SQL, [namespaceId]);
    return rows;
  }

  /** Workers by id, keyset-paginated. */
  async list(db: Queryable, limit: number, cursor?: string): Promise<Page<WorkerRow>> {
    const after = cursor === undefined ? null : decodeCursor(cursor, (key) => key.length > 0 && key.length <= 300);
    const { rows } = await db.query<WorkerRow>(
      `SELECT ${COLUMNS} FROM workers WHERE $2::text IS NULL OR id > $2 ORDER BY id LIMIT $1`,
      [limit + 1, after],
    );
    return toPage(rows, limit, (w) => w.id);
  }
}
