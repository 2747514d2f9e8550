/**
 * The BullMQ side of Kairos: one queue of runs. A job carries the run id and nothing else; the
 * ledger row is the truth, so a job Redis loses is re-created from Postgres, never the reverse.
 */

export const RUNS_QUEUE = 'kairos-runs';

/** Job payloads by job name: one discriminated union, so each processor gets exactly its type. */
export interface JobPayloads {
  run: { runId: string };
}
export type JobName = keyof JobPayloads;

/**
 * Completed jobs stay visible in Bull Board for a while. Kairos never re-adds the id of a run that
 * ended, and the reconciler clears a leftover job when a run it holds must run again.
 */
export const RUN_JOB_DEFAULTS = {
  removeOnComplete: { age: 3_600, count: 1_000 },
  removeOnFail: { age: 24 * 3_600, count: 5_000 },
} as const;
