/**
 * Executing one run for one BullMQ job: claim it in Postgres (queued → running, epoch + 1), run the
 * target under the run's timeout while the lease keeper renews the lease, and write the verdict
 * fenced by the epoch. A verdict refused for a stale epoch changes nothing and is recorded as a
 * lease loss. The BullMQ job is kept (delayed) whenever the run must run again, so a retry never
 * depends on re-adding a job id Redis may still hold.
 */
import { Inject, Injectable, Logger } from '@nestjs/common';
import { DelayedError, type Job } from 'bullmq';
import type { KairosConfig } from '@kairos/config';
import { decideVerdict, type AttemptOutcome } from '@kairos/domain';
import { RunLeaseRepository, RunRecoveryRepository, type ClaimedRun, type Db } from '@kairos/ledger';
import { BatchedLedger } from './batched-ledger.service.js';
import { RunDispatcher, type JobPayloads } from '@kairos/queue';
import { DATABASE, KAIROS_CONFIG, KairosMetrics, withLogContext } from '@kairos/runtime';
import { LeaseKeeper } from '../heartbeat/lease-keeper.service.js';
import { TargetRunner } from '../targets/target-runner.js';
import { RunAborted } from './run-abort.js';

/** How long a job waits before trying again when its run is blocked by another run of the schedule. */
const BLOCKED_RETRY_MS = 1_000;

export type RunJob = Job<JobPayloads['run'], unknown, 'run'>;

@Injectable()
export class RunExecutor {
  private readonly logger = new Logger('RunExecutor');

  constructor(
    @Inject(DATABASE) private readonly db: Db,
    @Inject(KAIROS_CONFIG) private readonly config: KairosConfig,
    private readonly runs: RunLeaseRepository,
    private readonly recovery: RunRecoveryRepository,
    private readonly leases: LeaseKeeper,
    private readonly targets: TargetRunner,
    private readonly dispatcher: RunDispatcher,
    private readonly ledger: BatchedLedger,
    private readonly metrics: KairosMetrics,
  ) {}

  async process(job: RunJob, token: string): Promise<void> {
    const { runId } = job.data;
    const claim = await this.ledger.claim(runId);
    if (claim.kind === 'blocked') return this.delay(job, token, Date.now() + BLOCKED_RETRY_MS);
    if (claim.kind === 'unclaimable') return this.notClaimed(job, token, runId);
    const { run } = claim;
    const fields = { runId: run.id, scheduleId: run.scheduleId, namespace: run.namespaceId, epoch: run.leaseEpoch };
    return withLogContext(fields, () => this.execute(job, token, run));
  }

  /** Runs a claimed run's target and records its verdict; everything logged on the way names the run. */
  private async execute(job: RunJob, token: string, run: ClaimedRun): Promise<void> {
    // Fire lateness is a slot's first claim; later attempts wait out a backoff on purpose.
    if (run.scheduleId !== null && run.attempt === 1) this.metrics.lateness((Date.now() - run.scheduledFor.getTime()) / 1000);

    const abort = this.leases.track(run.id, run.leaseEpoch);
    const timer = setTimeout(
      () => abort.abort(new RunAborted('timeout', `the run exceeded its timeout of ${run.timeoutMs} ms`)),
      run.timeoutMs,
    );
    let outcome: AttemptOutcome;
    try {
      outcome = await this.targets.execute(run, abort);
    } catch (error) {
      if (!(error instanceof RunAborted)) {
        this.leases.untrack(run.id);
        throw error;
      }
      if (error.kind === 'lease_lost' || error.kind === 'shutdown') {
        this.leases.untrack(run.id);
        if (error.kind === 'lease_lost') {
          this.metrics.leaseLost();
          await this.runs.recordLeaseLost(this.db, run.id, run.leaseEpoch, this.leases.owner, { stage: 'execution', message: error.message });
          return;
        }
        if (await this.runs.drain(this.db, run.id, run.leaseEpoch, this.leases.owner)) return this.delay(job, token, Date.now());
        return;
      }
      outcome =
        error.kind === 'timeout'
          ? { kind: 'failed', retryable: true, reasonCode: 'TIMEOUT', message: error.message }
          : { kind: 'cancelled', reasonCode: error.by === 'overlap' ? 'REPLACED_BY_OVERLAP' : 'CANCELLED_BY_USER' };
    } finally {
      clearTimeout(timer);
    }
    await this.record(job, token, run, outcome);
  }

  /**
   * Writes the verdict of an attempt, fenced by the epoch it was claimed at. A retry is written
   * before the job is delayed. A final verdict is written behind: the job completes at once and
   * the worker takes its next one while the verdict joins the next batch. The lease stays held and
   * renewed until the verdict is in; if the process dies first, the lease expires and the reaper
   * gives the run to another worker, as for any crash mid-run.
   */
  private async record(job: RunJob, token: string, run: ClaimedRun, outcome: AttemptOutcome): Promise<void> {
    const verdict = decideVerdict(outcome, run.attempt, run.retry, Math.random());
    this.leases.settle(run.id);
    if (verdict.kind === 'retry') {
      const availableAt = await this.ledger.requeue(run.id, run.leaseEpoch, verdict).finally(() => this.leases.untrack(run.id));
      if (availableAt === null) return this.leaseLost(run, verdict.reasonCode);
      this.metrics.verdict('retry', verdict.reasonCode);
      return this.delay(job, token, availableAt.getTime());
    }
    this.ledger.track(
      this.ledger
        .finish(run.id, run.leaseEpoch, verdict)
        .finally(() => this.leases.untrack(run.id))
        .then(async (written) => {
          if (!written) return this.leaseLost(run, verdict.reasonCode);
          this.metrics.verdict(verdict.state, verdict.reasonCode);
          if (run.scheduleId !== null && run.mayReleaseParked) {
            await this.dispatcher.dispatch(await this.recovery.releaseParked(this.db, run.scheduleId, this.leases.owner));
          }
        })
        .catch((error: Error) => this.logger.error(`could not record the verdict of run ${run.id}: ${error.message}; its lease will expire and the run will be retried`)),
    );
  }

  private async leaseLost(run: ClaimedRun, attempted: string): Promise<void> {
    this.logger.warn(`verdict for run ${run.id} refused: the lease at epoch ${run.leaseEpoch} was lost`);
    this.metrics.leaseLost();
    await this.runs.recordLeaseLost(this.db, run.id, run.leaseEpoch, this.leases.owner, { stage: 'verdict', attempted });
  }

  /** The claim took nothing: decide from the run's state what becomes of the job. */
  private async notClaimed(job: RunJob, token: string, runId: string): Promise<void> {
    const snapshot = await this.runs.snapshot(this.db, runId);
    if (!snapshot) {
      this.logger.warn(`job ${job.id} names run ${runId}, which does not exist; dropping the job`);
      return;
    }
    switch (snapshot.state) {
      case 'running': {
        // Another worker holds it. Come back when its lease could have been reaped, in case it died.
        const wait = (snapshot.leaseExpiresInMs ?? 0) + this.config.scheduler.reaperSkewMs + BLOCKED_RETRY_MS;
        return this.delay(job, token, Date.now() + Math.max(wait, BLOCKED_RETRY_MS));
      }
      case 'queued':
        if (snapshot.cancelRequested) {
          await this.runs.cancelQueued(this.db, runId, this.leases.owner);
          return;
        }
        // Parked behind another run: it gets a fresh job when it is released.
        if (snapshot.dueInMs === null) return;
        return this.delay(job, token, Date.now() + Math.max(snapshot.dueInMs, 50));
      default:
        return;
    }
  }

  /** Keeps the job for later: BullMQ moves it to the delayed set and redelivers it at `timestamp`. */
  private async delay(job: RunJob, token: string, timestamp: number): Promise<never> {
    await job.moveToDelayed(timestamp, token);
    throw new DelayedError();
  }
}
