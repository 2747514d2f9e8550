/**
 * Hands committed runs to BullMQ (jobId = run id, delayed to available_at). Always called after the
 * transaction that wrote the runs, and marked them enqueued, has committed. If the transport
 * refuses, the mark is undone and the scheduler's relay hands the runs over on a later pass; a
 * crash before the hand-over leaves the mark, and the reconciler re-creates the jobs.
 *
 * It writes the ledger as well as the transport, so it lives here, above both, rather than in
 * @kairos/queue. A leaf (`@kairos/process/run-dispatcher`): the SDK's worker imports it alone, and
 * gives it the ledger through the worker protocol, as the server gives it through its repositories.
 */
import { performance } from 'node:perf_hooks';
import { SpanKind } from '@opentelemetry/api';
import type { Job } from 'bullmq';
import { DEFAULT_PRIORITY, type DispatchItem } from '@kairos/domain';
import { RUN_JOB_DEFAULTS, type JobPayloads, type RunsJobData, type RunsQueue, type RunsQueues } from '@kairos/queue';
import { batchJobId, groupForJobs, type JobGroup } from './dispatch-batches.js';
import { placement, QueueShapes, type QueueShape } from './job-order.js';
import { inSpan, traceContextOf } from '@kairos/telemetry/trace-context';

/** How long the consumers' clock offsets read from the worker registry are used before being read again. */
const CONSUMER_OFFSETS_TTL_MS = 1_000;

/**
 * The delay to give BullMQ so that a job becomes due at an instant of the database's clock. BullMQ
 * stamps a delayed job with the producer host's wall clock plus the delay, and a consuming worker
 * promotes it once its own host's wall clock passes the stamp: both hosts' clocks count, and either
 * may be off. The delay is the time left by the database's clock, shortened by how far the clock of
 * the queue's consumer furthest ahead (the first to promote it) is behind this host's, as the worker
 * registry last heard from it. It is never lengthened: a job that arrives early is held back by
 * the claim (its run is not due yet) and delayed again on the consumer's own clock, while one that
 * arrives late cannot be made up, so an offset that is stale (a host's clock was just stepped) can
 * only make a job early.
 */
/** The database's clock as a process reads it (the ledger's DatabaseClock). */
export interface ClockReading {
  now(): number;
  readonly lastReading: { offsetMs: number } | null;
}

/** What dispatching needs of the ledger. */
export interface DispatchLedger {
  /** Per Kairos queue, the clock offset of its consumer furthest ahead. */
  consumerClockOffsets(): Promise<Map<string, number>>;
  /** Undoes the enqueued mark of queued runs whose jobs the transport refused. */
  markUndispatched(runIds: readonly string[]): Promise<void>;
}

export class JobDelays {
  private consumers = new Map<string, number>();
  private readAt = -Infinity;
  private reading: Promise<void> | null = null;

  constructor(
    private readonly clock: ClockReading,
    private readonly ledger: Pick<DispatchLedger, 'consumerClockOffsets'>,
    /**
     * How long before its instant a job is handed over (KAIROS_START_MARGIN): the worker that takes
     * it starts the run at the instant on its own timer, which is precise where the transport's
     * delayed jobs are not (BullMQ promotes them tens of milliseconds late).
     */
    readonly marginMs = 0,
  ) {
    this.readConsumersSoon();
  }

  /** The database's clock, now. */
  now(): number {
    return this.clock.now();
  }

  /**
   * The BullMQ delay, in ms, that makes a job of Kairos queue `queue` due `marginMs` before database
   * instant `dueAtMs`.
   */
  until(queue: string, dueAtMs: number): number {
    this.readConsumersSoon();
    const own = this.clock.lastReading?.offsetMs ?? 0;
    return Math.max(0, Math.round(dueAtMs - this.marginMs - this.clock.now() + Math.min(0, own - (this.consumers.get(queue) ?? own))));
  }

  /** Refreshes the consumers' offsets behind the caller's back: the hot path never waits for them. */
  private readConsumersSoon(): void {
    if (this.reading || performance.now() - this.readAt < CONSUMER_OFFSETS_TTL_MS) return;
    this.reading = this.ledger
      .consumerClockOffsets()
      .then((offsets) => {
        this.consumers = offsets;
        this.readAt = performance.now();
      })
      .catch(() => undefined)
      .finally(() => (this.reading = null));
  }
}

export class RunDispatcher {
  private readonly shapes = new QueueShapes();
  /** At most this many runs per job (KAIROS_DISPATCH_BATCH); 1 where the transport carries no batches. */
  private readonly batchMax: number;

  constructor(
    private readonly queues: RunsQueues,
    private readonly ledger: DispatchLedger,
    private readonly delays: JobDelays,
    batchMax = 1,
  ) {
    this.batchMax = queues.carriesBatches ? batchMax : 1;
  }

  /**
   * Adds the runs' jobs, each to its queue's BullMQ queue. Returns false when the transport refused some:
   * those runs are marked undispatched for the relay.
   */
  async dispatch(items: readonly DispatchItem[]): Promise<boolean> {
    if (items.length === 0) return true;
    return inSpan('kairos.dispatch', { kind: SpanKind.PRODUCER, attributes: { 'kairos.dispatch.runs': items.length } }, async (span) => {
      const traceparent = span.isRecording() ? traceContextOf().traceParent : null;
      const refused: string[] = [];
      await Promise.all(
        [...byShard(items, this.queues)].map(async ([bullQueue, group]) => {
          try {
            // Runs of the default priority only: the queue's shape as last read; another priority pays for reading it now.
            const special = group.some((item) => (item.priority ?? DEFAULT_PRIORITY) !== DEFAULT_PRIORITY);
            const shape = special ? await this.shapes.read(bullQueue) : this.shapes.current(bullQueue);
            // Runs of priority 1 or 2 that go to the prioritized set take the batch's default ones there behind them.
            const prioritized = shape.prioritized || group.some((item) => (item.priority ?? DEFAULT_PRIORITY) < DEFAULT_PRIORITY && !shape.listed);
            if (this.batchMax <= 1) {
              await bullQueue.addBulk(group.map((item) => this.job(item, traceparent, { ...shape, prioritized })));
              return;
            }
            const jobs = groupForJobs(group, this.batchMax, this.delays.now()).map((job) => this.jobOf(job, traceparent, { ...shape, prioritized }));
            await this.queues.enterBatches(bullQueue, jobs.flatMap((job) => ('runs' in job.data ? [{ id: job.opts.jobId, runs: job.data.runs }] : [])));
            await bullQueue.addBulk(jobs);
          } catch {
            refused.push(...group.map((i) => i.id));
          }
        }),
      );
      span.setAttribute('kairos.dispatch.refused', refused.length);
      if (refused.length === 0) return true;
      await this.ledger.markUndispatched(refused);
      return false;
    });
  }

  /**
   * The reconciler's repair: for each run Postgres says is queued and enqueued, make sure the transport
   * really holds a live job for it. A missing job is added again; a finished one (a failed job kept
   * for Bull Board, which would swallow a new add with the same id) is removed first. Returns the
   * ids repaired. Each check reads the job's own hash, so its cost does not grow with the backlog
   * waiting in the queue, as a check of the job's state in the wait list would. A run is asked
   * again whether it is still queued after its job was found missing: a worker may have finished
   * it, and removed its job, since the list was read. A job missing from the shard its run picks is
   * looked for on the queue's other shards too: after the number of shards grew, it may wait on the
   * shard the run picked before, which is still consumed.
   */
  async redeliver(items: readonly DispatchItem[], markEnqueued: (runIds: readonly string[]) => Promise<string[]>): Promise<string[]> {
    const jobs = await Promise.all(items.map((item) => this.queueOf(item).getJob(item.jobId ?? item.id)));
    const inBatch = await this.inLiveBatch(items.filter((_, i) => !jobs[i] || jobs[i].finishedOn));
    const elsewhere = await Promise.all(items.map((item, i) => (jobs[i] || inBatch.has(item.id) ? false : this.liveElsewhere(item))));
    const suspects = items.flatMap((item, i) =>
      (jobs[i] && !jobs[i].finishedOn) || inBatch.has(item.id) || elsewhere[i] ? [] : [{ item, finishedJob: jobs[i] !== undefined }],
    );
    const stillQueued = new Set(await markEnqueued(suspects.map((s) => s.item.id)));
    const repaired: string[] = [];
    for (const { item, finishedJob } of suspects) {
      if (!stillQueued.has(item.id)) continue;
      const queue = this.queueOf(item);
      if (finishedJob) await queue.remove(item.jobId ?? item.id);
      await queue.add('run', { runId: item.id }, this.job(item).opts);
      repaired.push(item.id);
    }
    return repaired;
  }

  /**
   * Hands over runs woken before their job was due (a signal delivered to a run that waits with a
   * timeout, whose job waits delayed to it): a delayed job is made due now, a finished or missing
   * one added again, a live one left as it is. Returns false when the transport refused some, which
   * are marked undispatched for the relay.
   */
  async wake(items: readonly DispatchItem[]): Promise<boolean> {
    const refused: string[] = [];
    for (const item of items) {
      try {
        const queue = this.queueOf(item);
        const job = await queue.getJob(item.id);
        // A job of the run's own id (a batch's id is never a run's).
        if (job && 'runId' in job.data && (await job.isDelayed())) {
          // Due now, not at the instant it was handed over for.
          await (job as Job<JobPayloads['run']>).updateData(withoutDueAt(job.data));
          await job.promote();
        }
        else if (!job || job.finishedOn) {
          if (job) await queue.remove(item.id);
          await queue.add('run', { runId: item.id }, this.job(item).opts);
        }
      } catch {
        refused.push(item.id);
      }
    }
    if (refused.length > 0) await this.ledger.markUndispatched(refused);
    return refused.length === 0;
  }

  /**
   * The runs of `items` a live batch job carries, on the shard each picks: a run of a batch has no
   * job of its own id. An entry whose batch job is gone, or no longer lists the run, is cleared.
   */
  private async inLiveBatch(items: readonly DispatchItem[]): Promise<Set<string>> {
    const live = new Set<string>();
    if (!this.queues.carriesBatches) return live;
    for (const [queue, group] of byShard(items, this.queues)) {
      const ids = group.map((item) => item.id);
      const batchIds = await this.queues.batchesOf(queue, ids);
      const stale: string[] = [];
      const batches = new Map<string, Promise<Job<RunsJobData> | undefined>>();
      for (const [i, batchId] of batchIds.entries()) {
        if (batchId === null) continue;
        if (!batches.has(batchId)) batches.set(batchId, queue.getJob(batchId));
        const batch = await batches.get(batchId);
        if (batch && !batch.finishedOn && batch.name === 'batch' && 'runs' in batch.data && batch.data.runs.includes(ids[i]!)) live.add(ids[i]!);
        else stale.push(ids[i]!);
      }
      await this.queues.leaveBatch(queue, stale);
    }
    return live;
  }

  /**
   * Hands a run of a batch job on as a job of its own, due at `timestamp` on this host's clock: the
   * worker's way to keep one run of a batch for later (a retry, a run blocked, parked with a wake
   * instant, handed back, or not taken because the worker stops) while the batch completes. Fails
   * only when neither the transport nor the ledger took it.
   */
  async later(queue: string, runId: string, timestamp: number): Promise<void> {
    try {
      await this.queues.of(queue, runId).add('run', { runId }, { ...RUN_JOB_DEFAULTS, jobId: runId, delay: Math.max(0, timestamp - Date.now()) });
    } catch {
      // Refused: the relay hands the run over once the transport is back (a run not queued is left as it is).
      await this.ledger.markUndispatched([runId]);
    }
  }

  /** Clears the record of the batch job that carried `runIds` once it completed (see RunsQueues.enterBatches). */
  async batchDone(queue: string, runIds: readonly string[]): Promise<void> {
    if (runIds.length > 0) await this.queues.leaveBatch(this.queues.of(queue, runIds[0]!), runIds);
  }

  /** A run's job, placed by its priority in its queue (job-order.ts); a repair or a wake places it by the queue's shape as last read. */
  /**
   * Moves the jobs left on the shards of Kairos queue `queue` that the current number of shards no
   * longer uses (KAIROS_QUEUE_SHARDS changed) to the shards their runs now pick, each with what is
   * left of its delay and its place by priority, at most `limit` per pass. Returns how many moved.
   * A job a worker of the old shards holds is left to finish there; one still active whose lock has
   * expired was held by a process that stopped without finishing it (killed), and no worker of its
   * shard is left to find it stalled: it is moved too, due now.
   */
  async rehome(queue: string, limit: number): Promise<number> {
    let moved = 0;
    for (const old of this.queues.leftBehind(queue)) {
      if (moved >= limit) break;
      const counts = await old.getJobCounts('wait', 'prioritized', 'delayed', 'active');
      if (Object.values(counts).every((n) => n === 0)) continue;
      for (const job of await old.getJobs(['wait', 'prioritized', 'delayed'], 0, limit - moved - 1)) {
        if (job.id === undefined) continue;
        await this.moveJob(queue, job, Math.max(0, job.timestamp + (job.opts.delay ?? 0) - Date.now()));
        await job.remove().catch(() => undefined);
        moved += 1;
      }
      if ((counts.active ?? 0) === 0 || moved >= limit) continue;
      for (const job of await old.getJobs(['active'], 0, limit - moved - 1)) {
        // BullMQ removes an active job only once its lock has expired.
        if (job.id === undefined || !(await job.remove().then(() => true, () => false))) continue;
        await this.moveJob(queue, job, 0);
        moved += 1;
      }
    }
    return moved;
  }

  /**
   * Adds `job` (of a shard no longer used) again on the shard of Kairos queue `queue` its run picks
   * now, with its id, data and priority, due in `delay` ms. A batch job's runs may pick different
   * shards now: each goes on as a job of its own.
   */
  private async moveJob(queue: string, job: Job<RunsJobData>, delay: number): Promise<void> {
    const opts = { ...RUN_JOB_DEFAULTS, delay, ...(job.opts.priority ? { priority: job.opts.priority } : {}) };
    if ('runs' in job.data) {
      const { traceparent, dueAt } = job.data;
      for (const runId of job.data.runs) await this.queues.of(queue, runId).add('run', { runId, ...(traceparent && { traceparent }), ...(dueAt && { dueAt }) }, { ...opts, jobId: runId });
      return;
    }
    await this.queues.of(queue, job.data.runId).add('run', job.data, { ...opts, jobId: job.id });
  }

  /** Whether a live job of the run waits on a shard of its queue other than the one it picks. */
  private async liveElsewhere(item: DispatchItem): Promise<boolean> {
    const own = this.queueOf(item);
    const others = this.queues.all(item.queue).filter((queue) => queue !== own);
    const found = await Promise.all(others.map((queue) => queue.getJob(item.jobId ?? item.id)));
    return found.some((job) => job !== undefined && !job.finishedOn);
  }

  /** The shard of its runs queue that carries a run's jobs: picked by the run's id, so every job a run is ever given lands on one. */
  private queueOf(item: DispatchItem) {
    return this.queues.of(item.queue, item.id);
  }

  private job(item: DispatchItem, traceparent: string | null = null, shape: QueueShape = this.shapes.current(this.queueOf(item))) {
    const dueAt = item.availableAt.getTime();
    const data: JobPayloads['run'] = { runId: item.id, ...(traceparent !== null && { traceparent }), ...(this.delays.marginMs > 0 && { dueAt }) };
    return {
      name: 'run' as const,
      data,
      opts: { ...RUN_JOB_DEFAULTS, jobId: item.jobId ?? item.id, delay: this.delays.until(item.queue, dueAt), ...placement(item.priority ?? DEFAULT_PRIORITY, shape) },
    };
  }

  /** The job of a group of runs (dispatch-batches.ts): a run's own job, or a batch job carrying them all. */
  private jobOf(group: JobGroup, traceparent: string | null, shape: QueueShape) {
    const [first] = group.items;
    if (group.items.length === 1) return this.job(first!, traceparent, shape);
    const runs = group.items.map((item) => item.id);
    const dueAt = group.dueAt ?? Math.max(...group.items.map((item) => item.availableAt.getTime()));
    const data: JobPayloads['batch'] = {
      queue: first!.queue,
      runs,
      ...(traceparent !== null && { traceparent }),
      ...(this.delays.marginMs > 0 && group.dueAt !== null && { dueAt: group.dueAt }),
    };
    return {
      name: 'batch' as const,
      data,
      opts: { ...RUN_JOB_DEFAULTS, jobId: batchJobId(runs), delay: this.delays.until(first!.queue, dueAt), ...placement(first!.priority ?? DEFAULT_PRIORITY, shape) },
    };
  }
}

/** A job's payload without its instant: the run is due now. */
function withoutDueAt({ dueAt: _dueAt, ...data }: JobPayloads['run']): JobPayloads['run'] {
  return data;
}

/** The items grouped by the BullMQ queue (a shard of their runs queue) their jobs go to. */
function byShard(items: readonly DispatchItem[], queues: RunsQueues): Map<RunsQueue, DispatchItem[]> {
  const groups = new Map<RunsQueue, DispatchItem[]>();
  for (const item of items) {
    const queue = queues.of(item.queue, item.id);
    const group = groups.get(queue);
    if (group) group.push(item);
    else groups.set(queue, [item]);
  }
  return groups;
}
