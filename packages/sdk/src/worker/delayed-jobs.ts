/**
 * After this host's wall clock is stepped (NTP, an operator, a VM resumed), the delayed jobs of the
 * worker's queue still carry due stamps of the old clock, and BullMQ, which promotes them on this
 * host's clock, would start them early or late by the whole step. Each is given its delay again,
 * from its run's available_at and the database's clock.
 */
import type { DatabaseClock } from '@kairos/ledger/clock';
import type { RunsQueue } from '@kairos/queue';
import type { ExecutionLedger } from './execution-ledger.js';

/**
 * Re-times the delayed jobs of `shards` (a runs queue's) whose runs are still queued, due `marginMs`
 * before their instant (a batch job's: its earliest run's); returns how many.
 */
export async function retimeDelayedJobs(shards: readonly RunsQueue[], ledger: ExecutionLedger, clock: DatabaseClock, marginMs: number): Promise<number> {
  const jobs = (await Promise.all(shards.map((queue) => queue.getDelayed(0, -1)))).flat().filter((job) => job.id !== undefined);
  if (jobs.length === 0) return 0;
  const runsOf = (job: (typeof jobs)[number]): string[] => ('runs' in job.data ? job.data.runs : [job.id!]);
  const due = await ledger.availableAt(jobs.flatMap(runsOf));
  let retimed = 0;
  for (const job of jobs) {
    const instants = runsOf(job).flatMap((runId) => due.get(runId)?.getTime() ?? []);
    if (instants.length === 0) continue;
    const at = new Date(Math.min(...instants));
    // This worker's own timeline: the database's instant less the time left by the database's clock.
    await job.changeDelay(Math.max(0, at.getTime() - marginMs - clock.now()));
    retimed += 1;
  }
  return retimed;
}
