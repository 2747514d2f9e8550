/** Multi-step runs: steps per second of three-step chains beside single runs per second, in alternating rounds. */
import { Registry } from 'prom-client';
import { newId, type Target } from '@kairos/domain';
import { RunRepository, inTransaction, manualRun } from '@kairos/ledger';
import { RETRY, ROUNDS, TRANSPORTS, kairos } from './kairos.js';
import { fmt, median, printTable, sandbox, until } from './sandbox.js';

/** Calls per side and round of the steps scenario: as many single runs, or a third as many three-step chains. */
const STEP_CALLS = Number(process.env.KAIROS_BENCH_STEP_CALLS ?? 6_000);

/**
 * Multi-step runs against single runs, on one Kairos (scheduler and built-in worker) per transport:
 * STEP_CALLS noop runs, then STEP_CALLS / 3 chains of three noop steps, created 500 calls at a time
 * as the throughput phase creates runs, in alternating rounds. Each step is a run of its own plus
 * the graph's bookkeeping (its release in the verdict's transaction, the hand-over of the next step).
 */
export async function stepsScenario(): Promise<void> {
  const rows: string[][] = [['', 'single runs/s', 'steps/s', 'chains/s', 'steps / single']];
  for (const kind of TRANSPORTS) {
    const box = await sandbox(`steps_${kind}`, undefined, kind);
    const app = await kairos(kind, box);
    const { RunDispatcher } = await import('@kairos/process');
    const dispatcher = app.app.get(RunDispatcher);
    const runs = new RunRepository();
    const namespaceId = (await box.db.query(`SELECT id FROM namespaces WHERE name = 'default'`)).rows[0].id as string;
    const verdicts = app.app.get(Registry).getSingleMetric('kairos_run_verdicts_total')!;
    const succeeded = async () => (await verdicts.get()).values.find((v) => v.labels.state === 'succeeded')?.value ?? 0;
    const noop = { type: 'handler' as const, name: 'noop', queue: 'default' };
    const chain: Target = {
      type: 'steps',
      steps: ['first', 'second', 'third'].map((name, i, all) => ({ name, dependsOn: i === 0 ? [] : [all[i - 1]!], when: 'on_success' as const, target: noop, retry: null, timeoutMs: null })),
    };
    /** Creates `count` runs of `target`, each worth `calls` verdicts, and answers calls per second once every verdict is in. */
    const phase = async (target: Target, count: number, calls: number): Promise<number> => {
      const before = await succeeded();
      const started = performance.now();
      for (let i = 0; i < count; i += 500) {
        const now = new Date();
        const batch = Array.from({ length: Math.min(500, count - i) }, () =>
          manualRun({ id: newId(), namespaceId, availableAt: now, target, payload: null, retry: RETRY, timeoutMs: 60_000, idempotencyKey: null, actor: 'bench' }),
        );
        const { dispatch } = await inTransaction(box.db, (tx) => runs.insertRuns(tx, batch));
        await dispatcher.dispatch(dispatch);
      }
      await until(async () => (await succeeded()) - before >= count * calls, 300_000, 'the runs to succeed');
      return ((count * calls) / (performance.now() - started)) * 1000;
    };
    const single: number[] = [];
    const stepped: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const sides = [() => phase(noop, STEP_CALLS, 1).then((v) => single.push(v)), () => phase(chain, Math.floor(STEP_CALLS / 3), 3).then((v) => stepped.push(v))];
      for (const side of round % 2 === 0 ? sides : sides.reverse()) await side();
    }
    const graphs = (await box.db.query(`SELECT count(*)::int AS n FROM runs WHERE target->>'type' = 'steps' AND state = 'succeeded'`)).rows[0].n as number;
    if (graphs !== ROUNDS * Math.floor(STEP_CALLS / 3)) throw new Error(`bench: ${graphs} chains succeeded in the ledger, not ${ROUNDS * Math.floor(STEP_CALLS / 3)}`);
    rows.push([`${kind} transport, median of ${ROUNDS}`, fmt(median(single)), fmt(median(stepped)), fmt(median(stepped) / 3), fmt(median(stepped.map((v, i) => v / single[i]!)), 2)]);
    await app.app.close();
    await box.drop();
  }
  process.stdout.write(`
multi-step runs: three-step chains beside single runs, ${STEP_CALLS} calls a side and round
`);
  printTable(rows);
}
