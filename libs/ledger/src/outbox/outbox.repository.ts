/**
 * The transactional outbox: a domain event is written in the same transaction as the change it
 * describes, so it exists exactly when the change does. The leader publishes unpublished events in
 * id order and then marks them; a crash in between publishes them again (at least once).
 */
import { formatOptionalInstant, type DomainEventTopic } from '@kairos/domain';
import type { Queryable } from '../database.js';
import type { ScheduleRow } from '../schedules/schedule-row.js';

export interface DomainEvent {
  namespaceId: string;
  topic: DomainEventTopic;
  aggregateId: string;
  payload: Record<string, unknown>;
}

export interface OutboxRow extends DomainEvent {
  id: number;
  createdAt: Date;
}

/** The event of a schedule's lifecycle: who changed it, and where it stands now. */
export function scheduleEvent(topic: DomainEventTopic, row: ScheduleRow, actor: string): DomainEvent {
  return {
    namespaceId: row.namespaceId,
    topic,
    aggregateId: row.id,
    payload: { scheduleId: row.id, name: row.name, status: row.status, nextFireAt: formatOptionalInstant(row.nextFireAt), actor },
  };
}

export class OutboxRepository {
  /** Appends events in one statement; each payload is read from the document as its JSON text and cast (json_to_recordset's own jsonb conversion cost more than the insert). */
  async append(tx: Queryable, events: readonly DomainEvent[]): Promise<void> {
    if (events.length === 0) return;
    await tx.query(
      `INSERT INTO outbox (namespace_id, topic, aggregate_id, payload)
       SELECT ns, topic, aggregate, payload::jsonb FROM json_to_recordset($1::json) AS t(ns uuid, topic text, aggregate uuid, payload text)`,
      [JSON.stringify(events.map((e) => ({ ns: e.namespaceId, topic: e.topic, aggregate: e.aggregateId, payload: e.payload })))],
    );
  }

  /** Appends events and answers their ids (as decimal strings), in order. */
  async appendReturningIds(tx: Queryable, events: readonly DomainEvent[]): Promise<string[]> {
    const { rows } = await tx.query<{ id: string }>(
      `INSERT INTO outbox (namespace_id, topic, aggregate_id, payload)
       SELECT ns, topic, aggregate, payload FROM unnest($1::uuid[], $2::text[], $3::uuid[], $4::jsonb[]) WITH ORDINALITY AS t(ns, topic, aggregate, payload, ord)
       ORDER BY ord RETURNING id::text`,
      [events.map((e) => e.namespaceId), events.map((e) => e.topic), events.map((e) => e.aggregateId), events.map((e) => JSON.stringify(e.payload))],
    );
    return rows.map((r) => r.id);
  }

  async listUnpublished(db: Queryable, limit: number): Promise<OutboxRow[]> {
    const { rows } = await db.query<OutboxRow>(
      `SELECT id, namespace_id AS "namespaceId", topic, aggregate_id AS "aggregateId", payload, created_at AS "createdAt"
       FROM outbox WHERE published_at IS NULL ORDER BY id LIMIT $1`,
      [limit],
    );
    return rows;
  }

  async markPublished(db: Queryable, ids: readonly number[]): Promise<void> {
    if (ids.length === 0) return;
    await db.query(`UPDATE outbox SET published_at = now() WHERE id = ANY($1::bigint[])`, [ids]);
  }
}
