/**
 * Partition ownership: every scheduler, leader or not, owns a fair share of the tick partitions
 * through their leases (see PartitionLeaseRepository) and ticks only those. Every third of the TTL
 * it announces itself as a member, reads the live members and renews its leases (one statement for
 * all); every pass reads every partition's lease and follows the shared plan: it gives up the
 * partitions that now belong to another member (one joined) and takes those meant for it that have
 * no live owner (free, expired, or held by a process whose presence lock is free, i.e. dead). A dead
 * owner's partitions are therefore taken within about a probe interval of Postgres ending its
 * session; a frozen owner's only when its leases expire, and its stale epochs fence whatever it
 * writes after it wakes. Ownership rests on the same presence lock as leadership.
 */
import { Inject, Injectable, Logger, type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import type { KairosConfig } from '@kairos/config';
import { TICK_PARTITIONS, partitionMoves, planPartitions } from '@kairos/domain';
import { PartitionLeaseRepository, inTransaction, type DatabaseClock, type Db, type PartitionClaim } from '@kairos/ledger';
import { DATABASE, DATABASE_CLOCK, KAIROS_CONFIG, GatedLoops, KairosMetrics, Loop, type GatedTask } from '@kairos/process';
import { LeadershipService } from '../leadership/leadership.service.js';

/** The partitions this process owns right now, each at the epoch its writes are fenced by. */
export interface PartitionOwnership {
  holder: string;
  claims: PartitionClaim[];
}

/** How often a scheduler looks at the members and leases: a dead owner's partitions move within about this. */
const PROBE_MS = 100;

@Injectable()
export class PartitionService implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('Partitions');
  /** partition → epoch */
  private readonly owned = new Map<number, number>();
  /** Local monotonic deadline after which unrenewed leases must be presumed lost. */
  private validUntil = 0;
  private lastRenewal = 0;
  private lastHeartbeat = Number.NEGATIVE_INFINITY;
  /** The live members as last read (with each heartbeat); a member found gone since is left out. */
  private members: string[] = [];
  private readonly loop: Loop;
  private readonly tasks = new GatedLoops<PartitionOwnership>(() => this.ownership());

  constructor(
    @Inject(DATABASE) private readonly db: Db,
    @Inject(KAIROS_CONFIG) private readonly config: KairosConfig,
    @Inject(DATABASE_CLOCK) private readonly clock: DatabaseClock,
    private readonly leadership: LeadershipService,
    private readonly leases: PartitionLeaseRepository,
    metrics: KairosMetrics,
  ) {
    metrics.reportPartitions(() => this.ownership()?.claims.length ?? 0);
    this.loop = new Loop({ name: 'partitions', logger: this.logger, pass: () => this.pass(), errorBackoffMs: PROBE_MS * 5 });
  }

  /** What this process owns now, or null when it owns nothing. */
  ownership(): PartitionOwnership | null {
    if (this.owned.size > 0 && performance.now() > this.validUntil) this.drop([...this.owned.keys()], 'lease renewals failed past their expiry');
    if (this.owned.size > 0 && !this.leadership.presenceHeld()) this.drop([...this.owned.keys()], 'its presence lock is not held');
    if (this.owned.size === 0) return null;
    return { holder: this.leadership.holder, claims: [...this.owned].map(([partition, epoch]) => ({ partition, epoch })) };
  }

  /** Forgets partitions a transaction found were no longer held at their epoch. */
  lost(partitions: readonly number[]): void {
    this.drop(partitions, 'another scheduler holds them now');
  }

  /**
   * Runs `pass` over and over while this process owns partitions, sleeping as long as each pass
   * asks; otherwise the task sleeps `idleMs` and checks again. Taking partitions wakes every task,
   * and tasks stop before the partitions are released at shutdown.
   */
  whileOwning(name: string, idleMs: number, pass: (ownership: PartitionOwnership) => Promise<number>): GatedTask {
    return this.tasks.add(name, new Logger(name), idleMs, pass);
  }

  onApplicationBootstrap(): void {
    this.loop.start();
    this.tasks.start();
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.tasks.stop();
    await this.loop.stop();
    const claims = this.claims();
    this.owned.clear();
    await this.leases.release(this.db, this.leadership.holder, claims).catch(() => undefined);
    await this.leases.leave(this.db, this.leadership.holder).catch(() => undefined);
    if (claims.length > 0) this.logger.log(`released partitions ${claims.map((c) => c.partition).join(', ')}`);
  }

  private renewIntervalMs(): number {
    return Math.max(100, Math.floor(this.config.scheduler.leaderTtlMs / 3));
  }

  private claims(): PartitionClaim[] {
    return [...this.owned].map(([partition, epoch]) => ({ partition, epoch }));
  }

  private async pass(): Promise<number> {
    const self = this.leadership.holder;
    const db = this.leadership.leaseDb();
    const ttl = this.config.scheduler.leaderTtlMs;
    if (!this.leadership.presenceHeld()) {
      this.drop([...this.owned.keys()], 'its presence lock is not held');
      return PROBE_MS;
    }
    if (performance.now() - this.lastHeartbeat >= this.renewIntervalMs()) {
      const { hostname, pid } = this.leadership.identity;
      await this.leases.heartbeat(db, { holder: self, hostname, pid, clockOffsetMs: this.clock.lastReading?.offsetMs ?? null });
      this.members = await this.leases.liveMembers(db, self, ttl);
      this.lastHeartbeat = performance.now();
    }
    if (this.owned.size > 0 && performance.now() - this.lastRenewal >= this.renewIntervalMs()) {
      const startedAt = performance.now();
      const claims = this.claims();
      const renewed = new Set(await this.leases.renew(db, self, claims, ttl));
      this.drop(claims.map((c) => c.partition).filter((p) => !renewed.has(p)), 'their leases could not be renewed');
      // A lease runs from when the database applied the statement, which is after we sent it.
      this.validUntil = startedAt + ttl - 250;
      this.lastRenewal = startedAt;
    }

    // Every probe reads the leases; the members only with each heartbeat, but an owner found gone
    // (its presence lock free) stops counting at once, so its share is planned for the others.
    const leases = await this.leases.observe(db, self);
    const gone = new Set(leases.filter((l) => l.holderGone).map((l) => l.holder));
    const members = this.members.filter((m) => !gone.has(m));
    const owners = leases.map((l) => (l.alive && !l.holderGone ? l.holder : null));
    // A live lease of ours that this process no longer counts on (it presumed it lost): give it back.
    const stray = leases.filter((l) => owners[l.partition] === self && !this.owned.has(l.partition));
    for (const l of stray) owners[l.partition] = null;
    const plan = planPartitions({ partitions: TICK_PARTITIONS, members: [...members, self], owners });
    const { release, take } = partitionMoves(self, plan, owners);

    if (release.length > 0 || stray.length > 0) {
      const giveUp = [...release.map((partition) => ({ partition, epoch: this.owned.get(partition)! })), ...stray];
      for (const p of release) this.owned.delete(p);
      await this.leases.release(db, self, giveUp);
      if (release.length > 0) this.logger.log(`released partitions ${release.join(', ')} to rebalance over ${members.length} schedulers`);
    }
    if (take.length > 0) {
      const startedAt = performance.now();
      const wanted = take.map((p) => ({ partition: p, epoch: leases[p]!.epoch, gone: leases[p]!.holderGone }));
      // A transaction, so on the pool: the lease connection takes single statements only.
      const grants = await inTransaction(this.db, (tx) => this.leases.take(tx, self, wanted, ttl));
      if (grants.length > 0) {
        if (this.owned.size === 0) {
          this.validUntil = startedAt + ttl - 250;
          this.lastRenewal = startedAt;
        }
        for (const g of grants) this.owned.set(g.partition, g.epoch);
        const gone = wanted.filter((w) => w.gone && grants.some((g) => g.partition === w.partition));
        this.logger.log(
          `took partitions ${grants.map((g) => `${g.partition}@${g.epoch}`).join(', ')}` +
            (gone.length > 0 ? ` (${gone.length} from a scheduler whose session ended)` : ''),
        );
        const gaps = grants.filter((g) => g.outage !== null);
        if (gaps.length > 0) {
          const longest = Math.max(...gaps.map((g) => g.outage!.endedAt.getTime() - g.outage!.startedAt.getTime()));
          this.logger.warn(
            `partitions ${gaps.map((g) => g.partition).join(', ')} had no owner for up to ${(longest / 1000).toFixed(1)}s; catch-up policies apply to that gap`,
          );
        }
        this.tasks.wakeAll();
      }
    }
    return PROBE_MS;
  }

  private drop(partitions: readonly number[], why: string): void {
    const dropped = partitions.filter((p) => this.owned.delete(p));
    if (dropped.length > 0) this.logger.warn(`gave up partitions ${dropped.join(', ')}: ${why}`);
  }
}
