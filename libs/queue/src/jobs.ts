/**
 * The BullMQ side of Kairos: each Kairos queue (`default`, `media`) has its runs queue, the BullMQ
 * queue that carries its runs (`RunsQueue`, named by `runsQueueName`). A job carries the run id
 * and, while tracing, the span that dispatched it; the ledger row is the truth, so a job Redis loses is re-created from Postgres,
 * never the reverse.
 */
import { DEFAULT_QUEUE } from '@kairos/domain';

/** The BullMQ queue of the default queue (built-in handlers and HTTP targets). */
export const DEFAULT_RUNS_QUEUE_NAME = 'kairos-runs';

/** The BullMQ queue that carries the runs of Kairos queue `queue`: `kairos-runs.<queue>`, the default one `kairos-runs`. */
export function runsQueueName(queue: string): string {
  return queue === DEFAULT_QUEUE ? DEFAULT_RUNS_QUEUE_NAME : `${DEFAULT_RUNS_QUEUE_NAME}.${queue}`;
}

/** Job payloads by job name: one discriminated union, so each processor gets exactly its type. */
export interface JobPayloads {
  /**
   * `traceparent`: the span that dispatched the run, present only while tracing; the worker's
   * claim continues it when it belongs to the run's own trace (see RunExecutor). `dueAt`: the run's
   * instant on the database's clock (epoch ms) when the job was handed over ahead of it (see
   * KAIROS_START_MARGIN): the worker that takes it early starts it at that instant on its own timer.
   */
  run: { runId: string; traceparent?: string; dueAt?: number };
  /**
   * Runs due together on one shard of Kairos queue `queue` (dispatch-batches.ts): `runs` in the
   * order they were handed over, `dueAt` their common instant when it was still ahead. The worker
   * claims them together, and each run that must run again later travels on as a job of its own.
   */
  batch: { queue: string; runs: string[]; traceparent?: string; dueAt?: number };
}

/** The data of any job of a runs queue, and its name. */
export type RunsJobData = JobPayloads['run'] | JobPayloads['batch'];
export type RunsJobName = keyof JobPayloads;

/**
 * Redis holds live work only: a finished job is removed at once (the ledger keeps the history), so
 * a run's id can always be added again when the run must run again. A processor fails only when
 * the ledger is unreachable; BullMQ then retries the job with a backoff, and failed jobs are kept a
 * day for inspection in Bull Board.
 */
export const RUN_JOB_DEFAULTS = {
  removeOnComplete: true,
  removeOnFail: { age: 24 * 3_600, count: 5_000 },
  attempts: 20,
  backoff: { type: 'exponential', delay: 1_000 },
} as const;
