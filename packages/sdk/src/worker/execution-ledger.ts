/**
 * Everything a worker writes to or reads from Postgres, in one place, each exchange a call of the
 * worker protocol. The hot path is batched: claims, final verdicts and retries issued by many
 * concurrent jobs go to Postgres as one call each per batch (see MicroBatcher), each row still
 * fenced on its own: a verdict whose epoch moved on is left out of the answer. The rest
 * (heartbeats, drains, hand-backs, the worker registry) are single calls on the worker's pool.
 * The batches run on connections of their own, so a slow heartbeat never queues behind them.
 */
import type { DispatchItem, ReasonCode } from '@kairos/domain';
import type { DatabaseClock } from '@kairos/ledger/clock';
import { createPool, retryTransient, retryUnreachable, type Db } from '@kairos/ledger/postgres';
import {
  WorkerProtocol,
  type ClaimResult,
  type FinalVerdict,
  type LeaseRenewal,
  type RetryVerdict,
  type RunSnapshot,
  type WorkerRegistration,
} from './worker-protocol.js';
import type { CheckpointLedger } from './durable-functions.js';
import { MicroBatcher } from './micro-batcher.js';

const BATCHING = { maxBatch: 256, maxInFlight: 1 };

export class ExecutionLedger {
  private readonly protocol = new WorkerProtocol();
  /** Writes running behind the jobs that produced them (final verdicts); stopping waits for them. */
  private readonly behind = new Set<Promise<unknown>>();
  /** One connection for each batcher's statement in flight. */
  private readonly batchDb: Db;

  private readonly claims: MicroBatcher<string, ClaimResult>;
  private readonly finishes: MicroBatcher<{ runId: string; epoch: number; verdict: FinalVerdict }, boolean>;
  private readonly requeues: MicroBatcher<{ runId: string; epoch: number; retry: RetryVerdict }, Date | null>;
  /** Hands over the runs that places freed by this worker's verdicts released (see handOverReleasedWith). */
  private handOverReleased: (items: DispatchItem[]) => Promise<unknown> = async () => undefined;

  constructor(
    /** The worker's own pool, for the statements that are not batched. */
    private readonly db: Db,
    databaseUrl: string,
    /** This worker's identity as a lease owner. */
    readonly owner: string,
    private readonly leaseTtlMs: number,
    /** The database's clock as this worker reads it; its offset is reported with each heartbeat. */
    readonly clock: DatabaseClock,
  ) {
    this.batchDb = createPool({
      connectionString: databaseUrl,
      max: 3 * BATCHING.maxInFlight,
      applicationName: 'kairos-worker-batches',
    });
    // A batch locks many runs in one statement, so a scheduler's statement over several of the same
    // runs can make it a deadlock victim; it was rolled back whole and goes again, rather than drop
    // verdicts (their runs would be executed again once their leases expired).
    this.claims = new MicroBatcher((ids) => retryTransient(() => this.protocol.claimMany(this.batchDb, ids, this.owner, this.leaseTtlMs)), BATCHING);
    this.finishes = new MicroBatcher(async (items) => {
      const { written, released } = await this.verdictWrite(() => this.protocol.finishMany(this.batchDb, this.owner, items));
      // A hand-over that fails is the relay's (the dispatcher marks the runs undispatched) or the reconciler's.
      if (released.length > 0) this.track(this.handOverReleased(released).catch(() => undefined));
      return items.map((i) => written.has(i.runId));
    }, BATCHING);
    this.requeues = new MicroBatcher(async (items) => {
      const due = await this.verdictWrite(() => this.protocol.requeueMany(this.batchDb, this.owner, items));
      return items.map((i) => due.get(i.runId) ?? null);
    }, BATCHING);
  }

  /**
   * A batch of verdicts, written through a database outage as long as the runs' leases last: given
   * up, each run would be taken back by the reaper and executed again. Each verdict is fenced by
   * its epoch, so a batch sent twice (its first answer lost with the connection) writes once; the
   * second finds the verdict written and answers it as not written.
   */
  private verdictWrite<T>(work: () => Promise<T>): Promise<T> {
    return retryUnreachable(() => retryTransient(work), this.leaseTtlMs);
  }

  /** Keeps a write-behind promise until it settles, so stopping can wait for it. */
  track(write: Promise<unknown>): void {
    this.behind.add(write);
    void write.finally(() => this.behind.delete(write));
  }

  async settleWritesBehind(): Promise<void> {
    await Promise.allSettled([...this.behind]);
  }

  async close(): Promise<void> {
    await this.batchDb.end().catch(() => undefined);
  }

  /** The claimed run, or why it was not claimed: blocked by a running run of its schedule, or not claimable now. */
  claim(runId: string): Promise<ClaimResult> {
    return this.claims.submit(runId);
  }

  /** Claims of many runs at once (a batch job's), in as few statements as the batch size allows. */
  claimAll(runIds: readonly string[]): Promise<ClaimResult>[] {
    return this.claims.submitAll(runIds);
  }

  /** True when the verdict was written; false when the lease at `epoch` had been lost. */
  finish(runId: string, epoch: number, verdict: FinalVerdict): Promise<boolean> {
    return this.finishes.submit({ runId, epoch, verdict });
  }

  /** When the retried run is due again; null when the lease at `epoch` had been lost. */
  requeue(runId: string, epoch: number, retry: RetryVerdict): Promise<Date | null> {
    return this.requeues.submit({ runId, epoch, retry });
  }

  /** A run this worker cannot execute, handed back for another worker; when it is due again, or null when the lease was lost. */
  handBack(runId: string, epoch: number, backoff: { delayMs: number; maxDelayMs: number }, reasonCode: ReasonCode, reasonText: string): Promise<Date | null> {
    return this.protocol.handBack(this.db, { runId, epoch, owner: this.owner, ...backoff, reasonCode, reasonText });
  }

  /** A run handed back at a clean stop; false when the lease was already lost. */
  drain(runId: string, epoch: number): Promise<boolean> {
    return this.protocol.drain(this.db, runId, epoch, this.owner);
  }

  recordLeaseLost(runId: string, epoch: number, detail: Record<string, unknown>): Promise<void> {
    return this.protocol.recordLeaseLost(this.db, runId, epoch, this.owner, detail);
  }

  snapshot(runId: string): Promise<RunSnapshot | null> {
    return this.protocol.snapshot(this.db, runId);
  }

  cancelQueued(runId: string): Promise<boolean> {
    return this.protocol.cancelQueued(this.db, runId, this.owner);
  }

  releaseParked(scheduleId: string): Promise<DispatchItem[]> {
    return this.protocol.releaseParked(this.db, scheduleId, this.owner);
  }

  /** The steps of these graphs that their last verdicts made ready, to hand to the transport. */
  takeReadySteps(graphRunIds: readonly string[]): Promise<DispatchItem[]> {
    return this.protocol.takeReadySteps(this.db, graphRunIds);
  }

  renewLeases(held: readonly { id: string; epoch: number }[]): Promise<LeaseRenewal[]> {
    return this.protocol.renewLeases(this.db, this.owner, held, this.leaseTtlMs);
  }

  register(worker: Omit<WorkerRegistration, 'id' | 'clockOffsetMs'>): Promise<void> {
    return this.protocol.register(this.db, { ...worker, id: this.owner, clockOffsetMs: this.clock.lastReading?.offsetMs ?? null });
  }

  /** Says this worker stopped: the runs pinned to its version wait for another worker of it. */
  stopWorker(): Promise<void> {
    return this.protocol.stop(this.db, this.owner);
  }

  /** The heartbeat's refresh of this worker's registry row, with how far its host's clock is from the database's. */
  touch(): Promise<void> {
    return this.protocol.touch(this.db, this.owner, this.clock.lastReading?.offsetMs ?? null);
  }

  /** The durable functions' view of the ledger for run `runId` held at `epoch`. */
  checkpointLedger(): CheckpointLedger {
    const hold = (runId: string, epoch: number) => ({ runId, epoch, owner: this.owner });
    return {
      checkpoints: (runId) => this.protocol.checkpoints(this.db, runId),
      saveStep: (runId, epoch, name, result, startedAt) => this.protocol.saveStep(this.db, hold(runId, epoch), name, result, startedAt),
      sleepRun: (runId, epoch, name, wakeAt) => this.protocol.sleepRun(this.db, hold(runId, epoch), name, wakeAt),
      awaitSignal: (runId, epoch, name, timeoutAt) => this.protocol.awaitSignal(this.db, hold(runId, epoch), name, timeoutAt),
      awaitEvent: (runId, epoch, wait) => this.protocol.awaitEvent(this.db, hold(runId, epoch), wait),
      reportProgress: (runId, epoch, progressJson) => this.protocol.reportProgress(this.db, hold(runId, epoch), progressJson),
      now: () => this.clock.now(),
    };
  }

  /** When each of these runs is due, for those still queued. */
  availableAt(runIds: readonly string[]): Promise<Map<string, Date>> {
    return this.protocol.availableAt(this.db, runIds);
  }

  /** Refuses a server that does not serve this worker's protocol version. */
  checkProtocolVersion(): Promise<void> {
    return this.protocol.checkVersion(this.db);
  }

  /** What dispatching a retried or released run needs of the ledger. */
  /** How released runs reach the transport: the worker's dispatcher, made after this ledger. */
  handOverReleasedWith(dispatch: (items: DispatchItem[]) => Promise<unknown>): void {
    this.handOverReleased = dispatch;
  }

  readonly dispatchLedger = {
    consumerClockOffsets: (): Promise<Map<string, number>> => this.protocol.consumerClockOffsets(this.db),
    markUndispatched: (runIds: readonly string[]): Promise<void> => this.protocol.markUndispatched(this.db, runIds),
  };
}
