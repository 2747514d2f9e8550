/**
 * The reconciler under a backlog: runs the workers have not reached yet are overdue, but their jobs
 * are live in the transport and must be left alone, while a job it lost behind them is still found.
 * Only the scheduler runs here, so nothing consumes the queue.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '@kairos/domain';
import { RunRepository, dispatchItemOf, inTransaction, manualRun, type NewRun } from '@kairos/ledger';
import { RunDispatcher } from '@kairos/process';
import type { RunsQueue } from '@kairos/queue';
import type { StartedKairos } from '@kairos/process';
import { manualWorker, runsQueue, startInProcess, testEnvironment, waitFor, type TestEnvironment } from '../support/kairos.js';

const BACKLOG = 1_200;

describe('the reconciler', () => {
  let t: TestEnvironment;
  let scheduler: StartedKairos;
  let queue: RunsQueue;

  beforeAll(async () => {
    t = await testEnvironment();
    // Each run its own job, so that one of them can be lost behind the others (the runs of a lost
    // batch job are the batched-dispatch spec's).
    scheduler = await startInProcess(t.env({ KAIROS_DISPATCH_BATCH: '1' }), ['scheduler']);
    queue = await runsQueue(t);
  });

  afterAll(async () => {
    await queue?.close();
    await scheduler?.app.close();
    await t?.cleanup();
  });

  /** Queued runs due from `start` on, a millisecond apart, that Postgres says Redis has held for a minute. */
  async function overdueRuns(count: number, start: number): Promise<NewRun[]> {
    const namespaceId = (await t.db.query(`SELECT id FROM namespaces WHERE name = 'default'`)).rows[0].id as string;
    const runs = Array.from({ length: count }, (_, i) =>
      manualRun({
        id: newId(),
        namespaceId,
        availableAt: new Date(start + i),
        target: { type: 'handler', name: 'noop', queue: 'default' },
        payload: null,
        retry: { maxAttempts: 1, backoff: { type: 'fixed', baseMs: 1_000, maxMs: 1_000, jitter: 0 } },
        timeoutMs: 10_000,
        idempotencyKey: null,
        actor: 'test',
      }),
    );
    await inTransaction(t.db, async (tx) => {
      await new RunRepository().insertRuns(tx, runs);
      await tx.query(`UPDATE runs SET enqueued_at = now() - interval '1 minute' WHERE id = ANY($1::uuid[])`, [runs.map((r) => r.id)]);
    });
    return runs;
  }

  it('re-enqueues the jobs Redis lost behind a backlog of live ones, and adds nothing else', async () => {
    // Due a minute ago, one millisecond apart, so the reconciler's order (oldest due first) is known.
    const runs = await overdueRuns(BACKLOG, Date.now() - 60_000);
    expect(await scheduler.app.get(RunDispatcher).dispatch(runs.flatMap((r) => dispatchItemOf(r) ?? []))).toBe(true);

    // The lost ones come last in the reconciler's order, behind two full pages of live jobs.
    const lost = runs.slice(-3).map((r) => r.id);
    for (const id of lost) expect(await queue.remove(id)).toBe(1);
    // Waiting plainly or, with priorities, in BullMQ's prioritized set.
    const waiting = async () => {
      const counts = await queue.getJobCounts('wait', 'prioritized');
      return counts.wait! + counts.prioritized!;
    };
    expect(await waiting()).toBe(BACKLOG - lost.length);

    await waitFor(
      async () => ((await Promise.all(lost.map((id) => queue.getJob(id)))).every(Boolean) ? true : undefined),
      'the lost jobs to be re-enqueued',
      15_000,
    );
    expect(await waiting()).toBe(BACKLOG);
    const readded = await Promise.all(lost.map(async (id) => (await queue.getJob(id))!.data));
    expect(readded).toEqual(lost.map((runId) => ({ runId })));
  });

  it('replaces a job Redis kept as failed with a live one', async () => {
    // Due before the whole backlog, so it is on the reconciler's first page.
    const [run] = await overdueRuns(1, Date.now() - 120_000);
    const id = run!.id;
    await queue.add('run', { runId: id }, { jobId: id, lifo: true });
    // A worker that took the job and failed it for good, as one does after the ledger was unreachable
    // for all of the job's attempts.
    const worker = manualWorker(t);
    try {
      const job = (await worker.getNextJob('test-token'))!;
      expect(job.id).toBe(id);
      await job.moveToFailed(new Error('the ledger is unreachable'), 'test-token');
      expect(await queue.getJobState(id)).toBe('failed');
    } finally {
      await worker.close();
    }
    await waitFor(async () => ((await queue.getJobState(id)) === 'waiting' ? true : undefined), 'the failed job to be replaced', 15_000);
    expect((await queue.getJob(id))!.failedReason).toBeFalsy();
  });
});
