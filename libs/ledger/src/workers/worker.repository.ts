/**
 * The worker registry: which worker serves which queue with which handlers. Workers write their
 * row when they start and refresh it as they heartbeat (through the worker protocol); the API reads it to refuse handler
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

const COLUMNS = `id, queue, handlers, version, started_at AS "startedAt", last_seen_at AS "lastSeenAt", clock_offset_ms AS "clockOffsetMs"`;

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
