/**
 * The worker registry: which worker serves which queue with which handlers. Workers write their
 * row when they start and refresh it as they heartbeat; the API reads it to refuse handler
 * targets no worker has ever registered, and lists it under GET /v1/workers.
 */
import { builtInHandlersOf } from '@kairos/domain';
import type { Queryable } from '../database.js';
import { decodeCursor, toPage, type Page } from '../pagination.js';

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

export interface WorkerRegistration {
  id: string;
  queue: string;
  handlers: readonly string[];
  version: string;
  clockOffsetMs: number | null;
}

const COLUMNS = `id, queue, handlers, version, started_at AS "startedAt", last_seen_at AS "lastSeenAt", clock_offset_ms AS "clockOffsetMs"`;

/** A worker whose heartbeat is older than this no longer counts as a consumer of its queue. */
const LIVE_WORKER_INTERVAL = `interval '1 minute'`;

export class WorkerRepository {
  /** Records (or re-records, after a restart under the same id) what a worker serves. */
  async register(db: Queryable, worker: WorkerRegistration): Promise<void> {
    await db.query(
      `INSERT INTO workers (id, queue, handlers, version, started_at, last_seen_at, clock_offset_ms) VALUES ($1, $2, $3, $4, now(), now(), $5)
       ON CONFLICT (id) DO UPDATE SET queue = EXCLUDED.queue, handlers = EXCLUDED.handlers, version = EXCLUDED.version,
                                      started_at = now(), last_seen_at = now(), clock_offset_ms = EXCLUDED.clock_offset_ms`,
      [worker.id, worker.queue, [...new Set(worker.handlers)].sort(), worker.version, worker.clockOffsetMs],
    );
  }

  /** The heartbeat's refresh of last_seen_at and of the worker's clock offset. */
  async touch(db: Queryable, id: string, clockOffsetMs: number | null): Promise<void> {
    await db.query(`UPDATE workers SET last_seen_at = now(), clock_offset_ms = COALESCE($2, clock_offset_ms) WHERE id = $1`, [id, clockOffsetMs]);
  }

  /**
   * Per queue, the smallest clock offset among its live workers: the host furthest ahead, which
   * would promote a delayed job first. Queues whose workers never measured are absent.
   */
  async consumerClockOffsets(db: Queryable): Promise<Map<string, number>> {
    const { rows } = await db.query<{ queue: string; offset: number }>(
      `SELECT queue, min(clock_offset_ms) AS offset FROM workers
        WHERE last_seen_at > now() - ${LIVE_WORKER_INTERVAL} AND clock_offset_ms IS NOT NULL GROUP BY queue`,
    );
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
