/**
 * Executing the run of a BullMQ job, or each run of a batch job: claim it in Postgres (queued →
 * running, epoch + 1), run the target under the run's timeout while the lease keeper renews the
 * lease, and write the verdict fenced by the epoch. A verdict refused for a stale epoch changes
 * nothing and is recorded as a lease loss. A run whose target this worker has no code for is
 * handed back for a worker that has. A run's own job is kept (delayed) whenever the run must run
 * again, so a retry never depends on re-adding a job id Redis may still hold; a run of a batch
 * goes on as a job of its own instead, while the batch completes.
 */
import { SpanKind, SpanStatusCode, context, trace, type Attributes, type Context, type Span } from '@opentelemetry/api';
import { DelayedError, type Job } from 'bullmq';
import { decideVerdict, isUuid, parseTraceparent, type AttemptOutcome, type ReasonCode, type Verdict } from '@kairos/domain';
import type { ClaimedRun, ClaimResult } from './worker-protocol.js';
import type { JobPayloads, RunsJobData, RunsJobName } from '@kairos/queue';
import type { RunDispatcher } from '@kairos/process/run-dispatcher';
import { withLogContext } from '@kairos/telemetry/log-context';
import { contextFromTrace, spanFailed, tracer } from '@kairos/telemetry/trace-context';
import type { ExecutionLedger } from './execution-ledger.js';
import type { LeaseKeeper } from './lease-keeper.js';
import { MicroBatcher } from './micro-batcher.js';
import { Permits } from './permits.js';
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

export type RunJob = Job<RunsJobData, unknown, RunsJobName>;

/** How often, at most, a batch job reports its progress (runs done of runs) for Bull Board. */
const BATCH_PROGRESS_EVERY_MS = 1_000;

/** The run a job hands over: its own job's, or one of a batch job's. */
interface Carried {
  runId: string;
  /** The job that carries it, for what is logged. */
  jobId: string | undefined;
  traceparent?: string | undefined;
  dueAt?: number | undefined;
}

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
  /** Runs of batch jobs executing behind their jobs. */
  private readonly executing = new Set<Promise<void>>();
  /** Places for runs executing at once (the worker's concurrency), shared by plain jobs and the runs of batch jobs. */
  private readonly permits: Permits;

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
    concurrency: number,
  ) {
    this.permits = new Permits(concurrency);
  }

  /**
   * Executes the run a job carries; a batch job's runs are claimed here and executed behind it
   * (see processBatch).
   */
  async process(job: RunJob, token: string): Promise<void> {
    if ('runs' in job.data) return this.processBatch(job, job.data);
    const { runId, dueAt, traceparent } = job.data;
    if (typeof runId !== 'string' || !isUuid(runId)) {
      this.logger.warn(`job ${job.id} names run ${JSON.stringify(runId)}, which is not a run id; dropping the job`);
      return;
    }
    const carried: Carried = { runId, jobId: job.id, traceparent, dueAt };
    let later = dueAt === undefined ? null : await this.untilDue(dueAt);
    if (later === null) {
      // A worker that stops gives no place to a run still waiting for one: back to the transport, due now, for another worker.
      if ((await this.permits.take(1)) === 0) later = Date.now();
      else {
        try {
          const claimStartedAt = Date.now();
          // The attempt's start on the database's clock, read before the claim so it is not after the
          // claim's own instant: a wait for an event looks back to it.
          const attemptStartedAt = new Date(this.ledger.clock.now());
          later = await this.afterClaim(carried, await this.ledger.claim(runId), claimStartedAt, attemptStartedAt);
        } finally {
          this.permits.release(1);
        }
      }
    }
    if (later !== null) await this.delay(job, token, later);
  }

  /**
   * A batch job (dispatch-batches.ts): waits for the runs' common instant, then claims as many of
   * them at once as the worker has places free, in one statement, until every run is claimed. The
   * job completes then, and its runs execute behind it, each as if it came alone, its lease
   * guarding it as a final verdict written behind is guarded: a worker that dies leaves its runs
   * to the reaper. A job held until the last of its runs ended would keep the worker from fetching
   * (see Permits) while one slow run finished. A run that must run again later (a retry, blocked,
   * parked with a wake instant, handed back, early) goes on as a job of its own; so do those whose
   * claim failed, and those not yet claimed when the worker stops. A run another worker or the
   * reaper took is refused by its claim, never run twice.
   */
  private async processBatch(job: RunJob, batch: JobPayloads['batch']): Promise<void> {
    const runs = batch.runs.filter((runId) => typeof runId === 'string' && isUuid(runId));
    if (runs.length < batch.runs.length) this.logger.warn(`batch job ${job.id} names ${batch.runs.length - runs.length} runs that are not run ids; skipping them`);
    if (batch.dueAt !== undefined) await this.waitFor(batch.dueAt);
    const progress = batchProgress(job, runs.length);
    const handedOn: Promise<void>[] = [];
    let next = 0;
    while (next < runs.length) {
      const taken = await this.permits.take(runs.length - next);
      if (taken === 0) break;
      const chunk = runs.slice(next, next + taken);
      next += taken;
      const claimStartedAt = Date.now();
      const attemptStartedAt = new Date(this.ledger.clock.now());
      const claims = await Promise.allSettled(this.ledger.claimAll(chunk));
      for (const [i, runId] of chunk.entries()) {
        const claim = claims[i]!;
        if (claim.status === 'rejected') {
          this.permits.release(1);
          handedOn.push(this.dispatcher.later(batch.queue, runId, Date.now() + BLOCKED_RETRY_MS));
          continue;
        }
        this.behind(this.runOfBatch({ runId, jobId: job.id, traceparent: batch.traceparent }, batch.queue, claim.value, claimStartedAt, attemptStartedAt));
      }
      progress(chunk.length);
    }
    // Not taken before the worker began to stop: due now, for another worker.
    handedOn.push(...runs.slice(next).map((runId) => this.dispatcher.later(batch.queue, runId, Date.now())));
    // Should a hand-over fail, the job fails and BullMQ tries it again: the runs claimed meanwhile are refused by their claims.
    await Promise.all(handedOn);
    await this.dispatcher.batchDone(batch.queue, batch.runs).catch(() => undefined);
  }

  /**
   * A claimed run of a batch job, executed behind the job: its place is freed once it ran, then it
   * is handed on when it must run again. One async function rather than a chain of promises and
   * closures per run; it never rejects.
   */
  private async runOfBatch(carried: Carried, queue: string, claim: ClaimResult, claimStartedAt: number, attemptStartedAt: Date): Promise<void> {
    try {
      let later: number | null;
      try {
        later = await this.afterClaim(carried, claim, claimStartedAt, attemptStartedAt);
      } finally {
        this.permits.release(1);
      }
      // Its place is free once it ran: handing it on is the transport's wait, not a place's.
      if (later !== null) await this.dispatcher.later(queue, carried.runId, later);
    } catch (error) {
      this.logger.error(`run ${carried.runId} of batch job ${carried.jobId} failed: ${(error as Error).message}; its lease will expire and the run will be retried`);
    }
  }

  /** Keeps the execution of a batch's run until it ends, so stopping can wait for it. */
  private behind(execution: Promise<void>): void {
    this.executing.add(execution);
    void execution.finally(() => this.executing.delete(execution));
  }

  /** Stops taking the runs of batch jobs: those not yet claimed go on as jobs of their own (see processBatch). */
  stop(): void {
    this.permits.close();
  }

  /** Resolves once the runs of batch jobs executing behind their jobs have ended. */
  async executed(): Promise<void> {
    while (this.executing.size > 0) await Promise.allSettled([...this.executing]);
  }

  /** Tells `listener` when every place for runs is taken (the worker should hold its fetching) and when one frees. */
  whenFull(listener: (full: boolean) => void): void {
    this.permits.onFull(listener);
  }

  /**
   * What follows a run's claim: executes it; returns when the job should hand it over again (on
   * this host's clock), or null when it is done with it.
   */
  private async afterClaim(carried: Carried, claim: ClaimResult, claimStartedAt: number, attemptStartedAt: Date): Promise<number | null> {
    const claimed = claimSpan(carried, claim, claimStartedAt);
    if (claim.kind === 'blocked') return Date.now() + BLOCKED_RETRY_MS;
    if (claim.kind === 'unclaimable') return this.notClaimed(carried);
    const { run } = claim;
    const fields = { runId: run.id, scheduleId: run.scheduleId, namespace: run.namespaceId, epoch: run.leaseEpoch };
    return withLogContext(fields, () => this.execute(run, claimed, attemptStartedAt));
  }

  /**
   * Runs a claimed run's target and records its verdict; everything logged on the way names the
   * run. The target runs in a `kairos.execute` span, active while it runs: an HTTP delivery carries
   * it as its `traceparent`, a handler's own spans nest under it.
   */
  private async execute(run: ClaimedRun, claimed: Context, startedAt: Date): Promise<number | null> {
    if (!this.targets.serves(run.target)) return this.handBack(run);
    // Fire lateness is a slot's first claim; later attempts wait out a backoff on purpose, later steps their upstream steps.
    if (run.scheduleId !== null && run.attempt === 1 && run.stepName === null) this.observer.lateness?.((this.ledger.clock.now() - run.scheduledFor.getTime()) / 1000);

    const abort = this.leases.track(run.id, run.leaseEpoch);
    const timer = setTimeout(
      () => abort.abort(new RunAborted('timeout', `the run exceeded its timeout of ${run.timeoutMs} ms`)),
      run.timeoutMs,
    );
    // Built key by key: spreading the conditional ones cost a few µs a run.
    const attributes: Attributes = { 'kairos.run.id': run.id, 'kairos.run.attempt': run.attempt, 'kairos.target.type': run.target.type };
    if (run.target.type === 'handler') attributes['kairos.target.handler'] = run.target.name;
    if (run.stepName !== null) {
      attributes['kairos.step.name'] = run.stepName;
      attributes['kairos.step.graph'] = run.graphRunId!;
    }
    const span = tracer.startSpan('kairos.execute', { attributes }, claimed);
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
        return error.wakeAt ? error.wakeAt.getTime() : null;
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
          return null;
        }
        return (await this.ledger.drain(run.id, run.leaseEpoch)) ? Date.now() : null;
      }
      outcome =
        error.kind === 'timeout'
          ? { kind: 'failed', retryable: true, reasonCode: 'TIMEOUT', message: error.message }
          : { kind: 'cancelled', reasonCode: error.by === 'overlap' ? 'REPLACED_BY_OVERLAP' : 'CANCELLED_BY_USER' };
    } finally {
      clearTimeout(timer);
      span.end();
    }
    return this.record(run, outcome, execution);
  }

  /**
   * Writes the verdict of an attempt, fenced by the epoch it was claimed at. A retry is written
   * before the job is delayed. A final verdict is written behind: the job completes at once and
   * the worker takes its next one while the verdict joins the next batch. The lease stays held and
   * renewed until the verdict is in; if the process dies first, the lease expires and the reaper
   * gives the run to another worker, as for any crash mid-run.
   */
  private async record(run: ClaimedRun, outcome: AttemptOutcome, execution: Context): Promise<number | null> {
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
      if (availableAt === null) {
        await this.leaseLost(run, verdict.reasonCode);
        return null;
      }
      this.observer.verdict?.('retry', verdict.reasonCode);
      return availableAt.getTime();
    }
    this.ledger.track(this.finishBehind(run, verdict, span));
    return null;
  }

  /**
   * A final verdict written behind its job (see record), in its span, and what follows it. One
   * async function rather than a chain of promises and closures per run; it never rejects.
   */
  private async finishBehind(run: ClaimedRun, verdict: Extract<Verdict, { kind: 'final' }>, span: Span): Promise<void> {
    try {
      let written: boolean;
      try {
        written = await this.ledger.finish(run.id, run.leaseEpoch, verdict);
        span.setAttribute('kairos.verdict.written', written);
      } catch (error) {
        spanFailed(span, error);
        throw error;
      } finally {
        this.leases.untrack(run.id);
        span.end();
      }
      if (!written) return await this.leaseLost(run, verdict.reasonCode);
      this.observer.verdict?.(verdict.state, verdict.reasonCode);
      // The verdict of a step may have made the next ones ready: hand them over now rather than wait for the relay.
      if (run.graphRunId !== null) await this.readySteps.submit(run.graphRunId);
      if (run.scheduleId !== null && run.mayReleaseParked) {
        await this.dispatcher.dispatch(await this.ledger.releaseParked(run.scheduleId));
      }
    } catch (error) {
      this.logger.error(`could not record the verdict of run ${run.id}: ${(error as Error).message}; its lease will expire and the run will be retried`);
    }
  }

  /** No code here for the run's target (a deploy skew): give it back, due again a little later, for a worker that has. */
  private async handBack(run: ClaimedRun): Promise<number | null> {
    const what = run.target.type === 'http' ? 'HTTP targets' : `handler "${run.target.name}"`;
    const reason = `worker ${this.ledger.owner} has no code for ${what}; handed back for a worker that has`;
    this.logger.warn(`run ${run.id}: ${reason}`);
    const availableAt = await this.ledger.handBack(run.id, run.leaseEpoch, HAND_BACK_BACKOFF, 'HANDLER_NOT_REGISTERED', reason);
    return availableAt === null ? null : availableAt.getTime();
  }

  private async leaseLost(run: ClaimedRun, attempted: string): Promise<void> {
    this.logger.warn(`verdict for run ${run.id} refused: the lease at epoch ${run.leaseEpoch} was lost`);
    this.observer.leaseLost?.();
    await this.ledger.recordLeaseLost(run.id, run.leaseEpoch, { stage: 'verdict', attempted });
  }

  /** The claim took nothing: decide from the run's state what becomes of the job. */
  private async notClaimed(carried: Carried): Promise<number | null> {
    const { runId } = carried;
    const snapshot = await this.ledger.snapshot(runId);
    if (!snapshot) {
      this.logger.warn(`job ${carried.jobId} names run ${runId}, which does not exist; dropping it`);
      return null;
    }
    switch (snapshot.state) {
      case 'running': {
        // Another worker holds it. Come back when its lease could have been reaped, in case it died.
        const wait = (snapshot.leaseExpiresInMs ?? 0) + this.reaperSkewMs + BLOCKED_RETRY_MS;
        return Date.now() + Math.max(wait, BLOCKED_RETRY_MS);
      }
      case 'queued':
      case 'sleeping':
      case 'waiting':
        if (snapshot.cancelRequested) {
          await this.ledger.cancelQueued(runId);
          return null;
        }
        // Parked behind another run, or waiting for a signal or an event: it gets a fresh job when it is released, signalled or sent its event.
        if (snapshot.dueInMs === null) return null;
        // Early (a host whose clock is ahead promotes delayed jobs early): back the margin before
        // the instant, by this host's clock, which promotes it, to be started at the instant.
        return Date.now() + Math.max(snapshot.dueInMs - this.earlyBy(carried), 50);
      default:
        return null;
    }
  }

  /**
   * Waits for the instant of a job handed over ahead of it, on this worker's reading of the
   * database's clock (corrected for this host's offset, as leases are), so that the claim, and the
   * handler after it, start at the instant whatever the transport's timer precision. The run stays
   * queued meanwhile: a cancellation, a pause or a deletion before the instant makes the claim
   * refuse it. Past `maxWaiting` runs waiting at once (a herd), the job waits in the transport
   * instead: returns when to hand it over again. A job further ahead than the margin is claimed at
   * once (see EARLY_SLACK_MS).
   */
  private async untilDue(dueAt: number): Promise<number | null> {
    const leftMs = dueAt - this.ledger.clock.now();
    if (leftMs <= 0 || leftMs > this.starts.marginMs + EARLY_SLACK_MS) return null;
    if (this.waiting >= this.starts.maxWaiting) return Date.now() + leftMs;
    this.waiting += 1;
    try {
      await this.waitFor(dueAt);
    } finally {
      this.waiting -= 1;
    }
    return null;
  }

  /** Sleeps until database instant `dueAt` when it is at most the margin ahead (see untilDue). */
  private async waitFor(dueAt: number): Promise<void> {
    const clock = this.ledger.clock;
    const leftMs = dueAt - clock.now();
    if (leftMs <= 0 || leftMs > this.starts.marginMs + EARLY_SLACK_MS) return;
    for (let left = leftMs; left > 0; left = dueAt - clock.now()) await new Promise((resolve) => setTimeout(resolve, left));
  }

  /** How far ahead of its run's instant a job may come back: the margin, when its instant is still to come and the worker will wait for it. */
  private earlyBy(carried: Carried): number {
    const dueAt = carried.dueAt;
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
function claimSpan(carried: Carried, claim: ClaimResult, startTime: number): Context {
  const dispatched = carried.traceparent ?? null;
  const recorded = claim.kind === 'claimed' ? claim.run : null;
  const dispatchedIds = parseTraceparent(dispatched);
  const sameTrace = recorded !== null && dispatchedIds !== null && dispatchedIds.traceId === parseTraceparent(recorded.traceParent)?.traceId;
  const parent = contextFromTrace(
    recorded === null ? { traceParent: dispatched, traceState: null } : { traceParent: sameTrace ? dispatched : recorded.traceParent, traceState: recorded.traceState },
  );
  const attributes: Attributes = { 'kairos.run.id': carried.runId, 'kairos.claim.outcome': claim.kind };
  if (recorded) {
    attributes['kairos.run.attempt'] = recorded.attempt;
    attributes['kairos.lease.epoch'] = recorded.leaseEpoch;
  }
  const span = tracer.startSpan('kairos.claim', { kind: SpanKind.CONSUMER, startTime, attributes }, parent);
  span.end();
  return trace.setSpan(parent, span);
}

/**
 * Counts the runs of a batch job started and shows it as the job's progress (`{ started, runs }`)
 * for Bull Board while the batch waits for places, at most every BATCH_PROGRESS_EVERY_MS: one
 * Redis call a second at most, none for a batch taken at once.
 */
function batchProgress(job: RunJob, runs: number): (count: number) => void {
  let started = 0;
  let shownAt = Date.now();
  return (count) => {
    started += count;
    const now = Date.now();
    if (started === runs || now - shownAt < BATCH_PROGRESS_EVERY_MS) return;
    shownAt = now;
    void job.updateProgress({ started, runs }).catch(() => undefined);
  };
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
