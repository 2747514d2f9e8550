/**
 * Proof of life for lease holders, kept by Postgres itself. Every would-be holder locks a
 * session-bound advisory lock named after its holder token, on a connection of its own, before it
 * takes a lease. The lock lives exactly as long as that database session: when the process dies
 * (kill -9, crash) or loses its connection, Postgres ends the session and the lock is free at once.
 * A standby that finds the lease holder's lock free therefore knows the holder is gone and may take
 * the lease before it expires. A frozen holder (SIGSTOP) keeps its session and lock, so it is only
 * replaced when its lease expires, and its stale epoch fences whatever it writes after it wakes.
 *
 * The lock only ever speeds a takeover up; safety still rests on the lease row and its epoch.
 */
import pg from 'pg';
import type { Queryable } from '../database.js';

/** First half of every presence lock key (the two-int4 key space, apart from the migration lock). */
export const PRESENCE_LOCK_CLASS = 0x4b41_4952; // "KAIR"

export interface LeaseObservation {
  holder: string;
  epoch: number;
  alive: boolean;
  /** The lease is alive but its holder's presence lock is free: the holder's process is gone. */
  holderGone: boolean;
}

/**
 * Reads the lease and, when another holder's lease is alive, whether that holder's presence lock is
 * free. The lock is taken and given back within the one statement (CASE fixes the order), so the
 * probe may run on any pooled connection and never keeps the lock.
 */
export async function observeLease(db: Queryable, name: string, self: string): Promise<LeaseObservation | null> {
  const { rows } = await db.query<LeaseObservation>(
    `SELECT holder, epoch, expires_at > now() AS alive,
            CASE WHEN expires_at > now() AND holder <> $2
                 THEN CASE WHEN pg_try_advisory_lock($3, hashtext(holder))
                           THEN pg_advisory_unlock($3, hashtext(holder))
                           ELSE false END
                 ELSE false END AS "holderGone"
     FROM leases WHERE name = $1`,
    [name, self, PRESENCE_LOCK_CLASS],
  );
  return rows[0] ?? null;
}

/** The presence lock of one holder token, held on a dedicated connection. */
export class HolderPresence {
  private client: pg.Client | null = null;
  private held = false;

  constructor(
    private readonly databaseUrl: string,
    readonly holder: string,
    private readonly applicationName: string,
    /** Called once when a held lock is lost with its connection. */
    private readonly onLost: (error: Error) => void = () => undefined,
  ) {}

  isHeld(): boolean {
    return this.held;
  }

  /**
   * Takes the lock on a fresh connection unless it is held already. Resolves false when another
   * session has it: only a probe, for the instant of one statement, or a previous connection of this
   * process whose end Postgres has not noticed yet.
   */
  async hold(): Promise<boolean> {
    if (this.held) return true;
    await this.disconnect();
    const client = new pg.Client({
      connectionString: this.databaseUrl,
      application_name: this.applicationName,
      connectionTimeoutMillis: 5_000,
      // A holder whose host vanishes without closing the socket is noticed by TCP keepalives.
      keepAlive: true,
      keepAliveInitialDelayMillis: 5_000,
    });
    const lost = (error: Error): void => {
      if (this.client !== client) return;
      const wasHeld = this.held;
      this.held = false;
      this.client = null;
      client.end().catch(() => undefined);
      if (wasHeld) this.onLost(error);
    };
    client.on('error', lost);
    client.on('end', () => lost(new Error('the presence connection closed')));
    this.client = client;
    try {
      await client.connect();
      const { rows } = await client.query<{ locked: boolean }>(`SELECT pg_try_advisory_lock($1, hashtext($2)) AS locked`, [
        PRESENCE_LOCK_CLASS,
        this.holder,
      ]);
      this.held = this.client === client && rows[0]!.locked;
      return this.held;
    } catch (error) {
      if (this.client === client) this.client = null;
      await client.end().catch(() => undefined);
      throw error;
    }
  }

  /** Gives the lock up by closing its connection. */
  async release(): Promise<void> {
    await this.disconnect();
  }

  private async disconnect(): Promise<void> {
    const client = this.client;
    this.client = null;
    this.held = false;
    await client?.end().catch(() => undefined);
  }
}
