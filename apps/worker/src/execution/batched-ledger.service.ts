/**
 * The worker's writes on its hot path, batched: claims, final verdicts and retries issued by many
 * concurrent jobs go to Postgres as one statement each per batch (see MicroBatcher). Each row is
 * still fenced on its own: a verdict whose epoch moved on is left out of the answer.
 *
 * The batches run on connections of their own. Their statements are prepared once and, after a
 * few executions, Postgres keeps one generic plan per connection until the table is analyzed
 * again. Planned while `runs` is still small (a new install, the first seconds of a burst), that
 * plan reads the whole table, and goes on reading it as the table grows. These statements only
 * ever look runs up by primary key, so their connections rule sequential scans out.
 */
import { Inject, Injectable, type BeforeApplicationShutdown, type OnApplicationShutdown } from '@nestjs/common';
import type { KairosConfig } from '@kairos/config';
import { RunLeaseRepository, createPool, type ClaimResult, type Db, type FinalVerdict, type RetryVerdict } from '@kairos/ledger';
import { KAIROS_CONFIG, MicroBatcher } from '@kairos/runtime';
import { LeaseKeeper } from '../heartbeat/lease-keeper.service.js';

const BATCHING = { maxBatch: 256, maxInFlight: 1 };

@Injectable()
export class BatchedLedger implements BeforeApplicationShutdown, OnApplicationShutdown {
  /** Writes running behind the jobs that produced them (final verdicts); shutdown waits for them. */
  private readonly behind = new Set<Promise<unknown>>();
  /** One connection for each batcher's statement in flight. */
  private readonly db: Db;

  private readonly claims: MicroBatcher<string, ClaimResult>;
  private readonly finishes: MicroBatcher<{ runId: string; epoch: number; verdict: FinalVerdict }, boolean>;
  private readonly requeues: MicroBatcher<{ runId: string; epoch: number; retry: RetryVerdict }, Date | null>;

  constructor(
    @Inject(KAIROS_CONFIG) private readonly config: KairosConfig,
    private readonly runs: RunLeaseRepository,
    private readonly leases: LeaseKeeper,
  ) {
    this.db = createPool({
      connectionString: config.databaseUrl,
      max: 3 * BATCHING.maxInFlight,
      applicationName: 'kairos-worker-batches',
      settings: { enable_seqscan: 'off' },
    });
    this.claims = new MicroBatcher((ids) => this.runs.claimMany(this.db, ids, this.leases.owner, this.config.worker.runLeaseTtlMs), BATCHING);
    this.finishes = new MicroBatcher(async (items) => {
      const written = await this.runs.finishMany(this.db, this.leases.owner, items);
      return items.map((i) => written.has(i.runId));
    }, BATCHING);
    this.requeues = new MicroBatcher(async (items) => {
      const due = await this.runs.requeueMany(this.db, this.leases.owner, items);
      return items.map((i) => due.get(i.runId) ?? null);
    }, BATCHING);
  }

  /** Keeps a write-behind promise until it settles, so shutdown can wait for it. */
  track(write: Promise<unknown>): void {
    this.behind.add(write);
    void write.finally(() => this.behind.delete(write));
  }

  async beforeApplicationShutdown(): Promise<void> {
    await Promise.allSettled([...this.behind]);
  }

  /** Runs once every role has stopped, so no job can submit another batch. */
  async onApplicationShutdown(): Promise<void> {
    await this.db.end().catch(() => undefined);
  }

  /** The claimed run, or why it was not claimed: blocked by a running run of its schedule, or not claimable now. */
  claim(runId: string): Promise<ClaimResult> {
    return this.claims.submit(runId);
  }

  /** True when the verdict was written; false when the lease at `epoch` had been lost. */
  finish(runId: string, epoch: number, verdict: FinalVerdict): Promise<boolean> {
    return this.finishes.submit({ runId, epoch, verdict });
  }

  /** When the retried run is due again; null when the lease at `epoch` had been lost. */
  requeue(runId: string, epoch: number, retry: RetryVerdict): Promise<Date | null> {
    return this.requeues.submit({ runId, epoch, retry });
  }
}
