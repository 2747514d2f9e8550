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
 *
 * A process with no session of its own (DATABASE_URL is a transaction-mode pooler's and no
 * DATABASE_DIRECT_URL is set) cannot hold such a lock: a pooler hands the server session that took
 * it to other clients. Its holder token ends in LEASE_ONLY_SUFFIX, which tells every prober to judge
 * it by its lease's expiry alone.
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

/** Ends the holder token of a process that holds no presence lock (see above). */
export const LEASE_ONLY_SUFFIX = '~lease-only';

/** `holder`, marked as lease-only when the process has no session-capable connection (`directUrl` null). */
export function holderToken(holder: string, directUrl: string | null): string {
  return directUrl === null ? `${holder}${LEASE_ONLY_SUFFIX}` : holder;
}

/**
 * SQL that is true when the holder named by the text expression `holder` is gone: its presence lock
 * is free. The lock is taken and given back within the one expression (CASE fixes the order), so the
 * probe may run on any pooled connection, a pooler's too, and never keeps the lock. A lease-only
 * holder is never found gone this way.
 */
export function holderGoneSql(holder: string): string {
  return `CASE WHEN right(${holder}, ${LEASE_ONLY_SUFFIX.length}) = '${LEASE_ONLY_SUFFIX}' THEN false
               WHEN pg_try_advisory_lock(${PRESENCE_LOCK_CLASS}, hashtext(${holder})) THEN pg_advisory_unlock(${PRESENCE_LOCK_CLASS}, hashtext(${holder}))
               ELSE false END`;
}

/** Reads the lease and, when another holder's lease is alive, whether that holder is gone (holderGoneSql). */
export async function observeLease(db: Queryable, name: string, self: string): Promise<LeaseObservation | null> {
  const { rows } = await db.query<LeaseObservation>(
    `SELECT holder, epoch, expires_at > now() AS alive,
            CASE WHEN expires_at > now() AND holder <> $2 THEN ${holderGoneSql('holder')} ELSE false END AS "holderGone"
     FROM leases WHERE name = $1`,
    [name, self],
  );
  return rows[0] ?? null;
}

/**
 * The presence lock of one holder token, held on a dedicated connection to `databaseUrl`; with no
 * such URL (a lease-only holder) there is no lock, and the holder counts as present while it runs.
 */
export class HolderPresence {
  private client: pg.Client | null = null;
  private held = false;

  constructor(
    private readonly databaseUrl: string | null,
    readonly holder: string,
    private readonly applicationName: string,
    /** Called once when a held lock is lost with its connection. */
    private readonly onLost: (error: Error) => void = () => undefined,
  ) {}

  isHeld(): boolean {
    return this.databaseUrl === null || this.held;
  }

  /**
   * Takes the lock on a fresh connection unless it is held already. Resolves false when another
   * session has it: only a probe, for the instant of one statement, or a previous connection of this
   * process whose end Postgres has not noticed yet.
   */
  async hold(): Promise<boolean> {
    if (this.isHeld()) return true;
    await this.disconnect();
    const client = new pg.Client({
      // isHeld() is true without a URL, so a lock is only ever taken with one.
      connectionString: this.databaseUrl!,
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

  /**
   * The connection that holds the lock, while it does (null without one): lease statements sent on
   * it never queue behind a busy pool or a pooler's, so a standby's probe and takeover, and the
   * leader's renewal, take one round trip whatever else the process is doing. Single statements
   * only: several loops share it, so a transaction on it would take in their statements too.
   */
  connection(): Queryable | null {
    return this.held ? this.client : null;
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
