/**
 * Executing one run for one BullMQ job: claim it in Postgres (queued → running, epoch + 1), run the
 * target under the run's timeout while the lease keeper renews the lease, and write the verdict
 * fenced by the epoch. A verdict refused for a stale epoch changes nothing and is recorded as a
 * lease loss. A run whose target this worker has no code for is handed back for a worker that
 * has. The BullMQ job is kept (delayed) whenever the run must run again, so a retry never depends
 * on re-adding a job id Redis may still hold.
 */
import { SpanKind, SpanStatusCode, context, trace, type Context, type Span } from '@opentelemetry/api';
import { DelayedError, type Job } from 'bullmq';
import { decideVerdict, isUuid, parseTraceparent, type AttemptOutcome, type ReasonCode } from '@kairos/domain';
import type { ClaimedRun, ClaimResult } from './worker-protocol.js';
import type { JobPayloads } from '@kairos/queue';
import type { RunDispatcher } from '@kairos/process/run-dispatcher';
import { withLogContext } from '@kairos/telemetry/log-context';
import { contextFromTrace, spanFailed, tracer } from '@kairos/telemetry/trace-context';
import type { ExecutionLedger } from './execution-ledger.js';
import type { LeaseKeeper } from './lease-keeper.js';
import { MicroBatcher } from './micro-batcher.js';
import { RunParked } from './durable-functions.js';
import { RunAborted } from './run-abort.js';
import type { TargetRunner } from './target-runner.js';

/**
 * A job further ahead of its instant than the margin by this much is not waited for: it was not
 * handed over early but made due by someone (a job promoted by hand, a margin changed between
 * producer and worker), and the claim decides from the ledger what becomes of it.
 */
const EARLY_SLACK_MS = 100;

/** How a worker starts runs handed to it ahead of their instant (see KAIROS_START_MARGIN). */
export interface PreciseStarts {
  /** How long before its instant a producer hands a run over. */
  marginMs: number;
  /** Runs that may wait for their instant at once, each holding a slot: past it, a job waits in the transport. */
  maxWaiting: number;
}

/** How long a job waits before trying again when its run is blocked by another run of the schedule. */
const BLOCKED_RETRY_MS = 1_000;
/** How long a run handed back for want of its handler waits before a worker tries it again: 2 s, doubling with each hand-back, at most a minute. */
const HAND_BACK_BACKOFF = { delayMs: 2_000, maxDelayMs: 60_000 };

export type RunJob = Job<JobPayloads['run'], unknown, 'run'>;

/** What a worker reports as it executes runs; the built-in worker feeds its Prometheus metrics from these. */
export interface WorkerObserver {
  /** Seconds from a slot to its first claim. */
  lateness?(seconds: number): void;
  /** `state` is `retry` for a requeued attempt. */
  verdict?(state: string, reasonCode: ReasonCode): void;
  leaseLost?(): void;
}

export interface WorkerLogger {
  log(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

export class RunExecutor {
  /** Runs taken ahead of their instant, waiting for it. */
  private waiting = 0;

  /**
   * Hands over the steps that verdicts made ready, one call and one dispatch for the verdicts of
   * many graphs at once, as claims and verdicts are batched.
   */
  private readonly readySteps = new MicroBatcher<string, void>(
    async (graphRunIds) => {
      await this.dispatcher.dispatch(await this.ledger.takeReadySteps([...new Set(graphRunIds)]));
      return graphRunIds.map(() => undefined);
    },
    { maxBatch: 256, maxInFlight: 1 },
  );

  constructor(
    private readonly ledger: ExecutionLedger,
    private readonly leases: LeaseKeeper,
    private readonly targets: TargetRunner,
    private readonly dispatcher: RunDispatcher,
    private readonly observer: WorkerObserver,
    private readonly logger: WorkerLogger,
    /** How long past its lease expiry the reaper waits before taking a run back. */
    private readonly reaperSkewMs: number,
    private readonly starts: PreciseStarts,
  ) {}

  async process(job: RunJob, token: string): Promise<void> {
    const { runId } = job.data;
    if (typeof runId !== 'string' || !isUuid(runId)) {
      this.logger.warn(`job ${job.id} names run ${JSON.stringify(runId)}, which is not a run id; dropping the job`);
      return;
    }
    if (job.data.dueAt !== undefined) await this.untilDue(job, token, job.data.dueAt);
    const claimStartedAt = Date.now();
    // The attempt's start on the database's clock, read before the claim so it is not after the
    // claim's own instant: a wait for an event looks back to it.
    const attemptStartedAt = new Date(this.ledger.clock.now());
    const claim = await this.ledger.claim(runId);
    const claimed = claimSpan(job, claim, claimStartedAt);
    if (claim.kind === 'blocked') return this.delay(job, token, Date.now() + BLOCKED_RETRY_MS);
    if (claim.kind === 'unclaimable') return this.notClaimed(job, token, runId);
    const { run } = claim;
    const fields = { runId: run.id, scheduleId: run.scheduleId, namespace: run.namespaceId, epoch: run.leaseEpoch };
    return withLogContext(fields, () => this.execute(job, token, run, claimed, attemptStartedAt));
  }

  /**
   * Runs a claimed run's target and records its verdict; everything logged on the way names the
   * run. The target runs in a `kairos.execute` span, active while it runs: an HTTP delivery carries
   * it as its `traceparent`, a handler's own spans nest under it.
   */
  private async execute(job: RunJob, token: string, run: ClaimedRun, claimed: Context, startedAt: Date): Promise<void> {
    if (!this.targets.serves(run.target)) return this.handBack(job, token, run);
    // Fire lateness is a slot's first claim; later attempts wait out a backoff on purpose, later steps their upstream steps.
    if (run.scheduleId !== null && run.attempt === 1 && run.stepName === null) this.observer.lateness?.((this.ledger.clock.now() - run.scheduledFor.getTime()) / 1000);

    const abort = this.leases.track(run.id, run.leaseEpoch);
    const timer = setTimeout(
      () => abort.abort(new RunAborted('timeout', `the run exceeded its timeout of ${run.timeoutMs} ms`)),
      run.timeoutMs,
    );
    const span = tracer.startSpan(
      'kairos.execute',
      {
        attributes: {
          'kairos.run.id': run.id,
          'kairos.run.attempt': run.attempt,
          'kairos.target.type': run.target.type,
          ...(run.target.type === 'handler' && { 'kairos.target.handler': run.target.name }),
          ...(run.stepName !== null && { 'kairos.step.name': run.stepName, 'kairos.step.graph': run.graphRunId! }),
        },
      },
      claimed,
    );
    const execution = trace.setSpan(claimed, span);
    let outcome: AttemptOutcome;
    try {
      outcome = await context.with(execution, () => this.targets.execute(run, abort, startedAt));
      span.setAttribute('kairos.outcome', outcome.kind);
      if (outcome.kind === 'failed') span.setStatus({ code: SpanStatusCode.ERROR, message: outcome.message });
    } catch (error) {
      if (error instanceof RunParked) {
        // The run parked (ctx.sleep, ctx.waitForSignal, ctx.waitForEvent): no verdict; its job waits
        // for the wake instant, or ends when only a signal or an event can wake it (the API then
        // hands over a new one).
        this.leases.untrack(run.id);
        span.setAttribute('kairos.run.parked', error.state);
        if (error.wakeAt) return this.delay(job, token, error.wakeAt.getTime());
        return;
      }
      if (!(error instanceof RunAborted)) {
        this.leases.untrack(run.id);
        spanFailed(span, error);
        throw error;
      }
      span.setAttribute('kairos.run.aborted', error.kind);
      if (error.kind === 'lease_lost' || error.kind === 'shutdown') {
        this.leases.untrack(run.id);
        if (error.kind === 'lease_lost') {
          this.observer.leaseLost?.();
          await this.ledger.recordLeaseLost(run.id, run.leaseEpoch, { stage: 'execution', message: error.message });
          return;
        }
        if (await this.ledger.drain(run.id, run.leaseEpoch)) return this.delay(job, token, Date.now());
        return;
      }
      outcome =
        error.kind === 'timeout'
          ? { kind: 'failed', retryable: true, reasonCode: 'TIMEOUT', message: error.message }
          : { kind: 'cancelled', reasonCode: error.by === 'overlap' ? 'REPLACED_BY_OVERLAP' : 'CANCELLED_BY_USER' };
    } finally {
      clearTimeout(timer);
      span.end();
    }
    await this.record(job, token, run, outcome, execution);
  }

  /**
   * Writes the verdict of an attempt, fenced by the epoch it was claimed at. A retry is written
   * before the job is delayed. A final verdict is written behind: the job completes at once and
   * the worker takes its next one while the verdict joins the next batch. The lease stays held and
   * renewed until the verdict is in; if the process dies first, the lease expires and the reaper
   * gives the run to another worker, as for any crash mid-run.
   */
  private async record(job: RunJob, token: string, run: ClaimedRun, outcome: AttemptOutcome, execution: Context): Promise<void> {
    const verdict = decideVerdict(outcome, run.attempt, run.retry, Math.random());
    this.leases.settle(run.id);
    const state = verdict.kind === 'retry' ? 'retry' : verdict.state;
    const span = tracer.startSpan('kairos.verdict', { attributes: { 'kairos.run.id': run.id, 'kairos.verdict.state': state, 'kairos.reason_code': verdict.reasonCode } }, execution);
    if (verdict.kind === 'retry') {
      const availableAt = await verdictWritten(
        span,
        this.ledger.requeue(run.id, run.leaseEpoch, verdict).finally(() => this.leases.untrack(run.id)),
        (due) => due !== null,
      );
      if (availableAt === null) return this.leaseLost(run, verdict.reasonCode);
      this.observer.verdict?.('retry', verdict.reasonCode);
      return this.delay(job, token, availableAt.getTime());
    }
    this.ledger.track(
      verdictWritten(
        span,
        this.ledger.finish(run.id, run.leaseEpoch, verdict).finally(() => this.leases.untrack(run.id)),
        (written) => written,
      )
        .then(async (written) => {
          if (!written) return this.leaseLost(run, verdict.reasonCode);
          this.observer.verdict?.(verdict.state, verdict.reasonCode);
          // The verdict of a step may have made the next ones ready: hand them over now rather than wait for the relay.
          if (run.graphRunId !== null) await this.readySteps.submit(run.graphRunId);
          if (run.scheduleId !== null && run.mayReleaseParked) {
            await this.dispatcher.dispatch(await this.ledger.releaseParked(run.scheduleId));
          }
        })
        .catch((error: Error) => this.logger.error(`could not record the verdict of run ${run.id}: ${error.message}; its lease will expire and the run will be retried`)),
    );
  }

  /** No code here for the run's target (a deploy skew): give it back, due again a little later, for a worker that has. */
  private async handBack(job: RunJob, token: string, run: ClaimedRun): Promise<void> {
    const what = run.target.type === 'http' ? 'HTTP targets' : `handler "${run.target.name}"`;
    const reason = `worker ${this.ledger.owner} has no code for ${what}; handed back for a worker that has`;
    this.logger.warn(`run ${run.id}: ${reason}`);
    const availableAt = await this.ledger.handBack(run.id, run.leaseEpoch, HAND_BACK_BACKOFF, 'HANDLER_NOT_REGISTERED', reason);
    if (availableAt === null) return;
    return this.delay(job, token, availableAt.getTime());
  }

  private async leaseLost(run: ClaimedRun, attempted: string): Promise<void> {
    this.logger.warn(`verdict for run ${run.id} refused: the lease at epoch ${run.leaseEpoch} was lost`);
    this.observer.leaseLost?.();
    await this.ledger.recordLeaseLost(run.id, run.leaseEpoch, { stage: 'verdict', attempted });
  }

  /** The claim took nothing: decide from the run's state what becomes of the job. */
  private async notClaimed(job: RunJob, token: string, runId: string): Promise<void> {
    const snapshot = await this.ledger.snapshot(runId);
    if (!snapshot) {
      this.logger.warn(`job ${job.id} names run ${runId}, which does not exist; dropping the job`);
      return;
    }
    switch (snapshot.state) {
      case 'running': {
        // Another worker holds it. Come back when its lease could have been reaped, in case it died.
        const wait = (snapshot.leaseExpiresInMs ?? 0) + this.reaperSkewMs + BLOCKED_RETRY_MS;
        return this.delay(job, token, Date.now() + Math.max(wait, BLOCKED_RETRY_MS));
      }
      case 'queued':
      case 'sleeping':
      case 'waiting':
        if (snapshot.cancelRequested) {
          await this.ledger.cancelQueued(runId);
          return;
        }
        // Parked behind another run, or waiting for a signal or an event: it gets a fresh job when it is released, signalled or sent its event.
        if (snapshot.dueInMs === null) return;
        // Early (a host whose clock is ahead promotes delayed jobs early): back the margin before
        // the instant, by this host's clock, which promotes it, to be started at the instant.
        return this.delay(job, token, Date.now() + Math.max(snapshot.dueInMs - this.earlyBy(job), 50));
      default:
        return;
    }
  }

  /**
   * Waits for the instant of a job handed over ahead of it, on this worker's reading of the
   * database's clock (corrected for this host's offset, as leases are), so that the claim, and the
   * handler after it, start at the instant whatever the transport's timer precision. The run stays
   * queued meanwhile: a cancellation, a pause or a deletion before the instant makes the claim
   * refuse it. Past `maxWaiting` runs waiting at once (a herd), the job waits in the transport
   * instead. A job further ahead than the margin is claimed at once (see EARLY_SLACK_MS).
   */
  private async untilDue(job: RunJob, token: string, dueAt: number): Promise<void> {
    const clock = this.ledger.clock;
    const leftMs = dueAt - clock.now();
    if (leftMs <= 0 || leftMs > this.starts.marginMs + EARLY_SLACK_MS) return;
    if (this.waiting >= this.starts.maxWaiting) return this.delay(job, token, Date.now() + leftMs);
    this.waiting += 1;
    try {
      for (let left = leftMs; left > 0; left = dueAt - clock.now()) await new Promise((resolve) => setTimeout(resolve, left));
    } finally {
      this.waiting -= 1;
    }
  }

  /** How far ahead of its run's instant a job may come back: the margin, when its instant is still to come and the worker will wait for it. */
  private earlyBy(job: RunJob): number {
    const dueAt = job.data.dueAt;
    return dueAt !== undefined && dueAt > this.ledger.clock.now() ? this.starts.marginMs : 0;
  }

  /** Keeps the job for later: BullMQ moves it to the delayed set and redelivers it at `timestamp`. */
  private async delay(job: RunJob, token: string, timestamp: number): Promise<never> {
    await job.moveToDelayed(timestamp, token);
    throw new DelayedError();
  }
}

/**
 * The `kairos.claim` span, started when the claim was asked for, and the context the run's other
 * spans continue. Its parent is the span that dispatched the run when the job carries one of the
 * run's own trace, else the span that created the run (its tick or API request), recorded with
 * the run so a job that the relay or reconciler re-sent, or a release, still joins the right trace.
 */
function claimSpan(job: RunJob, claim: ClaimResult, startTime: number): Context {
  const dispatched = job.data.traceparent ?? null;
  const recorded = claim.kind === 'claimed' ? claim.run : null;
  const dispatchedIds = parseTraceparent(dispatched);
  const sameTrace = recorded !== null && dispatchedIds !== null && dispatchedIds.traceId === parseTraceparent(recorded.traceParent)?.traceId;
  const parent = contextFromTrace(
    recorded === null ? { traceParent: dispatched, traceState: null } : { traceParent: sameTrace ? dispatched : recorded.traceParent, traceState: recorded.traceState },
  );
  const span = tracer.startSpan(
    'kairos.claim',
    {
      kind: SpanKind.CONSUMER,
      startTime,
      attributes: {
        'kairos.run.id': job.data.runId,
        'kairos.claim.outcome': claim.kind,
        ...(recorded && { 'kairos.run.attempt': recorded.attempt, 'kairos.lease.epoch': recorded.leaseEpoch }),
      },
    },
    parent,
  );
  span.end();
  return trace.setSpan(parent, span);
}

/** The write of a verdict, in its span: `written` tells from the answer whether the fenced write took. */
async function verdictWritten<T>(span: Span, write: Promise<T>, written: (answer: T) => boolean): Promise<T> {
  try {
    const answer = await write;
    span.setAttribute('kairos.verdict.written', written(answer));
    return answer;
  } catch (error) {
    spanFailed(span, error);
    throw error;
  } finally {
    span.end();
  }
}
