/**
 * Scheduler sessions: one row per leadership term, with a heartbeat. A term that never said
 * goodbye is closed by the next leader as crashed, and the gap between the last sign of life and
 * the new term is recorded as an outage, so every slot the gap swallowed has an explanation.
 */
import type { Queryable, Tx } from '../database.js';

export interface SessionStart {
  sessionId: string;
  startedAt: Date;
  /** The outage this term ended, if there was a gap before it. */
  outage: { startedAt: Date; endedAt: Date; reasonCode: 'SCHEDULER_CRASHED' | 'SCHEDULER_STOPPED' } | null;
}

export interface SessionIdentity {
  id: string;
  holder: string;
  hostname: string;
  pid: number;
}

/** Gaps shorter than this between terms are ordinary hand-overs, not outages. */
const OUTAGE_THRESHOLD_MS = 1_000;

export class SessionRepository {
  async start(tx: Tx, who: SessionIdentity): Promise<SessionStart> {
    const crashed = await tx.query<{ id: string; lastSeen: Date }>(
      `UPDATE scheduler_sessions SET stopped_at = heartbeat_at, stop_reason = 'crashed'
       WHERE stopped_at IS NULL AND id <> $1
       RETURNING id, heartbeat_at AS "lastSeen"`,
      [who.id],
    );
    const { rows } = await tx.query<{ startedAt: Date }>(
      `INSERT INTO scheduler_sessions (id, holder, hostname, pid) VALUES ($1, $2, $3, $4)
       RETURNING started_at AS "startedAt"`,
      [who.id, who.holder, who.hostname, who.pid],
    );
    const startedAt = rows[0]!.startedAt;
    const previous = await tx.query<{ id: string; endedAt: Date; reason: string }>(
      `SELECT id, stopped_at AS "endedAt", stop_reason AS reason FROM scheduler_sessions
       WHERE id <> $1 AND stopped_at IS NOT NULL ORDER BY stopped_at DESC LIMIT 1`,
      [who.id],
    );
    const last = previous.rows[0];
    let outage: SessionStart['outage'] = null;
    if (last && startedAt.getTime() - last.endedAt.getTime() >= OUTAGE_THRESHOLD_MS) {
      const reasonCode = crashed.rows.some((r) => r.id === last.id) ? 'SCHEDULER_CRASHED' : 'SCHEDULER_STOPPED';
      await tx.query(
        `INSERT INTO outages (started_at, ended_at, previous_session_id, detected_by_session, reason_code)
         VALUES ($1, $2, $3, $4, $5)`,
        [last.endedAt, startedAt, last.id, who.id, reasonCode],
      );
      outage = { startedAt: last.endedAt, endedAt: startedAt, reasonCode };
    }
    return { sessionId: who.id, startedAt, outage };
  }

  async heartbeat(db: Queryable, sessionId: string): Promise<void> {
    await db.query(`UPDATE scheduler_sessions SET heartbeat_at = now() WHERE id = $1 AND stopped_at IS NULL`, [sessionId]);
  }

  async stop(db: Queryable, sessionId: string): Promise<void> {
    await db.query(
      `UPDATE scheduler_sessions SET heartbeat_at = now(), stopped_at = now(), stop_reason = 'clean'
       WHERE id = $1 AND stopped_at IS NULL`,
      [sessionId],
    );
  }
}
