/**
 * Retention: pruning what the ledger no longer needs to explain, in small batches. Each call is one
 * short transaction that deletes at most `batchSize` rows of its kind, skips rows another
 * transaction holds (SKIP LOCKED) and gives up on a lock it would wait for, so pruning never
 * stands in the way of ticks, claims and verdicts.
 *
 * What goes: a finished run once it is older than the retention, together with its events and its
 * tick in the same statement (so no tick ever points at a pruned run and no run of a schedule ever
 * lacks its tick: fsck stays meaningful); a dead letter only once it was republished or is older
 * than the dead-letter retention; ticks that created no run; sensors' settled evaluation ticks
 * (never their run keys); published outbox rows; finished subscription deliveries; outages and closed scheduler sessions; events
 * received before their own retention (KAIROS_EVENT_RETENTION, the window in which a repeated id
 * is deduped; the runs they started keep their eventId). A retry or republish of a pruned run keeps
 * its row, with its source_run_id set null.
 */
import { inTransaction, type Db, type Tx } from '../database.js';
import { EventRepository } from '../events/event.repository.js';

export interface RetentionPolicy {
  retentionMs: number;
  deadLetterRetentionMs: number;
  /** How long an event is kept: its id is deduped for that long. */
  eventRetentionMs: number;
  batchSize: number;
}

export interface PrunedRuns {
  runs: number;
  events: number;
  ticks: number;
  /** The greatest run id pruned: the next batch starts after it. Null when nothing was pruned. */
  lastId: string | null;
}

const NIL_UUID = '00000000-0000-0000-0000-000000000000';
/** Run ids carry their creator's clock; allow it to run this far ahead of the database's. */
const CLOCK_SKEW_ALLOWANCE_MS = 60_000;
/** A pruning statement that would wait longer than this for a lock gives up and is retried later. */
const LOCK_TIMEOUT = '500ms';

/** The smallest UUIDv7 created at `ms`: runs created before that instant have smaller ids. */
export function uuidv7Floor(ms: number): string {
  const time = Math.max(0, Math.floor(ms)).toString(16).padStart(12, '0');
  return `${time.slice(0, 8)}-${time.slice(8, 12)}-0000-0000-000000000000`;
}

async function shortTransaction<T>(db: Db, work: (tx: Tx) => Promise<T>): Promise<T> {
  return inTransaction(db, async (tx) => {
    await tx.query(`SET LOCAL lock_timeout = '${LOCK_TIMEOUT}'`);
    return work(tx);
  });
}

export class RetentionRepository {
  private readonly events = new EventRepository();

  /**
   * One batch of finished runs past retention, walked in id (creation) order from `after`. A run
   * finishes after it was created, so only ids older than the larger cutoff need looking at.
   */
  async pruneRuns(db: Db, policy: RetentionPolicy, after: string | null, nowMs = Date.now()): Promise<PrunedRuns> {
    const idBound = uuidv7Floor(nowMs - Math.min(policy.retentionMs, policy.deadLetterRetentionMs) + CLOCK_SKEW_ALLOWANCE_MS);
    return shortTransaction(db, async (tx) => {
      const { rows } = await tx.query<PrunedRuns>(
        `WITH doomed AS (
           SELECT r.id FROM runs r
           WHERE r.id > $1::uuid AND r.id < $2::uuid AND r.finished_at IS NOT NULL AND r.parent_run_id IS NULL
             AND CASE WHEN r.state <> 'dead' THEN r.finished_at < now() - $3 * interval '1 millisecond'
                      ELSE r.finished_at < now() - $4 * interval '1 millisecond'
                        OR (r.finished_at < now() - $3 * interval '1 millisecond'
                            AND EXISTS (SELECT 1 FROM runs c WHERE c.source_run_id = r.id AND c.origin = 'republish'))
                 END
           ORDER BY r.id
           LIMIT $5
           FOR UPDATE SKIP LOCKED
         ), doomed_steps AS (
           -- A multi-step run goes with its step runs.
           SELECT s.id FROM runs s JOIN doomed d ON s.parent_run_id = d.id
         ), gone_ticks AS (
           DELETE FROM ticks t USING doomed d WHERE t.run_id = d.id RETURNING 1
         ), gone_events AS (
           DELETE FROM run_events e WHERE e.run_id IN (SELECT id FROM doomed UNION ALL SELECT id FROM doomed_steps) RETURNING 1
         ), gone_checkpoints AS (
           DELETE FROM run_checkpoints c WHERE c.run_id IN (SELECT id FROM doomed UNION ALL SELECT id FROM doomed_steps) RETURNING 1
         ), gone_signals AS (
           DELETE FROM run_signals g WHERE g.run_id IN (SELECT id FROM doomed UNION ALL SELECT id FROM doomed_steps) RETURNING 1
         ), gone_steps AS (
           DELETE FROM runs r USING doomed_steps d WHERE r.id = d.id RETURNING r.id
         ), gone_runs AS (
           DELETE FROM runs r USING doomed d WHERE r.id = d.id RETURNING r.id
         )
         SELECT (SELECT count(*) FROM gone_runs)::int + (SELECT count(*) FROM gone_steps)::int AS runs,
                (SELECT count(*) FROM gone_events)::int AS events,
                (SELECT count(*) FROM gone_ticks)::int AS ticks,
                (SELECT max(id::text) FROM gone_runs) AS "lastId"`,
        [after ?? NIL_UUID, idBound, policy.retentionMs, policy.deadLetterRetentionMs, policy.batchSize],
      );
      return rows[0]!;
    });
  }

  /** One batch of ticks that created no run (missed, skipped, error), oldest first. */
  async pruneRunlessTicks(db: Db, policy: RetentionPolicy): Promise<number> {
    return shortTransaction(db, async (tx) => {
      const { rowCount } = await tx.query(
        `DELETE FROM ticks WHERE ctid = ANY(ARRAY(
           SELECT ctid FROM ticks WHERE run_id IS NULL AND created_at < now() - $1 * interval '1 millisecond'
           ORDER BY created_at LIMIT $2 FOR UPDATE SKIP LOCKED))`,
        [policy.retentionMs, policy.batchSize],
      );
      return rowCount ?? 0;
    });
  }

  /** One batch of sensors' settled evaluation ticks older than the cutoff; a sensor's run keys always stay (forgetting them is only ever explicit). */
  async pruneSensorTicks(db: Db, policy: RetentionPolicy): Promise<number> {
    return shortTransaction(db, async (tx) => {
      const { rowCount } = await tx.query(
        `DELETE FROM sensor_ticks WHERE id = ANY(ARRAY(
           SELECT id FROM sensor_ticks WHERE state <> 'evaluating' AND finished_at < now() - $1 * interval '1 millisecond'
           ORDER BY finished_at LIMIT $2 FOR UPDATE SKIP LOCKED))`,
        [policy.retentionMs, policy.batchSize],
      );
      return rowCount ?? 0;
    });
  }

  /** One batch of outbox rows published and fanned out before the retention cutoff; the others always stay. */
  async prunePublishedOutbox(db: Db, policy: RetentionPolicy): Promise<number> {
    return shortTransaction(db, async (tx) => {
      const { rowCount } = await tx.query(
        `DELETE FROM outbox WHERE id = ANY(ARRAY(
           SELECT id FROM outbox WHERE published_at < now() - $1 * interval '1 millisecond' AND fanned_out_at IS NOT NULL
           ORDER BY id LIMIT $2 FOR UPDATE SKIP LOCKED))`,
        [policy.retentionMs, policy.batchSize],
      );
      return rowCount ?? 0;
    });
  }

  /** One batch of subscription deliveries (with their attempts) that were delivered or given up before the cutoff; pending ones always stay. */
  async pruneDeliveries(db: Db, policy: RetentionPolicy): Promise<number> {
    return shortTransaction(db, async (tx) => {
      const { rowCount } = await tx.query(
        `DELETE FROM subscription_deliveries WHERE id = ANY(ARRAY(
           SELECT id FROM subscription_deliveries WHERE state <> 'pending' AND finished_at < now() - $1 * interval '1 millisecond'
           ORDER BY finished_at LIMIT $2))`,
        [policy.retentionMs, policy.batchSize],
      );
      return rowCount ?? 0;
    });
  }

  /** One batch of events received before the event retention's cutoff (on the database's clock), oldest first. */
  async pruneEvents(db: Db, policy: RetentionPolicy): Promise<number> {
    return shortTransaction(db, async (tx) => {
      const { rows } = await tx.query<{ before: Date }>(`SELECT now() - $1 * interval '1 millisecond' AS before`, [policy.eventRetentionMs]);
      return this.events.prune(tx, rows[0]!.before, policy.batchSize);
    });
  }

  /** One batch of outages that ended, and closed scheduler sessions that stopped, before the cutoff. */
  async pruneSessions(db: Db, policy: RetentionPolicy): Promise<number> {
    return shortTransaction(db, async (tx) => {
      const outages = await tx.query(
        `DELETE FROM outages WHERE id = ANY(ARRAY(
           SELECT id FROM outages WHERE ended_at < now() - $1 * interval '1 millisecond' ORDER BY id LIMIT $2))`,
        [policy.retentionMs, policy.batchSize],
      );
      const sessions = await tx.query(
        `DELETE FROM scheduler_sessions WHERE id = ANY(ARRAY(
           SELECT s.id FROM scheduler_sessions s
           WHERE s.stopped_at < now() - $1 * interval '1 millisecond'
             AND NOT EXISTS (SELECT 1 FROM outages o WHERE o.previous_session_id = s.id OR o.detected_by_session = s.id)
           ORDER BY s.stopped_at LIMIT $2))`,
        [policy.retentionMs, policy.batchSize],
      );
      return (outages.rowCount ?? 0) + (sessions.rowCount ?? 0);
    });
  }
}
