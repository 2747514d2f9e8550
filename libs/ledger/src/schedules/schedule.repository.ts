/**
 * Schedules and their ticks. Definitions are written whole (a spec and its hash); the cursor
 * (next_fire_at, last_fire_at, fire_count) moves only in the tick's transaction, under the row lock
 * the tick took with FOR UPDATE SKIP LOCKED, so two schedulers never evaluate one schedule at once.
 */
import { ConflictError, assertSameRequest, isUuid, type ScheduleSpec, type ScheduleStatus, type TickOrigin, type TickOutcome, type ReasonCode, type FieldChange } from '@kairos/domain';
import { pgConstraint, pgErrorCode, type Queryable, type Tx } from '../database.js';
import { decodeCursor, toPage, type Page } from '../pagination.js';
import { SCHEDULE_COLUMNS, SPEC_COLUMN_NAMES, specColumnValues, type ScheduleRow } from './schedule-row.js';
import { INSERT_SCHEDULES, insertedRow, insertRecord, type InsertedColumns, type NewSchedule } from './schedule-insert.js';

export type { NewSchedule } from './schedule-insert.js';

/** One version of a schedule's definition, recorded with the change that made it. */
export interface ScheduleVersion {
  scheduleId: string;
  specHash: string;
  /** The definition in wire form. */
  definition: Record<string, unknown>;
  source: string | null;
  actor: string;
  changes: FieldChange[];
}

export interface ScheduleVersionRow {
  version: number;
  specHash: string;
  source: string | null;
  actor: string;
  appliedAt: Date;
  changes: FieldChange[];
}

export interface TickRecord {
  scheduleId: string;
  namespaceId: string;
  scheduledFor: Date;
  outcome: TickOutcome;
  reasonCode: ReasonCode;
  reasonText: string | null;
  runId: string | null;
  origin: TickOrigin;
}

export interface TickRow extends Omit<TickRecord, 'scheduleId' | 'namespaceId'> {
  createdAt: Date;
}

export interface CursorAdvance {
  id: string;
  nextFireAt: Date | null;
  lastFireAt: Date | null;
  fired: number;
  completed: boolean;
}

export interface ScheduleFilter {
  status?: ScheduleStatus;
  label?: { key: string; value: string };
  name?: string;
}

/** Notified (on commit) whenever a schedule may have become due sooner, so the tick wakes at once. */
export const SCHEDULES_CHANNEL = 'kairos_schedules';

/** A tick's slot as insertTicks's RETURNING clause spells it: `<scheduleId>@<epoch ms>`. */
function tickKey(t: TickRecord): string {
  return `${t.scheduleId}@${t.scheduledFor.getTime()}`;
}

const SPEC_ASSIGNMENTS = SPEC_COLUMN_NAMES.map((c, i) => `${c} = $${i + 1}`).join(', ');
/** The parameter of the new expect_succeeded_within_ms in replaceDefinition. */
const EXPECT_PARAM = SPEC_COLUMN_NAMES.indexOf('expect_succeeded_within_ms') + 1;
const KIND_PARAM = SPEC_COLUMN_NAMES.indexOf('kind') + 1;

export class ScheduleRepository {
  /**
   * Inserts schedules in one statement and answers for each, in order. A repeated idempotency key
   * in the namespace (used before, or by an earlier schedule of the same call) answers the schedule
   * that first used it with `deduped: true` (the unique index decides, not a read), or, when the
   * first request had another body, an IDEMPOTENCY_CONFLICT; a taken name answers a ConflictError.
   * A refused schedule is not inserted, and no refusal aborts the caller's transaction: the insert
   * skips a conflicting row rather than failing. A created schedule's row is the one `get` would
   * read (see insertedRow).
   */
  async createMany(tx: Tx, schedules: readonly NewSchedule[]): Promise<({ row: ScheduleRow; deduped: boolean } | { refusal: ConflictError })[]> {
    if (schedules.length === 0) return [];
    const payloads = schedules.map((s) => (s.spec.payload === null ? null : JSON.stringify(s.spec.payload)));
    const { rows } = await tx.query<InsertedColumns>({
      name: 'kairos.schedules.insert',
      text: INSERT_SCHEDULES,
      values: [JSON.stringify(schedules.map((s, ord) => insertRecord(s, ord, payloads[ord]!)))],
    });
    const written = new Map(rows.map((r) => [r.id, r]));
    const inserted = new Map<string, ScheduleRow>();
    for (const [ord, s] of schedules.entries()) {
      const columns = written.get(s.id);
      if (columns) inserted.set(s.id, insertedRow(s, columns, payloads[ord]!));
    }
    const keys = schedules.filter((s) => !inserted.has(s.id) && s.idempotencyKey !== null).map((s) => s.idempotencyKey!);
    const { rows: firsts } =
      keys.length === 0
        ? { rows: [] }
        : await tx.query<ScheduleRow & { requestHash: string | null }>(
            `SELECT ${SCHEDULE_COLUMNS}, s.request_hash AS "requestHash" FROM schedules s WHERE s.namespace_id = $1 AND s.idempotency_key = ANY($2::text[])`,
            [schedules[0]!.namespaceId, keys],
          );
    const byKey = new Map(firsts.map((r) => [r.idempotencyKey!, r]));
    return schedules.map((s) => {
      const row = inserted.get(s.id);
      if (row) return { row, deduped: false };
      const first = s.idempotencyKey === null ? undefined : byKey.get(s.idempotencyKey);
      if (!first) {
        return { refusal: new ConflictError('CONFLICT', 'name', `a schedule named "${s.name}" already exists in this namespace; pick another name or PUT /v1/schedules/by-name/${s.name} to update it`) };
      }
      const { requestHash, ...existing } = first;
      try {
        if (s.requestHash !== null) assertSameRequest(requestHash, s.requestHash, s.idempotencyKey!);
      } catch (error) {
        if (error instanceof ConflictError) return { refusal: error };
        throw error;
      }
      return { row: existing, deduped: true };
    });
  }

  /** Inserts one schedule as createMany does; its refusal is thrown. */
  async create(tx: Tx, schedule: NewSchedule): Promise<{ row: ScheduleRow; deduped: boolean }> {
    const [answer] = await this.createMany(tx, [schedule]);
    if ('refusal' in answer!) throw answer.refusal;
    return answer!;
  }

  /** Wakes the leader's tick when this transaction commits. */
  async notifyChanged(tx: Queryable): Promise<void> {
    await tx.query(`SELECT pg_notify('${SCHEDULES_CHANNEL}', '')`);
  }

  async get(db: Queryable, namespaceId: string, id: string, opts: { lock?: boolean } = {}): Promise<ScheduleRow | null> {
    if (!isUuid(id)) return null;
    const { rows } = await db.query<ScheduleRow>(
      `SELECT ${SCHEDULE_COLUMNS} FROM schedules s
       WHERE s.namespace_id = $1 AND s.id = $2 AND s.deleted_at IS NULL ${opts.lock ? 'FOR NO KEY UPDATE' : ''}`,
      [namespaceId, id],
    );
    return rows[0] ?? null;
  }

  async getByName(db: Queryable, namespaceId: string, name: string, opts: { lock?: boolean } = {}): Promise<ScheduleRow | null> {
    const { rows } = await db.query<ScheduleRow>(
      `SELECT ${SCHEDULE_COLUMNS} FROM schedules s
       WHERE s.namespace_id = $1 AND s.name = $2 AND s.deleted_at IS NULL ${opts.lock ? 'FOR NO KEY UPDATE' : ''}`,
      [namespaceId, name],
    );
    return rows[0] ?? null;
  }

  /** Newest first, keyset-paginated on id (UUIDv7, so creation order). */
  async list(db: Queryable, namespaceId: string, filter: ScheduleFilter, limit: number, cursor?: string): Promise<Page<ScheduleRow>> {
    const params: unknown[] = [namespaceId, limit + 1];
    const where = ['s.namespace_id = $1', 's.deleted_at IS NULL'];
    if (cursor !== undefined) {
      params.push(decodeCursor(cursor, isUuid));
      where.push(`s.id < $${params.length}`);
    }
    if (filter.status !== undefined) {
      params.push(filter.status);
      where.push(`s.status = $${params.length}`);
    }
    if (filter.name !== undefined) {
      params.push(filter.name);
      where.push(`s.name = $${params.length}`);
    }
    if (filter.label !== undefined) {
      params.push(JSON.stringify({ [filter.label.key]: filter.label.value }));
      where.push(`s.labels @> $${params.length}::jsonb`);
    }
    const { rows } = await db.query<ScheduleRow>(
      `SELECT ${SCHEDULE_COLUMNS} FROM schedules s WHERE ${where.join(' AND ')} ORDER BY s.id DESC LIMIT $2`,
      params,
    );
    return toPage(rows, limit, (r) => r.id);
  }

  /**
   * Replaces the definition of a locked schedule. The cursor restarts at `nextFireAt` (computed by
   * the caller from now), so slots of the old definition are neither fired nor reported missed.
   */
  /**
   * Moves the cursor of a schedule locked by the caller's transaction to `nextFireAt`, re-planned
   * from now because what it fires on changed (a calendar it names), as replaceDefinition does.
   */
  async replanCursor(tx: Tx, id: string, nextFireAt: Date | null): Promise<ScheduleRow> {
    const { rows } = await tx.query<ScheduleRow>(
      `UPDATE schedules s SET next_fire_at = $2,
              status = CASE WHEN s.status = 'paused' THEN 'paused' WHEN $2::timestamptz IS NULL THEN 'completed' ELSE 'active' END,
              completed_at = CASE WHEN s.status <> 'paused' AND $2::timestamptz IS NULL THEN now() END,
              resumed_at = now(), updated_at = now()
       WHERE s.id = $1
       RETURNING ${SCHEDULE_COLUMNS}`,
      [id, nextFireAt],
    );
    return rows[0]!;
  }

  async replaceDefinition(tx: Tx, id: string, name: string, spec: ScheduleSpec, hash: string, nextFireAt: Date | null, source: string | null): Promise<ScheduleRow> {
    const values = specColumnValues(spec);
    const n = values.length;
    try {
      const { rows } = await tx.query<ScheduleRow>(
        `UPDATE schedules s SET ${SPEC_ASSIGNMENTS}, name = $${n + 2}, spec_hash = $${n + 3}, next_fire_at = $${n + 4}, source = $${n + 5},
                status = CASE WHEN s.status = 'paused' THEN 'paused' WHEN $${n + 4}::timestamptz IS NULL AND $${KIND_PARAM} <> 'event' THEN 'completed' ELSE 'active' END,
                completed_at = CASE WHEN s.status <> 'paused' AND $${n + 4}::timestamptz IS NULL AND $${KIND_PARAM} <> 'event' THEN now() END,
                resumed_at = now(), updated_at = now(),
                -- A new deadline is judged from now on, and a lateness under the old one is over.
                deadline_checked_through = CASE WHEN s.expect_succeeded_within_ms IS DISTINCT FROM $${EXPECT_PARAM}::bigint THEN now() ELSE s.deadline_checked_through END,
                late_since = CASE WHEN s.expect_succeeded_within_ms IS DISTINCT FROM $${EXPECT_PARAM}::bigint THEN NULL ELSE s.late_since END
         WHERE s.id = $${n + 1}
         RETURNING ${SCHEDULE_COLUMNS}`,
        [...values, id, name, hash, nextFireAt, source],
      );
      return rows[0]!;
    } catch (error) {
      if (pgErrorCode(error) === '23505' && pgConstraint(error) === 'schedules_name_key') {
        throw new ConflictError('CONFLICT', 'name', `a schedule named "${name}" already exists in this namespace`);
      }
      throw error;
    }
  }

  /**
   * Locks, in id order, the live schedules of the namespace an apply of `source` plans against:
   * those it names, and those of the source (which a prune may delete).
   */
  async lockForApply(tx: Tx, namespaceId: string, source: string, names: readonly string[]): Promise<ScheduleRow[]> {
    const { rows } = await tx.query<ScheduleRow>(
      `SELECT ${SCHEDULE_COLUMNS} FROM schedules s
       WHERE s.namespace_id = $1 AND s.deleted_at IS NULL AND (s.name = ANY($3::text[]) OR s.source = $2)
       ORDER BY s.id FOR UPDATE`,
      [namespaceId, source, names],
    );
    return rows;
  }

  /** Records a new version of each schedule, numbered after its last. */
  async recordVersions(tx: Tx, versions: readonly ScheduleVersion[]): Promise<void> {
    if (versions.length === 0) return;
    await tx.query(
      `INSERT INTO schedule_versions (schedule_id, version, spec_hash, definition, source, actor, changes)
       SELECT v.schedule_id, coalesce((SELECT max(p.version) FROM schedule_versions p WHERE p.schedule_id = v.schedule_id), 0) + 1,
              v.spec_hash, v.definition, v.source, v.actor, v.changes
       FROM (SELECT schedule_id, spec_hash, definition::json, source, actor, changes::jsonb
             -- The JSON fields are read as their text and cast: json_to_recordset's own conversion to json and jsonb costs more than the insert.
             FROM json_to_recordset($1::json) AS v(schedule_id uuid, spec_hash text, definition text, source text, actor text, changes text)) v`,
      [
        JSON.stringify(
          versions.map((v) => ({
            schedule_id: v.scheduleId,
            spec_hash: v.specHash,
            definition: v.definition,
            source: v.source,
            actor: v.actor,
            changes: v.changes,
          })),
        ),
      ],
    );
  }

  /** The version of a schedule's definition in force at `at` (the newest applied by then): the one a run created at `at` came from. */
  async versionAt(db: Queryable, scheduleId: string, at: Date): Promise<Pick<ScheduleVersionRow, 'version' | 'source' | 'actor'> | null> {
    const { rows } = await db.query<Pick<ScheduleVersionRow, 'version' | 'source' | 'actor'>>(
      `SELECT version, source, actor FROM schedule_versions WHERE schedule_id = $1 AND applied_at <= $2 ORDER BY version DESC LIMIT 1`,
      [scheduleId, at],
    );
    return rows[0] ?? null;
  }

  /** A schedule's versions, newest first, keyset-paginated by version. */
  async listVersions(db: Queryable, scheduleId: string, limit: number, cursor?: string): Promise<Page<ScheduleVersionRow>> {
    const after = cursor === undefined ? null : Number(decodeCursor(cursor, (key) => /^[1-9]\d{0,9}$/.test(key)));
    const { rows } = await db.query<ScheduleVersionRow>(
      `SELECT version, spec_hash AS "specHash", source, actor, applied_at AS "appliedAt", changes
       FROM schedule_versions WHERE schedule_id = $1 AND ($3::int IS NULL OR version < $3)
       ORDER BY version DESC LIMIT $2`,
      [scheduleId, limit + 1, after],
    );
    return toPage(rows, limit, (v) => String(v.version));
  }

  async setPaused(db: Queryable, id: string, paused: boolean): Promise<ScheduleRow | null> {
    const { rows } = await db.query<ScheduleRow>(
      paused
        ? `UPDATE schedules s SET status = 'paused', paused_at = now(), updated_at = now()
           WHERE s.id = $1 AND s.status = 'active' RETURNING ${SCHEDULE_COLUMNS}`
        : `UPDATE schedules s SET status = 'active', paused_at = NULL, resumed_at = now(), updated_at = now()
           WHERE s.id = $1 AND s.status = 'paused' RETURNING ${SCHEDULE_COLUMNS}`,
      [id],
    );
    return rows[0] ?? null;
  }

  async markDeleted(tx: Tx, id: string): Promise<void> {
    await tx.query(
      `UPDATE schedules SET status = 'deleted', deleted_at = now(), next_fire_at = NULL, updated_at = now() WHERE id = $1`,
      [id],
    );
  }

  /**
   * Locks and returns active schedules of the given partitions due by now + lookahead, skipping rows
   * another transaction holds: up to `limit` in all, shared evenly between the partitions, each
   * partition read in slot order from its own index range. `full` says a partition had more due
   * than its share. A schedule whose overlap policy is not `allow` and that still has an active run
   * is taken only once it is due: its next slot cannot be decided ahead (see planWithLookahead).
   * `dbNow` is the database clock every slot decision is made against.
   */
  async claimDue(
    tx: Tx,
    partitions: readonly number[],
    limit: number,
    lookaheadMs: number,
  ): Promise<{ rows: (ScheduleRow & { tickPartition: number })[]; dbNow: Date; full: boolean }> {
    const share = Math.max(1, Math.ceil(limit / Math.max(1, partitions.length)));
    const { rows } = await tx.query<ScheduleRow & { tickPartition: number; dbNow: Date }>(
      `SELECT due.*, now() AS "dbNow" FROM unnest($3::smallint[]) AS p(partition)
       CROSS JOIN LATERAL (
         SELECT ${SCHEDULE_COLUMNS}, s.tick_partition AS "tickPartition" FROM schedules s
         WHERE s.tick_partition = p.partition AND s.status = 'active' AND s.next_fire_at <= now() + $1 * interval '1 millisecond'
           AND (s.next_fire_at <= now() OR s.overlap = 'allow'
                OR NOT EXISTS (SELECT 1 FROM runs r WHERE r.schedule_id = s.id AND r.state IN ('queued', 'running', 'sleeping', 'waiting')))
         ORDER BY s.next_fire_at LIMIT $2
         FOR NO KEY UPDATE OF s SKIP LOCKED) due`,
      [lookaheadMs, share, partitions],
    );
    const perPartition = new Map<number, number>();
    for (const r of rows) perPartition.set(r.tickPartition, (perPartition.get(r.tickPartition) ?? 0) + 1);
    const dbNow = rows[0]?.dbNow ?? (await tx.query<{ now: Date }>('SELECT now()')).rows[0]!.now;
    return { rows, dbNow, full: [...perPartition.values()].some((n) => n === share) };
  }

  /** The earliest next_fire_at among the active schedules of the given partitions: how long the tick may sleep. */
  async msUntilNextDue(db: Queryable, partitions: readonly number[]): Promise<number | null> {
    const { rows } = await db.query<{ ms: number | null }>(
      `SELECT (extract(epoch FROM min(first.at) - now()) * 1000)::float8 AS ms FROM unnest($1::smallint[]) AS p(partition)
       CROSS JOIN LATERAL (SELECT min(next_fire_at) AS at FROM schedules WHERE tick_partition = p.partition AND status = 'active') first`,
      [partitions],
    );
    return rows[0]?.ms ?? null;
  }

  /**
   * Records ticks; a slot that already has a tick is left alone (ON CONFLICT DO NOTHING) and is
   * absent from the answer, so the caller creates runs only for the slots it really claimed. The
   * answer holds the given records that were written.
   */
  async insertTicks(tx: Tx, ticks: readonly TickRecord[]): Promise<TickRecord[]> {
    if (ticks.length === 0) return [];
    const { rows } = await tx.query<{ key: string }>(
      `INSERT INTO ticks (schedule_id, namespace_id, scheduled_for, outcome, reason_code, reason_text, run_id, origin)
       SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::timestamptz[], $4::text[], $5::text[], $6::text[], $7::uuid[], $8::text[])
       ON CONFLICT (schedule_id, scheduled_for) DO NOTHING
       RETURNING schedule_id::text || '@' || (extract(epoch FROM scheduled_for) * 1000)::bigint AS key`,
      [
        ticks.map((t) => t.scheduleId),
        ticks.map((t) => t.namespaceId),
        ticks.map((t) => t.scheduledFor),
        ticks.map((t) => t.outcome),
        ticks.map((t) => t.reasonCode),
        ticks.map((t) => t.reasonText),
        ticks.map((t) => t.runId),
        ticks.map((t) => t.origin),
      ],
    );
    const written = new Set(rows.map((r) => r.key));
    return ticks.filter((t) => written.has(tickKey(t)));
  }

  /**
   * Forgets the slots of the given (cancelled) runs made ahead: their ticks are deleted and the
   * cursor, fire count and last fire move back, reopening a schedule their runs had completed.
   */
  async giveBackSlots(tx: Tx, scheduleId: string, runIds: readonly string[]): Promise<void> {
    await tx.query(
      `WITH gone AS (
         DELETE FROM ticks WHERE schedule_id = $1 AND run_id = ANY($2::uuid[]) RETURNING scheduled_for
       ), back AS (SELECT min(scheduled_for) AS first, count(*)::int AS n FROM gone)
       UPDATE schedules s SET
         next_fire_at = CASE WHEN s.next_fire_at IS NULL OR s.next_fire_at > back.first THEN back.first ELSE s.next_fire_at END,
         fire_count   = greatest(0, s.fire_count - back.n),
         last_fire_at = CASE WHEN s.last_fire_at >= back.first
                          THEN (SELECT max(t.scheduled_for) FROM ticks t
                                WHERE t.schedule_id = s.id AND t.origin = 'schedule' AND t.run_id IS NOT NULL AND t.scheduled_for < back.first)
                          ELSE s.last_fire_at END,
         status       = CASE WHEN s.status = 'completed' THEN 'active' ELSE s.status END,
         completed_at = CASE WHEN s.status = 'completed' THEN NULL ELSE s.completed_at END,
         updated_at   = now()
       FROM back WHERE s.id = $1 AND back.n > 0`,
      [scheduleId, runIds],
    );
  }

  /** Counts the runs events started for schedules started by events (their fire count and last fire). */
  async recordFires(tx: Tx, fires: readonly { scheduleId: string; fired: number }[]): Promise<void> {
    if (fires.length === 0) return;
    // The rows are locked in id order first: two transactions recording fires of the same schedules
    // (events fanned out by two API processes at once) then wait for each other instead of deadlocking.
    await tx.query(
      `WITH u AS (SELECT id, sum(fired)::int AS fired FROM unnest($1::uuid[], $2::int[]) AS t(id, fired) GROUP BY id),
       locked AS (SELECT s.id FROM schedules s JOIN u ON u.id = s.id ORDER BY s.id FOR NO KEY UPDATE OF s)
       UPDATE schedules s SET fire_count = s.fire_count + u.fired, last_fire_at = now(), updated_at = now()
       FROM u JOIN locked l ON l.id = u.id
       WHERE s.id = u.id`,
      [fires.map((f) => f.scheduleId), fires.map((f) => f.fired)],
    );
  }

  async advanceCursors(tx: Tx, updates: readonly CursorAdvance[]): Promise<void> {
    if (updates.length === 0) return;
    await tx.query(
      `UPDATE schedules s SET
         next_fire_at = u.next_fire_at,
         last_fire_at = coalesce(u.last_fire_at, s.last_fire_at),
         fire_count   = s.fire_count + u.fired,
         status       = CASE WHEN u.completed THEN 'completed' ELSE s.status END,
         completed_at = CASE WHEN u.completed THEN now() ELSE s.completed_at END,
         updated_at   = now()
       FROM unnest($1::uuid[], $2::timestamptz[], $3::timestamptz[], $4::int[], $5::boolean[])
         AS u(id, next_fire_at, last_fire_at, fired, completed)
       WHERE s.id = u.id`,
      [
        updates.map((u) => u.id),
        updates.map((u) => u.nextFireAt),
        updates.map((u) => u.lastFireAt),
        updates.map((u) => u.fired),
        updates.map((u) => u.completed),
      ],
    );
  }

  /** A schedule's ticks, newest slot first. */
  async listTicks(db: Queryable, scheduleId: string, limit: number, cursor?: string): Promise<Page<TickRow>> {
    const params: unknown[] = [scheduleId, limit + 1];
    let before = '';
    if (cursor !== undefined) {
      params.push(new Date(decodeCursor(cursor, (k) => !Number.isNaN(Date.parse(k)))));
      before = 'AND scheduled_for < $3';
    }
    const { rows } = await db.query<TickRow>(
      `SELECT scheduled_for AS "scheduledFor", outcome, reason_code AS "reasonCode", reason_text AS "reasonText",
              run_id AS "runId", origin, created_at AS "createdAt"
       FROM ticks WHERE schedule_id = $1 ${before} ORDER BY scheduled_for DESC LIMIT $2`,
      params,
    );
    return toPage(rows, limit, (r) => r.scheduledFor.toISOString());
  }
}
