/**
 * Calendars: named sets of local dates, per namespace, that the schedules naming them in
 * `calendar.exclude` do not fire on. A calendar in use cannot be deleted; one changed re-plans the
 * schedules that name it (the caller's transaction does, under their row locks).
 */
import { NAME_PATTERN, type CalendarDefinition, type HolidaySource } from '@kairos/domain';
import type { Queryable, Tx } from '../database.js';
import { decodeCursor, toPage, type Page } from '../pagination.js';
import { SCHEDULE_COLUMNS, type ScheduleRow } from '../schedules/schedule-row.js';

export interface CalendarRow extends CalendarDefinition {
  namespaceId: string;
  dates: string[];
  description: string | null;
  /** How many live schedules name it. */
  schedules: number;
  createdAt: Date;
  updatedAt: Date;
}

export interface CalendarWrite {
  name: string;
  dates: readonly string[];
  holidays: HolidaySource | null;
  description: string | null;
}

const CALENDAR_COLUMNS = `c.namespace_id AS "namespaceId", c.name, c.dates::text[] AS dates, c.holidays, c.description,
  c.created_at AS "createdAt", c.updated_at AS "updatedAt",
  (SELECT count(*)::int FROM schedules s
    WHERE s.namespace_id = c.namespace_id AND s.calendar IS NOT NULL AND s.deleted_at IS NULL AND s.calendar -> 'exclude' ? c.name) AS schedules`;

/** Live schedules naming calendar $2 of namespace $1 (the GIN index on calendar -> 'exclude' finds them). */
const NAMING = `s.namespace_id = $1 AND s.calendar IS NOT NULL AND s.deleted_at IS NULL AND s.calendar -> 'exclude' ? $2`;

export class CalendarRepository {
  /** Inserts a calendar; null when the name is taken in the namespace. */
  async create(tx: Tx, namespaceId: string, calendar: CalendarWrite): Promise<CalendarRow | null> {
    const { rows } = await tx.query<{ name: string }>(
      `INSERT INTO calendars (namespace_id, name, dates, holidays, description) VALUES ($1, $2, $3::date[], $4, $5)
       ON CONFLICT DO NOTHING RETURNING name`,
      [namespaceId, calendar.name, calendar.dates, calendar.holidays === null ? null : JSON.stringify(calendar.holidays), calendar.description],
    );
    return rows.length === 0 ? null : this.get(tx, namespaceId, calendar.name);
  }

  /** Replaces a calendar's dates, holidays and description (the row locked by `lock` first). */
  async replace(tx: Tx, namespaceId: string, calendar: CalendarWrite): Promise<CalendarRow> {
    await tx.query(`UPDATE calendars SET dates = $3::date[], holidays = $4, description = $5, updated_at = now() WHERE namespace_id = $1 AND name = $2`, [
      namespaceId,
      calendar.name,
      calendar.dates,
      calendar.holidays === null ? null : JSON.stringify(calendar.holidays),
      calendar.description,
    ]);
    return (await this.get(tx, namespaceId, calendar.name))!;
  }

  async get(db: Queryable, namespaceId: string, name: string, opts: { lock?: boolean } = {}): Promise<CalendarRow | null> {
    if (!NAME_PATTERN.test(name)) return null;
    const { rows } = await db.query<CalendarRow>(
      `SELECT ${CALENDAR_COLUMNS} FROM calendars c WHERE c.namespace_id = $1 AND c.name = $2 ${opts.lock ? 'FOR UPDATE' : ''}`,
      [namespaceId, name],
    );
    return rows[0] ?? null;
  }

  /** By name, keyset-paginated on it. */
  async list(db: Queryable, namespaceId: string, limit: number, cursor?: string): Promise<Page<CalendarRow>> {
    const params: unknown[] = [namespaceId, limit + 1];
    let after = '';
    if (cursor !== undefined) {
      params.push(decodeCursor(cursor, (key) => NAME_PATTERN.test(key)));
      after = `AND c.name > $3`;
    }
    const { rows } = await db.query<CalendarRow>(`SELECT ${CALENDAR_COLUMNS} FROM calendars c WHERE c.namespace_id = $1 ${after} ORDER BY c.name LIMIT $2`, params);
    return toPage(rows, limit, (row) => row.name);
  }

  /** Deletes a calendar locked by the caller's transaction. */
  async remove(tx: Tx, namespaceId: string, name: string): Promise<void> {
    await tx.query(`DELETE FROM calendars WHERE namespace_id = $1 AND name = $2`, [namespaceId, name]);
  }

  /** The names of live schedules naming a calendar, at most `limit`. */
  async namingSchedules(db: Queryable, namespaceId: string, name: string, limit: number): Promise<string[]> {
    const { rows } = await db.query<{ name: string }>(`SELECT s.name FROM schedules s WHERE ${NAMING} ORDER BY s.name LIMIT $3`, [namespaceId, name, limit]);
    return rows.map((r) => r.name);
  }

  /** The live schedules naming a calendar, locked for the caller's transaction to re-plan. */
  async lockNamingSchedules(tx: Tx, namespaceId: string, name: string): Promise<ScheduleRow[]> {
    const { rows } = await tx.query<ScheduleRow>(`SELECT ${SCHEDULE_COLUMNS} FROM schedules s WHERE ${NAMING} ORDER BY s.id FOR NO KEY UPDATE`, [namespaceId, name]);
    return rows;
  }

  /**
   * The calendars each schedule names, by schedule id: one statement for any number of schedules,
   * and none when no schedule names a calendar. A name that no calendar has (any more) is left out.
   */
  async definitionsFor(db: Queryable, schedules: readonly Pick<ScheduleRow, 'id' | 'namespaceId' | 'calendar'>[]): Promise<Map<string, CalendarDefinition[]>> {
    const wanted = schedules.filter((s) => s.calendar !== null && s.calendar.exclude.length > 0);
    const found = new Map<string, CalendarDefinition[]>();
    if (wanted.length === 0) return found;
    const namespaces: string[] = [];
    const names: string[] = [];
    for (const s of wanted) {
      for (const name of s.calendar!.exclude) {
        namespaces.push(s.namespaceId);
        names.push(name);
      }
    }
    const { rows } = await db.query<CalendarDefinition & { namespaceId: string }>(
      `SELECT c.namespace_id AS "namespaceId", c.name, c.dates::text[] AS dates, c.holidays FROM calendars c
       WHERE (c.namespace_id, c.name) IN (SELECT DISTINCT * FROM unnest($1::uuid[], $2::text[]))`,
      [namespaces, names],
    );
    const byKey = new Map(rows.map((r) => [`${r.namespaceId}/${r.name}`, { name: r.name, dates: r.dates, holidays: r.holidays }]));
    for (const s of wanted) {
      found.set(
        s.id,
        s.calendar!.exclude.flatMap((name) => {
          const definition = byKey.get(`${s.namespaceId}/${name}`);
          return definition === undefined ? [] : [definition];
        }),
      );
    }
    return found;
  }

  /**
   * The calendars of a namespace with these names; names without a calendar are left out. `lock`
   * holds them (FOR KEY SHARE) until the caller's transaction ends, so none is deleted under a
   * schedule being written to name it.
   */
  async byNames(db: Queryable, namespaceId: string, names: readonly string[], opts: { lock?: boolean } = {}): Promise<CalendarDefinition[]> {
    if (names.length === 0) return [];
    const { rows } = await db.query<CalendarDefinition>(
      `SELECT c.name, c.dates::text[] AS dates, c.holidays FROM calendars c WHERE c.namespace_id = $1 AND c.name = ANY($2::text[])
       ORDER BY c.name ${opts.lock ? 'FOR KEY SHARE' : ''}`,
      [namespaceId, names],
    );
    return rows;
  }
}
