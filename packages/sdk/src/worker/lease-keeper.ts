/**
 * The worker's heartbeat: one batched renewal for every run this process holds, every third of the
 * lease TTL, and a refresh of the worker's registry row. The answer names the leases still held
 * and any cancellation requested since; a run missing from it has lost its lease, and its
 * execution is aborted so it writes nothing.
 */
import { Loop, type LoopLogger } from '@kairos/process/loop';
import type { ExecutionLedger } from './execution-ledger.js';
import { RunAbort, RunAborted, type AbortKind } from './run-abort.js';

interface HeldLease {
  epoch: number;
  abort: RunAbort;
  /** The attempt is over and its verdict is being written; the lease is renewed but nothing is aborted. */
  settling: boolean;
}

export class LeaseKeeper {
  private readonly held = new Map<string, HeldLease>();
  private readonly loop: Loop;

  constructor(
    private readonly ledger: ExecutionLedger,
    private readonly leaseTtlMs: number,
    private readonly logger: LoopLogger,
  ) {
    this.loop = new Loop({ name: 'lease renewal', logger, pass: () => this.pass(), errorBackoffMs: 1_000 });
  }

  start(): void {
    this.loop.start();
  }

  stop(): Promise<void> {
    return this.loop.stop();
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
    const interval = Math.max(100, Math.floor(this.leaseTtlMs / 3));
    await this.ledger.touch();
    const snapshot = [...this.held.entries()].map(([id, h]) => ({ id, epoch: h.epoch }));
    if (snapshot.length === 0) return interval;
    const renewed = await this.ledger.renewLeases(snapshot);
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
