/**
 * Sensors as the API declares and operates them: their definitions (created, changed, paused,
 * deleted), their cursor moved or reset by an operator, and their ticks listed. Evaluating a sensor
 * and committing what an evaluation answered is the scheduler's, not this repository's. Every cursor
 * move here raises cursor_version, so an evaluation that started from the old cursor commits nothing.
 */
import { ConflictError, isUuid, type CallTarget, type JsonValue } from '@kairos/domain';
import { pgConstraint, pgErrorCode, type Queryable, type Tx } from '../database.js';
import { SENSORS_CHANNEL } from '../notifications.js';
import { decodeCursor, toPage, type Page } from '../pagination.js';
import { SENSOR_COLUMNS, SENSOR_TICK_COLUMNS, type SensorRow, type SensorRunSpec, type SensorTickRow } from './sensor-row.js';

/** A sensor's definition, as it is written whole. */
export interface SensorDefinition {
  name: string;
  everyMs: number;
  target: CallTarget;
  timeoutMs: number;
  run: SensorRunSpec;
  payload: JsonValue | null;
  labels: Record<string, string>;
}

export interface NewSensor extends SensorDefinition {
  id: string;
  namespaceId: string;
  paused: boolean;
  /** The apply source declaring it; null when made through the API. */
  source: string | null;
}

/** A tick cursor's key: the tick's start in microseconds since the epoch, and its id. */
const TICK_KEY = /^(\d{1,20})\/([0-9a-f-]{36})$/;

/** JSON text for a json/jsonb parameter: the driver would send a string value as bare text. */
const jsonText = (value: JsonValue | null): string | null => (value === null ? null : JSON.stringify(value));

function nameTaken(name: string): ConflictError {
  return new ConflictError('CONFLICT', 'name', `a sensor named "${name}" already exists in this namespace; pick another name`);
}

/** Runs `write`, answering a taken name with a 409 on `name`. */
async function refusingTakenName<T>(name: string, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (pgErrorCode(error) === '23505' && pgConstraint(error) === 'sensors_namespace_id_name_key') throw nameTaken(name);
    throw error;
  }
}

export class SensorRepository {
  /**
   * Inserts a sensor, due at once (its first evaluation starts as soon as the scheduler sees it);
   * a name taken in the namespace is refused with a ConflictError, without aborting the transaction.
   */
  async create(tx: Tx, sensor: NewSensor): Promise<SensorRow> {
    const { rows } = await tx.query<SensorRow>(
      `INSERT INTO sensors AS s (id, namespace_id, name, every_ms, target, timeout_ms, run, payload, labels, paused, source, next_evaluation_at)
       VALUES ($1, $2, $3, $4, $5::jsonb, $6, $7::jsonb, $8::json, $9::jsonb, $10, $11, now())
       ON CONFLICT (namespace_id, name) DO NOTHING
       RETURNING ${SENSOR_COLUMNS}`,
      [
        sensor.id,
        sensor.namespaceId,
        sensor.name,
        sensor.everyMs,
        JSON.stringify(sensor.target),
        sensor.timeoutMs,
        JSON.stringify(sensor.run),
        jsonText(sensor.payload),
        JSON.stringify(sensor.labels),
        sensor.paused,
        sensor.source,
      ],
    );
    if (!rows[0]) throw nameTaken(sensor.name);
    return rows[0];
  }

  /** Wakes the scheduler's sensor loop when this transaction commits: the sensor may be due now. */
  async notifyDue(tx: Queryable, id: string): Promise<void> {
    await tx.query('SELECT pg_notify($1, $2)', [SENSORS_CHANNEL, id]);
  }

  async get(db: Queryable, namespaceId: string, id: string, opts: { lock?: boolean } = {}): Promise<SensorRow | null> {
    if (!isUuid(id)) return null;
    const { rows } = await db.query<SensorRow>(
      `SELECT ${SENSOR_COLUMNS} FROM sensors s WHERE s.namespace_id = $1 AND s.id = $2 ${opts.lock ? 'FOR NO KEY UPDATE' : ''}`,
      [namespaceId, id],
    );
    return rows[0] ?? null;
  }

  /** Newest first, keyset-paginated on id (UUIDv7, so creation order). */
  async list(db: Queryable, namespaceId: string, limit: number, cursor?: string): Promise<Page<SensorRow>> {
    const params: unknown[] = [namespaceId, limit + 1];
    let before = '';
    if (cursor !== undefined) {
      params.push(decodeCursor(cursor, isUuid));
      before = 'AND s.id < $3';
    }
    const { rows } = await db.query<SensorRow>(
      `SELECT ${SENSOR_COLUMNS} FROM sensors s WHERE s.namespace_id = $1 ${before} ORDER BY s.id DESC LIMIT $2`,
      params,
    );
    return toPage(rows, limit, (r) => r.id);
  }

  /** Replaces the definition of a locked sensor; its cursor, pause and schedule of evaluations stay. `source` is written as given. */
  async replaceDefinition(tx: Tx, id: string, definition: SensorDefinition, source: string | null): Promise<SensorRow> {
    return refusingTakenName(definition.name, async () => {
      const { rows } = await tx.query<SensorRow>(
        `UPDATE sensors s SET name = $2, every_ms = $3, target = $4::jsonb, timeout_ms = $5, run = $6::jsonb, payload = $7::json,
                labels = $8::jsonb, source = $9, updated_at = now()
         WHERE s.id = $1
         RETURNING ${SENSOR_COLUMNS}`,
        [
          id,
          definition.name,
          definition.everyMs,
          JSON.stringify(definition.target),
          definition.timeoutMs,
          JSON.stringify(definition.run),
          jsonText(definition.payload),
          JSON.stringify(definition.labels),
          source,
        ],
      );
      return rows[0]!;
    });
  }

  /**
   * Pauses or resumes a sensor. A resumed sensor is due at once (no later than now); pausing or
   * resuming one already so changes nothing (null).
   */
  async setPaused(tx: Tx, id: string, paused: boolean): Promise<SensorRow | null> {
    const { rows } = await tx.query<SensorRow>(
      `UPDATE sensors s SET paused = $2, updated_at = now(),
              next_evaluation_at = CASE WHEN $2 THEN s.next_evaluation_at ELSE least(s.next_evaluation_at, now()) END
       WHERE s.id = $1 AND s.paused IS DISTINCT FROM $2
       RETURNING ${SENSOR_COLUMNS}`,
      [id, paused],
    );
    return rows[0] ?? null;
  }

  /**
   * Moves the cursor of a locked sensor and raises its version; with `forgetRunKeys`, the run keys
   * it asked for are forgotten too (the runs they made stay).
   */
  async moveCursor(tx: Tx, id: string, cursor: JsonValue | null, forgetRunKeys = false): Promise<SensorRow> {
    if (forgetRunKeys) await tx.query('DELETE FROM sensor_run_keys WHERE sensor_id = $1', [id]);
    const { rows } = await tx.query<SensorRow>(
      `UPDATE sensors s SET cursor = $2::jsonb, cursor_version = s.cursor_version + 1, updated_at = now()
       WHERE s.id = $1
       RETURNING ${SENSOR_COLUMNS}`,
      [id, jsonText(cursor)],
    );
    return rows[0]!;
  }

  /** Deletes a sensor; its ticks and run keys go with it, the runs it made stay. */
  async delete(tx: Tx, id: string): Promise<void> {
    await tx.query('DELETE FROM sensors WHERE id = $1', [id]);
  }

  /**
   * Locks, in id order, the sensors of the namespace an apply of `source` plans against: those it
   * names, and those of the source (which a prune may delete).
   */
  async lockForApply(tx: Tx, namespaceId: string, source: string, names: readonly string[]): Promise<SensorRow[]> {
    const { rows } = await tx.query<SensorRow>(
      `SELECT ${SENSOR_COLUMNS} FROM sensors s
       WHERE s.namespace_id = $1 AND (s.name = ANY($3::text[]) OR s.source = $2)
       ORDER BY s.id FOR UPDATE`,
      [namespaceId, source, names],
    );
    return rows;
  }

  /** The newest tick of each of these sensors; a sensor without ticks has none in the map. */
  async lastTicks(db: Queryable, sensorIds: readonly string[]): Promise<Map<string, SensorTickRow>> {
    if (sensorIds.length === 0) return new Map();
    const { rows } = await db.query<SensorTickRow>(
      `SELECT DISTINCT ON (t.sensor_id) ${SENSOR_TICK_COLUMNS}
       FROM sensor_ticks t WHERE t.sensor_id = ANY($1::uuid[])
       ORDER BY t.sensor_id, t.started_at DESC, t.id DESC`,
      [sensorIds],
    );
    return new Map(rows.map((r) => [r.sensorId, r]));
  }

  /** A sensor's ticks, newest first. */
  async listTicks(db: Queryable, sensorId: string, limit: number, cursor?: string): Promise<Page<SensorTickRow>> {
    const params: unknown[] = [sensorId, limit + 1];
    let before = '';
    if (cursor !== undefined) {
      const [, micros, id] = TICK_KEY.exec(decodeCursor(cursor, (key) => TICK_KEY.test(key)))!;
      params.push(micros, id);
      before = `AND (t.started_at, t.id) < ('epoch'::timestamptz + $3::bigint * interval '1 microsecond', $4::uuid)`;
    }
    // The start to the microsecond, which a Date cannot hold: the next page starts exactly after it.
    const { rows } = await db.query<SensorTickRow & { startedAtMicros: string }>(
      `SELECT ${SENSOR_TICK_COLUMNS}, ((extract(epoch FROM t.started_at) * 1000000)::bigint)::text AS "startedAtMicros"
       FROM sensor_ticks t WHERE t.sensor_id = $1 ${before}
       ORDER BY t.started_at DESC, t.id DESC LIMIT $2`,
      params,
    );
    const page = toPage(rows, limit, (r) => `${r.startedAtMicros}/${r.id}`);
    return { items: page.items.map(({ startedAtMicros: _micros, ...tick }) => tick), nextCursor: page.nextCursor };
  }
}
