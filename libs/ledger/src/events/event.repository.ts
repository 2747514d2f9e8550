/**
 * Events as the API stores and reads them. An event is written with what it started in one
 * transaction: its row (a repeated id inserts nothing), the runs of the schedules listening to it
 * (written by the caller through the slot writer), and the waits it resumes. The lock of each event
 * name (kairos_event_lock) is taken shared here and exclusively by a wait being recorded
 * (kairos_worker.await_event), so an event stored while a wait is recorded is seen by one of them.
 */
import { formatInstant, storableText, type DispatchItem, type JsonValue, type ReasonCode } from '@kairos/domain';
import { jsonText, type Queryable, type Tx } from '../database.js';
import { decodeCursor, toPage, type Page } from '../pagination.js';
import { SCHEDULE_COLUMNS, type ScheduleRow } from '../schedules/schedule-row.js';
import { targetQueueSql } from '../runs/target-queue.js';

export interface EventRow {
  id: string;
  seq: string;
  name: string;
  data: JsonValue | null;
  receivedAt: Date;
  runIds: string[];
  skipped: EventSkip[];
  resumed: string[];
}

export interface EventSkip {
  scheduleId: string;
  reasonCode: ReasonCode;
}

/** An event to store: its id (the producer's, or a new one), name and data. */
export interface NewEvent {
  id: string;
  name: string;
  data: JsonValue | null;
}

/** A wait an event resumed: the run, queued again, to hand to the transport after the commit. */
export interface ResumedWait {
  eventId: string;
  runId: string;
  dispatch: DispatchItem | null;
}

const EVENT_COLUMNS = `e.id, e.seq::text AS seq, e.name, e.data, e.received_at AS "receivedAt", e.run_ids AS "runIds", e.skipped, e.resumed`;

/** The event as a run's payload and a resumed wait carry it, and match expressions read it. */
export function eventBody(row: Pick<EventRow, 'id' | 'name' | 'data' | 'receivedAt'>): { id: string; name: string; data: JsonValue | null; receivedAt: string } {
  return { id: row.id, name: row.name, data: row.data, receivedAt: formatInstant(row.receivedAt) };
}

export class EventRepository {
  async get(db: Queryable, namespaceId: string, id: string): Promise<EventRow | null> {
    const { rows } = await db.query<EventRow>(`SELECT ${EVENT_COLUMNS} FROM events e WHERE e.namespace_id = $1 AND e.id = $2`, [namespaceId, id]);
    return rows[0] ?? null;
  }

  /** The events of the namespace with these ids, by id. */
  async getMany(db: Queryable, namespaceId: string, ids: readonly string[]): Promise<Map<string, EventRow>> {
    if (ids.length === 0) return new Map();
    const { rows } = await db.query<EventRow>(`SELECT ${EVENT_COLUMNS} FROM events e WHERE e.namespace_id = $1 AND e.id = ANY($2::text[])`, [namespaceId, ids]);
    return new Map(rows.map((r) => [r.id, r]));
  }

  /** Newest first, keyset-paginated on the order they were stored in; `name` filters. */
  async list(db: Queryable, namespaceId: string, name: string | undefined, limit: number, cursor?: string): Promise<Page<EventRow>> {
    const params: unknown[] = [namespaceId, limit + 1];
    const where = ['e.namespace_id = $1'];
    if (name !== undefined) {
      params.push(name);
      where.push(`e.name = $${params.length}`);
    }
    if (cursor !== undefined) {
      params.push(decodeCursor(cursor, (value) => /^[0-9]{1,19}$/.test(value)));
      where.push(`e.seq < $${params.length}::bigint`);
    }
    const { rows } = await db.query<EventRow>(`SELECT ${EVENT_COLUMNS} FROM events e WHERE ${where.join(' AND ')} ORDER BY e.seq DESC LIMIT $2`, params);
    return toPage(rows, limit, (r) => r.seq);
  }

  /**
   * Stores the events whose ids the namespace has not seen, all received at the transaction's
   * instant, after taking the shared lock of each name (in one order, so two such transactions never
   * wait on each other in a cycle). A repeated id waits for the transaction that first used it and
   * then inserts nothing. Answers the rows written.
   */
  async insert(tx: Tx, namespaceId: string, events: readonly NewEvent[], actor: string): Promise<EventRow[]> {
    if (events.length === 0) return [];
    await tx.query(`SELECT kairos_lock_event_names($1, $2::text[])`, [namespaceId, [...new Set(events.map((e) => e.name))]]);
    const { rows } = await tx.query<EventRow>(
      `INSERT INTO events AS e (namespace_id, id, name, data, received_at, sent_by)
       SELECT $1, t.id, t.name, t.data::json, now(), $3 FROM json_to_recordset($2::json) AS t(id text, name text, data text)
       ON CONFLICT (namespace_id, id) DO NOTHING
       RETURNING ${EVENT_COLUMNS}`,
      [namespaceId, JSON.stringify(events.map((e) => ({ id: storableText(e.id), name: e.name, data: jsonText(e.data) ?? null }))), storableText(actor)],
    );
    return rows;
  }

  /** The live schedules of the namespace started by events of these names (through their index). */
  async listening(db: Queryable, namespaceId: string, names: readonly string[]): Promise<ScheduleRow[]> {
    if (names.length === 0) return [];
    const { rows } = await db.query<ScheduleRow>(
      `SELECT ${SCHEDULE_COLUMNS} FROM schedules s
       WHERE s.namespace_id = $1 AND s.kind = 'event' AND s.deleted_at IS NULL AND s.on_event = ANY($2::text[])`,
      [namespaceId, names],
    );
    return rows;
  }

  /**
   * Locks these schedules in one order and reads them again (a schedule deleted meanwhile is left
   * out): the ones whose runs are decided against what they hold (an overlap policy, flow control).
   */
  async lockListening(tx: Tx, ids: readonly string[]): Promise<ScheduleRow[]> {
    if (ids.length === 0) return [];
    const { rows } = await tx.query<ScheduleRow>(
      `SELECT ${SCHEDULE_COLUMNS} FROM schedules s WHERE s.id = ANY($1::uuid[]) AND s.deleted_at IS NULL ORDER BY s.id FOR NO KEY UPDATE`,
      [ids],
    );
    return rows;
  }

  /**
   * Resumes the runs waiting (ctx.waitForEvent) for these events: each wait of the namespace for an
   * event's name whose match the event fits, received since the wait began, takes the first such
   * event in the order given. Its row goes, its checkpoint is received with the event as result,
   * and its run, if waiting, is queued again and due now (marked handed over: the caller hands it
   * to the transport after the commit).
   */
  async resumeWaits(tx: Tx, namespaceId: string, events: readonly EventRow[], actor: string): Promise<ResumedWait[]> {
    if (events.length === 0) return [];
    // The runs first, in one order, as a wait being recorded locks its run before its checkpoint:
    // an event and a wait that times out as it arrives never wait on each other in a cycle.
    const { rows: locked } = await tx.query<{ id: string }>(
      `SELECT r.id FROM runs r
       WHERE r.id IN (SELECT w.run_id FROM event_waits w WHERE w.namespace_id = $1 AND w.name = ANY($2::text[]))
         AND r.state IN ('waiting', 'queued')
       ORDER BY r.id FOR NO KEY UPDATE`,
      [namespaceId, [...new Set(events.map((e) => e.name))]],
    );
    if (locked.length === 0) return [];
    const { rows } = await tx.query<{ eventId: string; runId: string; availableAt: Date | null; queue: string | null }>(
      `WITH ev AS (
         SELECT t.ord, e.id, e.name, t.body, e.received_at
         FROM json_to_recordset($2::json) AS t(ord int, id text, body jsonb) JOIN events e ON e.namespace_id = $1 AND e.id = t.id
       ), taken AS (
         SELECT DISTINCT ON (w.run_id, w.checkpoint) w.run_id, w.checkpoint, ev.id AS event_id, ev.body
         FROM event_waits w JOIN ev ON ev.name = w.name
         WHERE w.run_id = ANY($4::uuid[]) AND ev.received_at >= w.since AND kairos_event_matches(ev.body, w.match)
         ORDER BY w.run_id, w.checkpoint, ev.ord
       ), gone AS (
         DELETE FROM event_waits w USING taken t WHERE w.run_id = t.run_id AND w.checkpoint = t.checkpoint
         RETURNING t.*
       ), received AS (
         UPDATE run_checkpoints c SET state = 'received', result = g.body::json, finished_at = now()
         FROM gone g WHERE c.run_id = g.run_id AND c.name = g.checkpoint AND c.state = 'waiting'
         RETURNING c.run_id, g.event_id
       ), woken AS (
         UPDATE runs r SET state = 'queued', available_at = now(), enqueued_at = now(), updated_at = now()
         FROM received x WHERE r.id = x.run_id AND r.state = 'waiting'
         RETURNING r.id, r.available_at, r.lease_epoch, ${targetQueueSql('r')} AS queue, x.event_id
       ), event AS (
         INSERT INTO run_events (run_id, kind, from_state, to_state, lease_epoch, actor, detail)
         SELECT w.id, 'event_received', 'waiting', 'queued', w.lease_epoch, $3, jsonb_build_object('eventId', w.event_id) FROM woken w
       )
       SELECT x.event_id AS "eventId", x.run_id AS "runId", w.available_at AS "availableAt", w.queue
       FROM received x LEFT JOIN woken w ON w.id = x.run_id`,
      [namespaceId, JSON.stringify(events.map((e, ord) => ({ ord, id: e.id, body: eventBody(e) }))), storableText(actor), locked.map((r) => r.id)],
    );
    return rows.map((r) => ({
      eventId: r.eventId,
      runId: r.runId,
      dispatch: r.availableAt === null ? null : { id: r.runId, availableAt: r.availableAt, queue: r.queue! },
    }));
  }

  /** Records what each event started, skipped and resumed on its row. */
  async recordOutcomes(tx: Tx, namespaceId: string, outcomes: readonly { id: string; runIds: string[]; skipped: EventSkip[]; resumed: string[] }[]): Promise<void> {
    const changed = outcomes.filter((o) => o.runIds.length + o.skipped.length + o.resumed.length > 0);
    if (changed.length === 0) return;
    await tx.query(
      `UPDATE events e SET run_ids = t.run_ids, skipped = t.skipped, resumed = t.resumed
       FROM json_to_recordset($2::json) AS t(id text, run_ids uuid[], skipped jsonb, resumed uuid[])
       WHERE e.namespace_id = $1 AND e.id = t.id`,
      [namespaceId, JSON.stringify(changed.map((o) => ({ id: o.id, run_ids: o.runIds, skipped: o.skipped, resumed: o.resumed })))],
    );
  }

  /** Deletes up to `batch` events received before `before` (past the dedup window); answers how many. */
  async prune(db: Queryable, before: Date, batch: number): Promise<number> {
    const { rowCount } = await db.query(
      `DELETE FROM events e USING (SELECT namespace_id, id FROM events WHERE received_at < $1 ORDER BY received_at LIMIT $2) old
       WHERE e.namespace_id = old.namespace_id AND e.id = old.id`,
      [before, batch],
    );
    return rowCount ?? 0;
  }
}
