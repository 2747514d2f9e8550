/**
 * Leader election through the `scheduler` lease row. Each process has a unique holder token and,
 * before it may lead, holds that token's presence lock (a session-bound advisory lock, see
 * HolderPresence). The leader renews well inside the TTL (every third of it). A standby probes the
 * lease every STANDBY_PROBE_MS: it takes over once the lease expired, or at once when the holder's
 * presence lock is free, which means Postgres saw the holder's session end (kill -9, crash, lost
 * connection). A frozen leader keeps its session, so it is replaced only when its lease expires.
 * A new term opens a scheduler session, which closes the previous leader's session if it never
 * said goodbye and records the gap as an outage. Leadership is given up the moment a renewal is
 * refused, the presence lock is lost, or renewals fail for so long that the lease may have expired.
 */
import { Inject, Injectable, Logger, type OnApplicationBootstrap, type BeforeApplicationShutdown, type OnApplicationShutdown } from '@nestjs/common';
import type { KairosConfig } from '@kairos/config';
import { newId } from '@kairos/domain';
import { HolderPresence, LeaseRepository, holderToken, SCHEDULER_LEASE, SessionRepository, inTransaction, observeLease, type Db, type LeaseGrant, type Queryable } from '@kairos/ledger';
import { DATABASE, KAIROS_CONFIG, GatedLoops, KairosMetrics, Loop, processIdentity, type GatedTask } from '@kairos/process';
import { withLogContext } from '@kairos/telemetry';

export interface LeadershipTerm {
  holder: string;
  epoch: number;
  sessionId: string;
}

/**
 * How often a standby looks at the lease and the leader's presence lock: a dead leader is replaced
 * within about this much after Postgres ends its session. One small statement per probe.
 */
const STANDBY_PROBE_MS = 100;

@Injectable()
export class LeadershipService implements OnApplicationBootstrap, BeforeApplicationShutdown, OnApplicationShutdown {
  private readonly logger = new Logger('Leadership');
  readonly identity = processIdentity();
  /** The identity's id; lease-only (see HolderPresence) when there is no session-capable connection. */
  readonly holder: string;
  private currentTerm: LeadershipTerm | null = null;
  /** Local monotonic deadline after which an unrenewed lease must be presumed lost. */
  private validUntil = 0;
  /** The leader-only loops, started with the application and stopped before the lease is released. */
  private readonly tasks = new GatedLoops<LeadershipTerm>(
    () => this.term(),
    (term, pass) => withLogContext({ epoch: term.epoch }, pass),
  );
  private readonly loop: Loop;
  private readonly presence: HolderPresence;

  constructor(
    @Inject(DATABASE) private readonly db: Db,
    @Inject(KAIROS_CONFIG) private readonly config: KairosConfig,
    private readonly leases: LeaseRepository,
    private readonly sessions: SessionRepository,
    metrics: KairosMetrics,
  ) {
    metrics.reportLeadership(() => this.term() !== null);
    this.loop = new Loop({ name: 'leadership', logger: this.logger, pass: () => this.pass(), errorBackoffMs: this.errorBackoffMs() });
    this.holder = holderToken(this.identity.id, config.databaseDirectUrl);
    this.presence = new HolderPresence(config.databaseDirectUrl, this.holder, 'kairos-scheduler-presence', (error) => {
      // A standby may take the lease any moment now; stop leading rather than be fenced mid-tick.
      this.stepDown(`lost the presence connection (${error.message})`);
      this.loop.wake();
    });
  }

  /** The current term, or null when this process is not the leader. */
  term(): LeadershipTerm | null {
    if (this.currentTerm && performance.now() > this.validUntil) this.stepDown('lease renewals failed past its expiry');
    return this.currentTerm;
  }

  /**
   * Whether this process holds its presence lock: the proof of life every lease it holds (the
   * scheduler lease, partition leases) rests on. Taken by the leadership loop's first pass.
   */
  presenceHeld(): boolean {
    return this.presence.isHeld();
  }

  /**
   * Runs `pass` over and over while this process leads, sleeping as long as each pass asks; while
   * it does not lead, the task sleeps `idleMs` and checks again. A new term wakes every task. Tasks
   * stop before the lease is released, so nothing a task writes can land after a successor took over.
   */
  whileLeading(name: string, idleMs: number, pass: (term: LeadershipTerm) => Promise<number>): GatedTask {
    return this.tasks.add(name, new Logger(name), idleMs, pass);
  }

  onApplicationBootstrap(): void {
    this.loop.start();
    this.tasks.start();
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.tasks.stop();
    await this.loop.stop();
    const term = this.currentTerm;
    if (!term) return;
    this.stepDown('shutting down');
    await this.leases.release(this.db, SCHEDULER_LEASE, term.holder, term.epoch).catch(() => undefined);
    await this.sessions.stop(this.db, term.sessionId).catch(() => undefined);
    this.logger.log({ msg: `released the scheduler lease (epoch ${term.epoch})`, epoch: term.epoch });
  }

  /** Runs after the lease is released, so standbys never see a live lease without its holder's lock. */
  async onApplicationShutdown(): Promise<void> {
    await this.presence.release();
  }

  private renewIntervalMs(): number {
    return Math.max(100, Math.floor(this.config.scheduler.leaderTtlMs / 3));
  }

  private errorBackoffMs(): number {
    return Math.max(100, Math.min(1_000, Math.floor(this.config.scheduler.leaderTtlMs / 5)));
  }

  private async pass(): Promise<number> {
    if (!this.presence.isHeld() && !(await this.presence.hold())) {
      // Only a probe holds our lock, for the instant of one statement, or Postgres has not yet
      // ended a previous connection of ours. Either way, try again shortly.
      this.stepDown('its presence lock is not held');
      return STANDBY_PROBE_MS;
    }
    const ttl = this.config.scheduler.leaderTtlMs;
    const startedAt = performance.now();
    let grant: LeaseGrant | null;
    try {
      grant = this.currentTerm ? await this.renew(ttl) : await this.contend(ttl);
    } catch (error) {
      this.term();
      throw error;
    }
    if (grant === null) {
      if (this.currentTerm) this.stepDown('another scheduler holds the lease');
      return STANDBY_PROBE_MS;
    }
    // The lease runs from when the database applied the statement, which is after we sent it.
    this.validUntil = startedAt + ttl - 250;
    if (grant.acquired || this.currentTerm?.epoch !== grant.epoch) {
      if (this.currentTerm) this.stepDown(`the lease moved to a new epoch (${grant.epoch})`);
      const sessionId = newId();
      const session = await inTransaction(this.db, (tx) =>
        this.sessions.start(tx, { id: sessionId, holder: this.holder, hostname: this.identity.hostname, pid: this.identity.pid }),
      );
      if (session.outage) {
        const seconds = ((session.outage.endedAt.getTime() - session.outage.startedAt.getTime()) / 1000).toFixed(1);
        this.logger.warn(`no scheduler was leading for ${seconds}s (${session.outage.reasonCode}); catch-up policies apply to that gap`);
      }
      this.currentTerm = { holder: this.holder, epoch: grant.epoch, sessionId };
      this.logger.log({ msg: `leading as ${this.holder} (epoch ${grant.epoch})`, epoch: grant.epoch });
      this.emit();
    } else {
      await this.sessions.heartbeat(this.db, this.currentTerm.sessionId);
    }
    return this.renewIntervalMs();
  }

  /**
   * Where lease statements go, this process's partition leases' too: the presence connection when
   * there is one (see HolderPresence.connection), else the pool.
   */
  leaseDb(): Queryable {
    return this.presence.connection() ?? this.db;
  }

  private renew(ttlMs: number): Promise<LeaseGrant | null> {
    return this.leases.acquireOrRenew(this.leaseDb(), SCHEDULER_LEASE, this.holder, ttlMs);
  }

  /** A standby's probe: takes the lease when it is free, expired, or held by a process that is gone. */
  private async contend(ttlMs: number): Promise<LeaseGrant | null> {
    const seen = await observeLease(this.leaseDb(), SCHEDULER_LEASE, this.holder);
    if (!seen || !seen.alive || seen.holder === this.holder) return this.renew(ttlMs);
    if (!seen.holderGone) return null;
    const grant = await this.leases.takeOver(this.leaseDb(), SCHEDULER_LEASE, this.holder, seen.holder, seen.epoch, ttlMs);
    if (grant) this.logger.warn(`the leader ${seen.holder} (epoch ${seen.epoch}) is gone: its session ended before its lease expired`);
    return grant;
  }

  private stepDown(why: string): void {
    if (!this.currentTerm) return;
    this.logger.warn({ msg: `stepping down as leader (epoch ${this.currentTerm.epoch}): ${why}`, epoch: this.currentTerm.epoch });
    this.currentTerm = null;
    this.emit();
  }

  private emit(): void {
    this.tasks.wakeAll();
  }
}
