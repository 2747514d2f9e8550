/**
 * Named singleton leases (the scheduler leader; the tick's partitions have leases of their own, see
 * PartitionLeaseRepository). Every instant is computed on the database clock, so no process
 * compares its own clock with another's. The epoch rises on every change of holder and is the
 * fencing token of everything the holder writes.
 */
import type { Queryable, Tx } from '../database.js';

/**
 * The lease the scheduler leader holds: one row, whose holder runs the relay, the reaper, the
 * reconciler, the outbox publisher and retention. It does not drive the tick: every scheduler ticks
 * the partitions it owns.
 */
export const SCHEDULER_LEASE = 'scheduler';

export interface LeaseGrant {
  name: string;
  holder: string;
  epoch: number;
  expiresAt: Date;
  /** True when this call changed the holder (a new term began). */
  acquired: boolean;
}

/** The lease is held by someone else, or this holder's epoch is no longer current. */
export class LeaseLostError extends Error {
  constructor(
    readonly leaseName: string,
    readonly holder: string,
    readonly epoch: number,
  ) {
    super(`lease ${leaseName} is no longer held by ${holder} at epoch ${epoch}`);
    this.name = 'LeaseLostError';
  }
}

export class LeaseRepository {
  /**
   * Takes the lease when it is free or expired, or renews it when `holder` already has it. Returns
   * null when another holder's lease is still alive. Idempotent: repeating it only moves expiry.
   */
  async acquireOrRenew(db: Queryable, name: string, holder: string, ttlMs: number): Promise<LeaseGrant | null> {
    const { rows } = await db.query<LeaseGrant>(
      `INSERT INTO leases AS l (name, holder, epoch, expires_at, acquired_at, renewed_at)
       VALUES ($1, $2, 1, now() + $3 * interval '1 millisecond', now(), now())
       ON CONFLICT (name) DO UPDATE SET
         holder      = EXCLUDED.holder,
         epoch       = CASE WHEN l.holder = EXCLUDED.holder AND l.expires_at > now() THEN l.epoch ELSE l.epoch + 1 END,
         acquired_at = CASE WHEN l.holder = EXCLUDED.holder AND l.expires_at > now() THEN l.acquired_at ELSE now() END,
         expires_at  = EXCLUDED.expires_at,
         renewed_at  = now()
       WHERE l.holder = EXCLUDED.holder OR l.expires_at <= now()
       RETURNING name, holder, epoch, expires_at AS "expiresAt", (acquired_at = renewed_at) AS acquired`,
      [name, holder, ttlMs],
    );
    return rows[0] ?? null;
  }

  /**
   * Takes a lease that is still alive from a holder whose process is gone (its presence lock was
   * found free), without waiting for expiry. Conditional on the exact holder and epoch observed, so
   * of several standbys seeing the same death only one wins, and a holder that renewed in between
   * (a new epoch) is not displaced. The epoch rises, fencing anything the old holder still sends.
   */
  async takeOver(db: Queryable, name: string, holder: string, goneHolder: string, goneEpoch: number, ttlMs: number): Promise<LeaseGrant | null> {
    const { rows } = await db.query<LeaseGrant>(
      `UPDATE leases SET holder = $2, epoch = epoch + 1, acquired_at = now(), renewed_at = now(),
                         expires_at = now() + $5 * interval '1 millisecond'
       WHERE name = $1 AND holder = $3 AND epoch = $4
       RETURNING name, holder, epoch, expires_at AS "expiresAt", true AS acquired`,
      [name, holder, goneHolder, goneEpoch, ttlMs],
    );
    return rows[0] ?? null;
  }

  /**
   * Gives the lease up at clean shutdown so a standby can take over at once. The row stays (expired)
   * so the next holder's epoch is still higher. False when `holder` no longer had it.
   */
  async release(db: Queryable, name: string, holder: string, epoch: number): Promise<boolean> {
    const { rowCount } = await db.query(
      `UPDATE leases SET expires_at = now() WHERE name = $1 AND holder = $2 AND epoch = $3 AND expires_at > now()`,
      [name, holder, epoch],
    );
    return rowCount === 1;
  }

  /**
   * Proves, inside the caller's transaction, that `holder` still holds the lease at `epoch`. The row
   * is share-locked until commit, so the lease cannot change hands while the transaction writes.
   */
  async assertHeld(tx: Tx, name: string, holder: string, epoch: number): Promise<void> {
    const { rowCount } = await tx.query(
      `SELECT 1 FROM leases WHERE name = $1 AND holder = $2 AND epoch = $3 AND expires_at > now() FOR SHARE`,
      [name, holder, epoch],
    );
    if (rowCount !== 1) throw new LeaseLostError(name, holder, epoch);
  }

  async current(db: Queryable, name: string): Promise<{ holder: string; epoch: number; expiresAt: Date; alive: boolean } | null> {
    const { rows } = await db.query<{ holder: string; epoch: number; expiresAt: Date; alive: boolean }>(
      `SELECT holder, epoch, expires_at AS "expiresAt", expires_at > now() AS alive FROM leases WHERE name = $1`,
      [name],
    );
    return rows[0] ?? null;
  }
}
