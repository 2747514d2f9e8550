/**
 * The worker's heartbeat: one batched renewal for every run this process holds, every third of the
 * lease TTL. The answer names the leases still held and any cancellation requested since; a run
 * missing from it has lost its lease, and its execution is aborted so it writes nothing.
 */
import { Inject, Injectable, Logger, type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import type { KairosConfig } from '@kairos/config';
import { RunLeaseRepository, type Db } from '@kairos/ledger';
import { DATABASE, KAIROS_CONFIG, Loop, processIdentity } from '@kairos/runtime';
import { RunAbort, RunAborted, type AbortKind } from '../execution/run-abort.js';

interface HeldLease {
  epoch: number;
  abort: RunAbort;
  /** The attempt is over and its verdict is being written; the lease is renewed but nothing is aborted. */
  settling: boolean;
}

@Injectable()
export class LeaseKeeper implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('LeaseKeeper');
  /** This process's identity as a lease owner; unique even across restarts on one host. */
  readonly owner = processIdentity().id;
  private readonly held = new Map<string, HeldLease>();
  private readonly loop: Loop;

  constructor(
    @Inject(DATABASE) private readonly db: Db,
    @Inject(KAIROS_CONFIG) private readonly config: KairosConfig,
    private readonly runs: RunLeaseRepository,
  ) {
    this.loop = new Loop({ name: 'lease renewal', logger: this.logger, pass: () => this.pass(), errorBackoffMs: 1_000 });
  }

  onApplicationBootstrap(): void {
    this.loop.start();
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.loop.stop();
  }

  /** Starts tracking a claimed run; the returned handle aborts when the lease is lost or cancellation arrives. */
  track(runId: string, epoch: number): RunAbort {
    const abort = new RunAbort();
    this.held.set(runId, { epoch, abort, settling: false });
    return abort;
  }

  /** The attempt has ended; keep the lease until its verdict is written, but stop acting on it. */
  settle(runId: string): void {
    const lease = this.held.get(runId);
    if (lease) lease.settling = true;
  }

  untrack(runId: string): void {
    this.held.delete(runId);
  }

  get heldCount(): number {
    return this.held.size;
  }

  abortAll(kind: AbortKind, message: string): void {
    for (const { abort } of this.held.values()) abort.abort(new RunAborted(kind, message));
  }

  private async pass(): Promise<number> {
    const ttl = this.config.worker.runLeaseTtlMs;
    const interval = Math.max(100, Math.floor(ttl / 3));
    const snapshot = [...this.held.entries()].map(([id, h]) => ({ id, epoch: h.epoch }));
    if (snapshot.length === 0) return interval;
    const renewed = await this.runs.renewLeases(this.db, this.owner, snapshot, ttl);
    const answer = new Map(renewed.map((r) => [r.id, r]));
    for (const { id, epoch } of snapshot) {
      const lease = this.held.get(id);
      // A settling lease that is no longer renewed was most likely just ended by its own verdict.
      if (!lease || lease.epoch !== epoch || lease.settling) continue;
      const renewal = answer.get(id);
      if (!renewal) {
        this.logger.warn(`lost the lease of run ${id} (epoch ${epoch}); stopping its execution`);
        lease.abort.abort(new RunAborted('lease_lost', `the lease of run ${id} at epoch ${epoch} was taken over`));
      } else if (renewal.cancelRequested) {
        lease.abort.abort(new RunAborted('cancelled', 'cancellation was requested', renewal.cancelRequestedBy));
      }
    }
    return interval;
  }
}
