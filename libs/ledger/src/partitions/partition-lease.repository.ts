/**
 * The partition leases (one row per partition, see migration 0008) and the scheduler members that
 * share them. Like the scheduler lease: a holder token, an epoch that rises with every change of
 * holder and fences what the holder writes, expiry on the database clock, and presence locks that
 * reveal a dead holder before its lease expires. Each statement covers all the partitions it
 * concerns at once.
 */
import type { Queryable, Tx } from '../database.js';
import { holderGoneSql } from '../leases/holder-presence.js';

/** A partition held at an epoch. */
export interface PartitionClaim {
  partition: number;
  epoch: number;
}

export interface PartitionLeaseView extends PartitionClaim {
  holder: string;
  alive: boolean;
  /** The lease is alive but its holder's presence lock is free: the holder's process is gone. */
  holderGone: boolean;
}

export interface PartitionGrant extends PartitionClaim {
  /** Start of uninterrupted ownership: slots due before it fell into an outage of this partition. */
  coveredSince: Date;
  /** The outage this take ended, if the partition was without an owner for a second or more. */
  outage: { startedAt: Date; endedAt: Date; reasonCode: 'SCHEDULER_CRASHED' | 'SCHEDULER_STOPPED' } | null;
}

export interface PartitionHeld {
  partition: number;
  coveredSince: Date;
}

export interface SchedulerMember {
  holder: string;
  hostname: string;
  pid: number;
  /** The database's clock minus this host's, in ms, as last measured; null before the first measure. */
  clockOffsetMs: number | null;
}

/** A released partition taken within this long keeps its coverage (as SessionRepository's gaps). */
const HAND_OVER_MS = 1_000;

export class PartitionLeaseRepository {
  /** Announces (or keeps announcing) a scheduler as a member. */
  async heartbeat(db: Queryable, who: SchedulerMember): Promise<void> {
    await db.query(
      `INSERT INTO scheduler_members (holder, hostname, pid, clock_offset_ms) VALUES ($1, $2, $3, $4)
       ON CONFLICT (holder) DO UPDATE SET heartbeat_at = now(), clock_offset_ms = EXCLUDED.clock_offset_ms`,
      [who.holder, who.hostname, who.pid, who.clockOffsetMs],
    );
  }

  async leave(db: Queryable, holder: string): Promise<void> {
    await db.query(`DELETE FROM scheduler_members WHERE holder = $1`, [holder]);
  }

  /**
   * The live members: heartbeat within `ttlMs` and presence lock held. Members found gone (lock
   * free, or silent for an hour) are forgotten in passing.
   */
  async liveMembers(db: Queryable, self: string, ttlMs: number): Promise<string[]> {
    const { rows } = await db.query<{ holder: string; live: boolean }>(
      `SELECT holder, heartbeat_at > now() - $2 * interval '1 millisecond'
                      AND (holder = $1 OR NOT ${holderGoneSql('holder')}) AS live
       FROM scheduler_members`,
      [self, ttlMs],
    );
    const gone = rows.filter((r) => !r.live).map((r) => r.holder);
    if (gone.length > 0) {
      await db.query(
        `DELETE FROM scheduler_members WHERE holder = ANY($1::text[]) AND holder <> $2
           AND (heartbeat_at < now() - interval '1 hour' OR ${holderGoneSql('holder')})`,
        [gone, self],
      );
    }
    return rows.filter((r) => r.live).map((r) => r.holder);
  }

  /** Every partition's lease, and whether a live lease's holder (other than `self`) is gone. */
  async observe(db: Queryable, self: string): Promise<PartitionLeaseView[]> {
    const { rows } = await db.query<PartitionLeaseView>(
      `SELECT partition, holder, epoch::float8 AS epoch, expires_at > now() AS alive,
              CASE WHEN expires_at > now() AND holder <> $1 THEN ${holderGoneSql('holder')} ELSE false END AS "holderGone"
       FROM partition_leases ORDER BY partition`,
      [self],
    );
    return rows;
  }

  /**
   * Takes partitions observed free (expired) or held by a holder that is gone, each conditional on
   * the exact epoch observed, so of several schedulers seeing the same opening only one wins. The
   * coverage continues across a clean hand-over (released under a second ago); otherwise it starts
   * now, and a gap of a second or more since the previous owner's last sign of life is recorded as
   * an outage of that partition.
   */
  async take(tx: Tx, holder: string, claims: readonly (PartitionClaim & { gone: boolean })[], ttlMs: number): Promise<PartitionGrant[]> {
    if (claims.length === 0) return [];
    const { rows } = await tx.query<PartitionClaim & { coveredSince: Date; now: Date; lastSeen: Date; released: boolean; first: boolean }>(
      `UPDATE partition_leases l SET
         holder = $1, epoch = l.epoch + 1, acquired_at = now(), renewed_at = now(), released_at = NULL,
         expires_at = now() + $2 * interval '1 millisecond',
         covered_since = CASE WHEN l.released_at > now() - $6 * interval '1 millisecond' THEN l.covered_since ELSE now() END
       FROM unnest($3::int[], $4::bigint[], $5::boolean[]) AS c(partition, epoch, gone),
            partition_leases old
       WHERE l.partition = c.partition AND l.epoch = c.epoch AND (l.expires_at <= now() OR c.gone)
         AND old.partition = l.partition
       RETURNING l.partition, l.epoch::float8 AS epoch, l.covered_since AS "coveredSince", now() AS now,
                 coalesce(old.released_at, least(old.renewed_at, old.expires_at)) AS "lastSeen",
                 old.released_at IS NOT NULL AS released, old.epoch = 0 AS first`,
      [holder, ttlMs, claims.map((c) => c.partition), claims.map((c) => c.epoch), claims.map((c) => c.gone), HAND_OVER_MS],
    );
    const grants: PartitionGrant[] = [];
    for (const r of rows) {
      let outage: PartitionGrant['outage'] = null;
      if (!r.first && r.coveredSince.getTime() === r.now.getTime() && r.now.getTime() - r.lastSeen.getTime() >= HAND_OVER_MS) {
        outage = { startedAt: r.lastSeen, endedAt: r.now, reasonCode: r.released ? 'SCHEDULER_STOPPED' : 'SCHEDULER_CRASHED' };
        await tx.query(
          `INSERT INTO outages (started_at, ended_at, partition, detected_by_holder, reason_code) VALUES ($1, $2, $3, $4, $5)`,
          [outage.startedAt, outage.endedAt, r.partition, holder, outage.reasonCode],
        );
      }
      grants.push({ partition: r.partition, epoch: r.epoch, coveredSince: r.coveredSince, outage });
    }
    return grants;
  }

  /** Renews the leases `holder` still has at their epochs; answers the partitions renewed. */
  async renew(db: Queryable, holder: string, claims: readonly PartitionClaim[], ttlMs: number): Promise<number[]> {
    if (claims.length === 0) return [];
    const { rows } = await db.query<{ partition: number }>(
      `UPDATE partition_leases l SET expires_at = now() + $2 * interval '1 millisecond', renewed_at = now()
       FROM unnest($3::int[], $4::bigint[]) AS c(partition, epoch)
       WHERE l.partition = c.partition AND l.epoch = c.epoch AND l.holder = $1 AND l.expires_at > now()
       RETURNING l.partition`,
      [holder, ttlMs, claims.map((c) => c.partition), claims.map((c) => c.epoch)],
    );
    return rows.map((r) => r.partition);
  }

  /** Gives partitions up so their next owner may take them at once, keeping their coverage. */
  async release(db: Queryable, holder: string, claims: readonly PartitionClaim[]): Promise<number[]> {
    if (claims.length === 0) return [];
    const { rows } = await db.query<{ partition: number }>(
      `UPDATE partition_leases l SET expires_at = now(), released_at = now()
       FROM unnest($2::int[], $3::bigint[]) AS c(partition, epoch)
       WHERE l.partition = c.partition AND l.epoch = c.epoch AND l.holder = $1 AND l.expires_at > now()
       RETURNING l.partition`,
      [holder, claims.map((c) => c.partition), claims.map((c) => c.epoch)],
    );
    return rows.map((r) => r.partition);
  }

  /**
   * The subset of `claims` that `holder` still holds, proven inside the caller's transaction: the
   * rows are share-locked until commit, so none can change hands while the transaction writes.
   * Postgres ends the transaction if it waits between statements longer than `idleLimitMs`: a
   * holder frozen inside it (SIGSTOP) would otherwise keep the rows locked, and the takeover its
   * expired leases allow waiting, for as long as it stays frozen.
   */
  async assertHeld(tx: Tx, holder: string, claims: readonly PartitionClaim[], idleLimitMs: number): Promise<PartitionHeld[]> {
    if (claims.length === 0) return [];
    await tx.query(`SELECT set_config('idle_in_transaction_session_timeout', $1, true)`, [String(idleLimitMs)]);
    const { rows } = await tx.query<PartitionHeld>(
      `SELECT l.partition, l.covered_since AS "coveredSince"
       FROM partition_leases l JOIN unnest($2::int[], $3::bigint[]) AS c(partition, epoch)
         ON l.partition = c.partition AND l.epoch = c.epoch
       WHERE l.holder = $1 AND l.expires_at > now()
       ORDER BY l.partition
       FOR SHARE OF l`,
      [holder, claims.map((c) => c.partition), claims.map((c) => c.epoch)],
    );
    return rows;
  }
}

