/**
 * The producer of a throughput phase: noop runs written 500 to a transaction and handed to the
 * scheduler's dispatcher once it commits, as the tick and the API do. It takes the ledger's
 * functions from its caller, so that a child process runs it on the build (see apart.ts) and this
 * process on the sources (see kairos.ts); it imports types only.
 */
import type { newId } from '@kairos/domain';
import type { Db, RunRepository, dispatchItemOf, inTransaction, manualRun } from '@kairos/ledger';
import type { RunDispatcher } from '@kairos/process';

export const RETRY = { maxAttempts: 1, backoff: { type: 'fixed' as const, baseMs: 1_000, maxMs: 1_000, jitter: 0 } };

/** What the producer needs of Kairos's modules, from the sources or from the build. */
export interface ProducerModules {
  newId: typeof newId;
  manualRun: typeof manualRun;
  dispatchItemOf: typeof dispatchItemOf;
  inTransaction: typeof inTransaction;
  runs: RunRepository;
}

/** Writes `count` noop runs for the handler queue `queue` and hands them to `dispatcher`. */
export async function produceRuns(m: ProducerModules, db: Db, dispatcher: Pick<RunDispatcher, 'dispatch'>, count: number, queue: string): Promise<void> {
  const namespaceId = (await db.query(`SELECT id FROM namespaces WHERE name = 'default'`)).rows[0].id as string;
  for (let i = 0; i < count; i += 500) {
    const now = new Date();
    const batch = Array.from({ length: Math.min(500, count - i) }, () =>
      m.manualRun({
        id: m.newId(),
        namespaceId,
        availableAt: now,
        target: { type: 'handler', name: 'noop', queue },
        payload: null,
        retry: RETRY,
        timeoutMs: 60_000,
        idempotencyKey: null,
        actor: 'bench',
      }),
    );
    await m.inTransaction(db, (tx) => m.runs.insertRuns(tx, batch));
    await dispatcher.dispatch(batch.flatMap((r) => m.dispatchItemOf(r) ?? []));
  }
}
