/** Durable functions' timers: runs sleeping at once on one SDK worker, and how late each wakes. */
import { newId } from '@kairos/domain';
import { RunRepository, dispatchItemOf, inTransaction, manualRun } from '@kairos/ledger';
import { KairosWorker } from '@kairos/sdk';
import { RETRY, TRANSPORTS, kairos } from './kairos.js';
import { REDIS_URL, fmt, percentile, printTable, sandbox, until } from './sandbox.js';

/** Sleeping runs of the wake scenario, each sleeping WAKE_SLEEP_MS. */
const WAKE_RUNS = Number(process.env.KAIROS_BENCH_WAKE_RUNS ?? 1_000);
const WAKE_SLEEP_MS = 2_000;

/**
 * Durable functions' timers: WAKE_RUNS runs of a handler that sleeps WAKE_SLEEP_MS (ctx.sleep) on
 * an SDK worker of concurrency 8 beside a scheduler, on each transport. A sleeping run holds no
 * worker slot, so all sleep at once; each wake is measured from the ledger: the claim that resumed
 * the run against the wake instant its `slept` event recorded.
 */
export async function wakeScenario(): Promise<void> {
  const rows: string[][] = [['', 'runs', 'all done (s)', 'wake lateness p50 (ms)', 'p99', 'max']];
  for (const kind of TRANSPORTS) {
    const box = await sandbox(`wake_${kind}`, undefined, kind);
    const app = await kairos(kind, box, ['scheduler']);
    let done = 0;
    const worker = new KairosWorker({
      databaseUrl: box.url,
      redisUrl: kind === 'redis' ? REDIS_URL : null,
      queuePrefix: box.prefix,
      queue: 'bench',
      concurrency: 8,
      handlers: { nap: async (ctx) => void (await ctx.sleep(WAKE_SLEEP_MS)) },
      logger: { log: () => undefined, warn: (m) => console.warn(m), error: (m) => console.error(m) },
      observer: { verdict: (state) => void (state === 'succeeded' && done++) },
    });
    await worker.start();
    const { RunDispatcher } = await import('@kairos/process');
    const dispatcher = app.app.get(RunDispatcher);
    const namespaceId = (await box.db.query(`SELECT id FROM namespaces WHERE name = 'default'`)).rows[0].id as string;
    const started = performance.now();
    const now = new Date();
    const batch = Array.from({ length: WAKE_RUNS }, () =>
      manualRun({ id: newId(), namespaceId, availableAt: now, target: { type: 'handler', name: 'nap', queue: 'bench' }, payload: null, retry: RETRY, timeoutMs: 60_000, idempotencyKey: null, actor: 'bench' }),
    );
    await inTransaction(box.db, (tx) => new RunRepository().insertRuns(tx, batch));
    await dispatcher.dispatch(batch.flatMap((r) => dispatchItemOf(r) ?? []));
    await until(async () => done >= WAKE_RUNS, 300_000, 'the sleeping runs to finish');
    const elapsed = performance.now() - started;
    const { rows: late } = await box.db.query<{ ms: number }>(
      `SELECT extract(epoch FROM (SELECT min(c.at) FROM run_events c WHERE c.run_id = s.run_id AND c.kind = 'claimed' AND c.id > s.id)
                              - (s.detail->>'wakeAt')::timestamptz) * 1000 AS ms
       FROM run_events s WHERE s.kind = 'slept'`,
    );
    const lateness = late.map((r) => Number(r.ms)).sort((a, b) => a - b);
    rows.push([`${kind} transport`, String(lateness.length), fmt(elapsed / 1000, 1), fmt(percentile(lateness, 50), 1), fmt(percentile(lateness, 99), 1), fmt(lateness.at(-1)!, 1)]);
    await worker.stop();
    await app.app.close();
    await box.drop();
  }
  process.stdout.write(`\ndurable functions: ${WAKE_RUNS} runs sleeping ${WAKE_SLEEP_MS / 1000} s each on one worker of concurrency 8\n`);
  printTable(rows);
  process.stdout.write('target: wake lateness p99 <= 150 ms; held worker slots would take ' + fmt((WAKE_RUNS * WAKE_SLEEP_MS) / 8 / 1000) + ' s\n');
}
