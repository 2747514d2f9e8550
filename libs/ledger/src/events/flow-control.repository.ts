/**
 * What flow control keeps per schedule and key, read and written inside the transaction that stores
 * an event (the schedules' rows locked): the marks of rate limits and throttles, and the open
 * debounce and batch windows, each a queued run not yet taken, locked here so no claim takes it
 * while an event joins it.
 */
import { storableText, type JsonValue } from '@kairos/domain';
import { jsonText, type Tx } from '../database.js';

export type MarkKind = 'rate' | 'throttle';
export type WindowKind = 'debounce' | 'batch';

export interface FlowMark {
  scheduleId: string;
  kind: MarkKind;
  key: string;
  at: Date;
  runId: string | null;
}

export interface OpenWindow {
  scheduleId: string;
  kind: WindowKind;
  key: string;
  runId: string;
  openedAt: Date;
  events: number;
  payload: JsonValue | null;
}

/** A window's run after the events of this transaction joined it. */
export interface GatheredRun {
  runId: string;
  payload: JsonValue | null;
  availableAt: Date;
  eventId: string;
  deferReason: string | null;
  /** The events that joined it here, in order, with the control that gathered them. */
  gathered: { eventId: string; control: WindowKind }[];
}

export class FlowControlRepository {
  /** The marks of these schedules within `horizonMs` of now (their longest window), oldest first. */
  async marks(tx: Tx, scheduleIds: readonly string[], horizonMs: number): Promise<FlowMark[]> {
    if (scheduleIds.length === 0) return [];
    const { rows } = await tx.query<FlowMark>(
      `SELECT schedule_id AS "scheduleId", kind, key, at, run_id AS "runId" FROM flow_marks
       WHERE schedule_id = ANY($1::uuid[]) AND at > now() - $2 * interval '1 millisecond' ORDER BY at`,
      [scheduleIds, horizonMs],
    );
    return rows;
  }

  /**
   * The open windows of these schedules whose run is still queued and not started, their runs
   * locked; a window whose run was taken is closed (the next event opens another).
   */
  async openWindows(tx: Tx, scheduleIds: readonly string[]): Promise<OpenWindow[]> {
    if (scheduleIds.length === 0) return [];
    const { rows } = await tx.query<OpenWindow>(
      `SELECT w.schedule_id AS "scheduleId", w.kind, w.key, w.run_id AS "runId", w.opened_at AS "openedAt", w.events, r.payload
       FROM flow_windows w JOIN runs r ON r.id = w.run_id
       WHERE w.schedule_id = ANY($1::uuid[]) AND r.state = 'queued' AND r.started_at IS NULL AND r.cancel_requested_at IS NULL
       ORDER BY w.schedule_id, w.kind, w.key FOR UPDATE OF r`,
      [scheduleIds],
    );
    return rows;
  }

  /** Records new marks, and prunes those of the same schedules older than each one's window. */
  async writeMarks(tx: Tx, marks: readonly FlowMark[], windows: readonly { scheduleId: string; kind: MarkKind; periodMs: number }[]): Promise<void> {
    if (marks.length > 0) {
      await tx.query(
        `INSERT INTO flow_marks (schedule_id, kind, key, at, run_id)
         SELECT * FROM unnest($1::uuid[], $2::text[], $3::text[], $4::timestamptz[], $5::uuid[])`,
        [marks.map((m) => m.scheduleId), marks.map((m) => m.kind), marks.map((m) => storableText(m.key)), marks.map((m) => m.at), marks.map((m) => m.runId)],
      );
    }
    if (windows.length > 0) {
      await tx.query(
        `DELETE FROM flow_marks m USING unnest($1::uuid[], $2::text[], $3::bigint[]) AS w(schedule_id, kind, period_ms)
         WHERE m.schedule_id = w.schedule_id AND m.kind = w.kind AND m.at < now() - w.period_ms * interval '1 millisecond'`,
        [windows.map((w) => w.scheduleId), windows.map((w) => w.kind), windows.map((w) => w.periodMs)],
      );
    }
  }

  /** Opens (or moves to a new run) the windows given, and closes those listed by run. */
  async saveWindows(
    tx: Tx,
    open: readonly { scheduleId: string; kind: WindowKind; key: string; runId: string; openedAt: Date; events: number }[],
    closedRunIds: readonly string[],
  ): Promise<void> {
    if (closedRunIds.length > 0) await tx.query(`DELETE FROM flow_windows WHERE run_id = ANY($1::uuid[])`, [closedRunIds]);
    if (open.length === 0) return;
    await tx.query(
      `INSERT INTO flow_windows (schedule_id, kind, key, run_id, opened_at, events)
       SELECT * FROM unnest($1::uuid[], $2::text[], $3::text[], $4::uuid[], $5::timestamptz[], $6::int[])
       ON CONFLICT (schedule_id, kind, key) DO UPDATE SET run_id = EXCLUDED.run_id, opened_at = EXCLUDED.opened_at, events = EXCLUDED.events`,
      [open.map((w) => w.scheduleId), open.map((w) => w.kind), open.map((w) => storableText(w.key)), open.map((w) => w.runId), open.map((w) => w.openedAt), open.map((w) => w.events)],
    );
  }

  /**
   * Writes what the events of this transaction made of the runs of open windows (their payload, when
   * due, the event they carry), and records each event that joined a run as its `event_gathered`
   * event, so its story says which events it came from.
   */
  async writeGathered(tx: Tx, existing: readonly GatheredRun[], joinedNew: readonly GatheredRun[], actor: string): Promise<void> {
    if (existing.length > 0) {
      await tx.query(
        `UPDATE runs r SET payload = t.payload::json, available_at = t.available_at, event_id = coalesce(nullif(t.event_id, ''), r.event_id), defer_reason = t.defer_reason, updated_at = now()
         FROM json_to_recordset($1::json) AS t(id uuid, payload text, available_at timestamptz, event_id text, defer_reason text)
         WHERE r.id = t.id`,
        [
          JSON.stringify(
            existing.map((g) => ({ id: g.runId, payload: jsonText(g.payload), available_at: g.availableAt.toISOString(), event_id: g.eventId, defer_reason: g.deferReason })),
          ),
        ],
      );
    }
    const joined = [...existing, ...joinedNew].flatMap((g) => g.gathered.map((e) => ({ run: g.runId, event: e.eventId, control: e.control })));
    if (joined.length === 0) return;
    await tx.query(
      `INSERT INTO run_events (run_id, kind, from_state, to_state, lease_epoch, actor, detail)
       SELECT t.run, 'event_gathered', 'queued', 'queued', r.lease_epoch, $2, jsonb_build_object('eventId', t.event, 'control', t.control)
       FROM json_to_recordset($1::json) AS t(run uuid, event text, control text) JOIN runs r ON r.id = t.run`,
      [JSON.stringify(joined), storableText(actor)],
    );
  }
}
