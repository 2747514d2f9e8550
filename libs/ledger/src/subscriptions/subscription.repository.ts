/**
 * Subscriptions as the API declares and operates them (created, changed, paused, deleted, their
 * deliveries listed), and their deliveries as the leader writes and sends them: each outbox event
 * is fanned out once, in one transaction with the deliveries it makes, to the subscriptions whose
 * filter it matches; each delivery then records every attempt, until it is taken or given up.
 */
import { isUuid, type DeliveryState, type SubscriptionEvent, type SubscriptionFormat, type SubscriptionState } from '@kairos/domain';
import type { Queryable, Tx } from '../database.js';
import { decodeCursor, toPage, type Page } from '../pagination.js';

export interface SubscriptionDefinition {
  url: string;
  events: SubscriptionEvent[];
  scheduleIds: string[];
  labels: Record<string, string>;
  format: SubscriptionFormat;
  description: string | null;
}

export interface SubscriptionRow extends SubscriptionDefinition {
  id: string;
  namespaceId: string;
  state: SubscriptionState;
  disabledReason: string | null;
  failingSince: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface DeliveryAttemptRow {
  attempt: number;
  attemptedAt: Date;
  statusCode: number | null;
  latencyMs: number;
  error: string | null;
}

export interface DeliveryRow {
  id: string;
  subscriptionId: string;
  eventId: string;
  eventType: string;
  body: Record<string, unknown>;
  state: DeliveryState;
  attempts: number;
  nextAttemptAt: Date;
  createdAt: Date;
  finishedAt: Date | null;
}

export interface DeliveryWithAttempts extends DeliveryRow {
  attemptLog: DeliveryAttemptRow[];
}

/** A delivery to write: the event, and the body frozen for it. */
export interface NewDelivery {
  subscriptionId: string;
  eventId: number;
  eventType: string;
  body: Record<string, unknown>;
}

/** A delivery due now, with what sending it needs of its subscription. */
export interface DueDelivery extends DeliveryRow {
  namespaceId: string;
  url: string;
  format: SubscriptionFormat;
  failingSince: Date | null;
}

/** An outbox event not fanned out yet. */
export interface UnfannedEvent {
  id: number;
  namespaceId: string;
  topic: string;
  aggregateId: string;
  payload: Record<string, unknown>;
  createdAt: Date;
}

/** What an event is about, for filters and for the words of its delivery: its schedule or sensor. */
export interface EventSubject {
  kind: 'schedule' | 'sensor';
  id: string;
  name: string;
  labels: Record<string, string>;
}

const COLUMNS = `s.id, s.namespace_id AS "namespaceId", s.url, s.events, s.schedule_ids::text[] AS "scheduleIds", s.labels, s.format,
  s.description, s.state, s.disabled_reason AS "disabledReason", s.failing_since AS "failingSince", s.created_at AS "createdAt",
  s.updated_at AS "updatedAt"`;

const DELIVERY_COLUMNS = `d.id::text, d.subscription_id AS "subscriptionId", d.event_id::text AS "eventId", d.event_type AS "eventType", d.body,
  d.state, d.attempts, d.next_attempt_at AS "nextAttemptAt", d.created_at AS "createdAt", d.finished_at AS "finishedAt"`;

const DELIVERY_KEY = /^\d{1,19}$/;

export class SubscriptionRepository {
  async create(tx: Tx, id: string, namespaceId: string, definition: SubscriptionDefinition, paused: boolean): Promise<SubscriptionRow> {
    const { rows } = await tx.query<SubscriptionRow>(
      `INSERT INTO subscriptions AS s (id, namespace_id, url, events, schedule_ids, labels, format, description, state)
       VALUES ($1, $2, $3, $4::text[], $5::uuid[], $6::jsonb, $7, $8, $9)
       RETURNING ${COLUMNS}`,
      [id, namespaceId, definition.url, definition.events, definition.scheduleIds, JSON.stringify(definition.labels), definition.format, definition.description, paused ? 'paused' : 'active'],
    );
    return rows[0]!;
  }

  async get(db: Queryable, namespaceId: string, id: string, lock = false): Promise<SubscriptionRow | null> {
    if (!isUuid(id)) return null;
    const { rows } = await db.query<SubscriptionRow>(
      `SELECT ${COLUMNS} FROM subscriptions s WHERE s.id = $1 AND s.namespace_id = $2${lock ? ' FOR UPDATE' : ''}`,
      [id, namespaceId],
    );
    return rows[0] ?? null;
  }

  async list(db: Queryable, namespaceId: string, limit: number, cursor?: string): Promise<Page<SubscriptionRow>> {
    const params: unknown[] = [namespaceId, limit + 1];
    let before = '';
    if (cursor !== undefined) {
      params.push(decodeCursor(cursor, isUuid));
      before = 'AND s.id < $3';
    }
    const { rows } = await db.query<SubscriptionRow>(`SELECT ${COLUMNS} FROM subscriptions s WHERE s.namespace_id = $1 ${before} ORDER BY s.id DESC LIMIT $2`, params);
    return toPage(rows, limit, (r) => r.id);
  }

  /** Writes a whole definition over a locked subscription. */
  async replaceDefinition(tx: Tx, id: string, definition: SubscriptionDefinition): Promise<SubscriptionRow> {
    const { rows } = await tx.query<SubscriptionRow>(
      `UPDATE subscriptions s SET url = $2, events = $3::text[], schedule_ids = $4::uuid[], labels = $5::jsonb, format = $6, description = $7, updated_at = now()
       WHERE s.id = $1 RETURNING ${COLUMNS}`,
      [id, definition.url, definition.events, definition.scheduleIds, JSON.stringify(definition.labels), definition.format, definition.description],
    );
    return rows[0]!;
  }

  /** Pauses, or makes active again (a disabled one too, its failures forgotten); null when it already was. */
  async setPaused(tx: Tx, id: string, paused: boolean): Promise<SubscriptionRow | null> {
    const { rows } = await tx.query<SubscriptionRow>(
      `UPDATE subscriptions s SET state = $2, disabled_reason = NULL, failing_since = NULL, updated_at = now()
       WHERE s.id = $1 AND s.state <> $2 RETURNING ${COLUMNS}`,
      [id, paused ? 'paused' : 'active'],
    );
    return rows[0] ?? null;
  }

  /** Deletes a subscription with its deliveries and their attempts. */
  async delete(tx: Tx, id: string): Promise<void> {
    await tx.query(`DELETE FROM subscriptions WHERE id = $1`, [id]);
  }

  /** A page of a subscription's deliveries, newest first, each with its attempts. */
  async listDeliveries(db: Queryable, subscriptionId: string, limit: number, cursor?: string): Promise<Page<DeliveryWithAttempts>> {
    const params: unknown[] = [subscriptionId, limit + 1];
    let before = '';
    if (cursor !== undefined) {
      params.push(decodeCursor(cursor, (key) => DELIVERY_KEY.test(key)));
      before = 'AND d.id < $3::bigint';
    }
    const { rows } = await db.query<DeliveryWithAttempts>(
      `SELECT ${DELIVERY_COLUMNS},
              coalesce((SELECT json_agg(json_build_object('attempt', a.attempt, 'attemptedAt', a.attempted_at, 'statusCode', a.status_code,
                                                          'latencyMs', a.latency_ms, 'error', a.error) ORDER BY a.attempt)
                        FROM subscription_attempts a WHERE a.delivery_id = d.id), '[]') AS "attemptLog"
       FROM subscription_deliveries d WHERE d.subscription_id = $1 ${before} ORDER BY d.id DESC LIMIT $2`,
      params,
    );
    for (const row of rows) for (const attempt of row.attemptLog) attempt.attemptedAt = new Date(attempt.attemptedAt);
    return toPage(rows, limit, (r) => r.id);
  }

  // ---- The leader's side: fan-out and delivery ----

  /** The oldest events not fanned out yet, locked until the transaction that fans them out ends. */
  async lockUnfanned(tx: Tx, limit: number): Promise<UnfannedEvent[]> {
    const { rows } = await tx.query<UnfannedEvent & { id: string }>(
      `SELECT id::text, namespace_id AS "namespaceId", topic, aggregate_id AS "aggregateId", payload, created_at AS "createdAt"
       FROM outbox WHERE fanned_out_at IS NULL ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED`,
      [limit],
    );
    return rows.map((r) => ({ ...r, id: Number(r.id) }));
  }

  /** The active subscriptions of these namespaces, and every one a `ping` is for. */
  async listening(db: Queryable, namespaceIds: readonly string[], pinged: readonly string[]): Promise<SubscriptionRow[]> {
    const { rows } = await db.query<SubscriptionRow>(
      `SELECT ${COLUMNS} FROM subscriptions s WHERE (s.namespace_id = ANY($1::uuid[]) AND s.state = 'active') OR s.id = ANY($2::uuid[])`,
      [namespaceIds, pinged],
    );
    return rows;
  }

  /** The schedules and sensors events are about, by id, and the namespaces' names. */
  async subjects(db: Queryable, scheduleIds: readonly string[], sensorIds: readonly string[]): Promise<Map<string, EventSubject>> {
    const { rows } = await db.query<EventSubject>(
      `SELECT 'schedule' AS kind, id, name, labels FROM schedules WHERE id = ANY($1::uuid[])
       UNION ALL SELECT 'sensor', id, name, labels FROM sensors WHERE id = ANY($2::uuid[])`,
      [scheduleIds, sensorIds],
    );
    return new Map(rows.map((r) => [r.id, r]));
  }

  async namespaceNames(db: Queryable, namespaceIds: readonly string[]): Promise<Map<string, string>> {
    const { rows } = await db.query<{ id: string; name: string }>(`SELECT id, name FROM namespaces WHERE id = ANY($1::uuid[])`, [namespaceIds]);
    return new Map(rows.map((r) => [r.id, r.name]));
  }

  /** Writes the deliveries of the fanned-out events and marks those events fanned out. */
  async writeFanOut(tx: Tx, eventIds: readonly number[], deliveries: readonly NewDelivery[]): Promise<void> {
    if (deliveries.length > 0) {
      await tx.query(
        `INSERT INTO subscription_deliveries (subscription_id, event_id, event_type, body)
         SELECT s, e, t, b FROM json_to_recordset($1::json) AS x(s uuid, e bigint, t text, b jsonb)
         ON CONFLICT (subscription_id, event_id) DO NOTHING`,
        [JSON.stringify(deliveries.map((d) => ({ s: d.subscriptionId, e: d.eventId, t: d.eventType, b: d.body })))],
      );
    }
    await tx.query(`UPDATE outbox SET fanned_out_at = now() WHERE id = ANY($1::bigint[])`, [eventIds]);
  }

  /** Active subscriptions with a delivery due now, the one due longest first, at most `limit`, none of `busy`. */
  async dueSubscriptions(db: Queryable, limit: number, busy: readonly string[]): Promise<string[]> {
    const { rows } = await db.query<{ id: string }>(
      `SELECT d.subscription_id AS id FROM subscription_deliveries d JOIN subscriptions s ON s.id = d.subscription_id AND s.state = 'active'
       WHERE d.state = 'pending' AND d.next_attempt_at <= now() AND NOT d.subscription_id = ANY($2::uuid[])
       GROUP BY d.subscription_id ORDER BY min(d.next_attempt_at) LIMIT $1`,
      [limit, busy],
    );
    return rows.map((r) => r.id);
  }

  /** The subscription's oldest delivery due now, while the subscription is active. */
  async nextDue(db: Queryable, subscriptionId: string): Promise<DueDelivery | null> {
    const { rows } = await db.query<DueDelivery>(
      `SELECT ${DELIVERY_COLUMNS}, s.namespace_id AS "namespaceId", s.url, s.format, s.failing_since AS "failingSince"
       FROM subscription_deliveries d JOIN subscriptions s ON s.id = d.subscription_id AND s.state = 'active'
       WHERE d.subscription_id = $1 AND d.state = 'pending' AND d.next_attempt_at <= now()
       ORDER BY d.id LIMIT 1`,
      [subscriptionId],
    );
    return rows[0] ?? null;
  }

  /** Records a taken attempt: the delivery is delivered, and the subscription no longer failing. */
  async recordDelivered(tx: Tx, delivery: DueDelivery, attempt: DeliveryAttemptRow): Promise<void> {
    await this.recordAttempt(tx, delivery.id, attempt);
    await tx.query(`UPDATE subscription_deliveries SET state = 'delivered', attempts = $2, finished_at = now() WHERE id = $1 AND state = 'pending'`, [
      delivery.id,
      attempt.attempt,
    ]);
    await tx.query(`UPDATE subscriptions SET failing_since = NULL WHERE id = $1 AND failing_since IS NOT NULL`, [delivery.subscriptionId]);
  }

  /** Records a failed attempt; the delivery is tried again at `retryAt`, and the subscription is failing since its first failure. */
  async recordFailed(tx: Tx, delivery: DueDelivery, attempt: DeliveryAttemptRow, retryAt: Date): Promise<void> {
    await this.recordAttempt(tx, delivery.id, attempt);
    await tx.query(`UPDATE subscription_deliveries SET attempts = $2, next_attempt_at = $3 WHERE id = $1 AND state = 'pending'`, [delivery.id, attempt.attempt, retryAt]);
    await tx.query(`UPDATE subscriptions SET failing_since = coalesce(failing_since, $2) WHERE id = $1`, [delivery.subscriptionId, attempt.attemptedAt]);
  }

  /**
   * Disables a subscription whose deliveries failed for the whole retry window: its pending
   * deliveries fail. Answers false when it is no longer active (changed meanwhile).
   */
  async disable(tx: Tx, subscriptionId: string, reason: string): Promise<boolean> {
    const { rowCount } = await tx.query(
      `UPDATE subscriptions SET state = 'disabled', disabled_reason = $2, updated_at = now() WHERE id = $1 AND state = 'active'`,
      [subscriptionId, reason],
    );
    if (!rowCount) return false;
    await tx.query(`UPDATE subscription_deliveries SET state = 'failed', finished_at = now() WHERE subscription_id = $1 AND state = 'pending'`, [subscriptionId]);
    return true;
  }

  private async recordAttempt(tx: Tx, deliveryId: string, attempt: DeliveryAttemptRow): Promise<void> {
    await tx.query(
      `INSERT INTO subscription_attempts (delivery_id, attempt, attempted_at, status_code, latency_ms, error) VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (delivery_id, attempt) DO NOTHING`,
      [deliveryId, attempt.attempt, attempt.attemptedAt, attempt.statusCode, attempt.latencyMs, attempt.error],
    );
  }
}
