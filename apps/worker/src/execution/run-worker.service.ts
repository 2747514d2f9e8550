/**
 * The BullMQ worker of the runs queue: started once the application is up, closed on shutdown.
 * Shutdown stops taking jobs, lets running executions finish for the grace period, then aborts
 * the rest, which hand their runs back (drained) so another worker picks them up at once.
 */
import { Inject, Injectable, Logger, type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import { Worker } from 'bullmq';
import type { KairosConfig } from '@kairos/config';
import { RUNS_QUEUE, consumerConnectionOptions, type JobPayloads } from '@kairos/queue';
import { KAIROS_CONFIG } from '@kairos/runtime';
import { LeaseKeeper } from '../heartbeat/lease-keeper.service.js';
import { RunExecutor } from './run-executor.service.js';

/** Stalled jobs always go back to the queue: the ledger's crash budget, not BullMQ, decides when to give up. */
const MAX_STALLED_COUNT = 1_000_000;

@Injectable()
export class RunWorker implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('RunWorker');
  private worker: Worker<JobPayloads['run'], unknown, 'run'> | null = null;

  constructor(
    @Inject(KAIROS_CONFIG) private readonly config: KairosConfig,
    private readonly executor: RunExecutor,
    private readonly leases: LeaseKeeper,
  ) {}

  onApplicationBootstrap(): void {
    this.worker = new Worker<JobPayloads['run'], unknown, 'run'>(RUNS_QUEUE, (job, token) => this.executor.process(job, token!), {
      connection: consumerConnectionOptions(this.config.redisUrl),
      prefix: this.config.queuePrefix,
      concurrency: this.config.worker.concurrency,
      maxStalledCount: MAX_STALLED_COUNT,
      // The transport's lock follows the ledger's lease: a worker that froze or died loses its job
      // to another worker on about the same schedule as the reaper takes the run back.
      lockDuration: this.config.worker.runLeaseTtlMs,
      stalledInterval: Math.max(1_000, Math.floor(this.config.worker.runLeaseTtlMs / 2)),
    });
    this.worker.on('error', (error) => this.logger.warn(`queue connection: ${error.message}`));
    this.worker.on('failed', (job, error) => this.logger.error(`job ${job?.id} failed: ${error.message}`));
  }

  async beforeApplicationShutdown(): Promise<void> {
    const worker = this.worker;
    if (!worker) return;
    const closing = worker.close();
    const grace = new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), this.config.shutdownGraceMs).unref());
    if ((await Promise.race([closing, grace])) === 'timeout' && this.leases.heldCount > 0) {
      this.logger.warn(`handing back ${this.leases.heldCount} runs still executing after the ${this.config.shutdownGraceMs} ms grace period`);
      this.leases.abortAll('shutdown', 'the worker is shutting down');
    }
    await closing;
  }
}
