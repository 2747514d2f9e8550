/**
 * What the run path pays for concurrency keys (runs each holding a key of its own, or sharing a few)
 * and for subscriptions (the runs' outcome trigger, and an event per run delivered to a listener),
 * beside plain noop runs, in alternating rounds on each transport.
 */
import { newId } from '@kairos/domain';
import { RunRepository, inTransaction, manualRun, type NewRun } from '@kairos/ledger';
import type { StartedKairos } from '@kairos/process';
import { RETRY, ROUNDS, TRANSPORTS, kairos, type TransportKind } from './kairos.js';
import { fmt, median, printTable, sandbox, until, type Sandbox } from './sandbox.js';

/** Runs a side and round of the limits scenario. */
const LIMIT_RUNS = Number(process.env.KAIROS_BENCH_LIMIT_RUNS ?? 6_000);

/** What a run of a side declares beyond a plain noop run: a concurrency key, a priority, a fairness key. */
type RunFields = Partial<Pick<NewRun, 'concurrency' | 'priority' | 'fairness'>>;

/** Puts `count` noop runs through the built-in worker (each with the fields `fieldsOf` gives) and answers the runs a second. */
async function noopRunsPerSecond(box: Sandbox, app: StartedKairos, count: number, fieldsOf: ((i: number) => RunFields) | null = null): Promise<number> {
  const { RunDispatcher } = await import('@kairos/process');
  const dispatcher = app.app.get(RunDispatcher);
  const runs = new RunRepository();
  const namespaceId = (await box.db.query(`SELECT id FROM namespaces WHERE name = 'default'`)).rows[0].id as string;
  const noop = { type: 'handler' as const, name: 'noop', queue: 'default' };
  const ids: string[] = [];
  const started = performance.now();
  for (let i = 0; i < count; i += 500) {
    const now = new Date();
    const batch = Array.from({ length: Math.min(500, count - i) }, (_, j) =>
      manualRun({ id: newId(), namespaceId, availableAt: now, target: noop, payload: null, retry: RETRY, timeoutMs: 60_000, idempotencyKey: null, actor: 'bench', ...fieldsOf?.(i + j) }),
    );
    ids.push(...batch.map((r) => r.id));
    const { dispatch } = await inTransaction(box.db, (tx) => runs.insertRuns(tx, batch));
    await dispatcher.dispatch(dispatch);
  }
  // Counted in the ledger, by the side's own runs: a verdict metric would also count the runs of a side before that were still finishing.
  const succeeded = async () =>
    (await box.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM runs WHERE id = ANY($1::uuid[]) AND state = 'succeeded'`, [ids])).rows[0]!.n;
  await until(async () => (await succeeded()) >= count, 300_000, 'the runs to succeed', 100);
  return (count / (performance.now() - started)) * 1000;
}

/** A table row of rates measured in rounds: the baseline's median, then each side's median and the median of its per-round ratio to the baseline. */
function sidesRow(kind: TransportKind, baseline: number[], ...sides: number[][]): string[] {
  return [`${kind} transport, median of ${ROUNDS}`, fmt(median(baseline)), ...sides.flatMap((side) => [fmt(median(side)), fmt(median(side.map((v, i) => v / baseline[i]!)), 2)])];
}

/**
 * The cost of concurrency keys on the run path: noop runs without a key beside runs that each
 * hold a key of their own (limit 1, never held back: the claim's locks and counts, and the release
 * a verdict triggers, with nothing to wait for), and runs sharing 16 keys of limit 4 (held back and
 * released all along), sides alternating from round to round, on each transport. Each rate is
 * runs per second from the first insert to the last verdict.
 */
export async function limitsScenario(): Promise<void> {
  const rows: string[][] = [['', 'no key runs/s', 'own key runs/s', 'own / none', '16 keys of 4 runs/s', 'shared / none']];
  for (const kind of TRANSPORTS) {
    const box = await sandbox(`limits_${kind}`, undefined, kind);
    const app = await kairos(kind, box);
    const none: number[] = [];
    const own: number[] = [];
    const shared: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const sides = [
        () => noopRunsPerSecond(box, app, LIMIT_RUNS).then((v) => none.push(v)),
        () => noopRunsPerSecond(box, app, LIMIT_RUNS, (i) => ({ concurrency: { key: `own-${round}-${i}`, limit: 1 } })).then((v) => own.push(v)),
        () => noopRunsPerSecond(box, app, LIMIT_RUNS, (i) => ({ concurrency: { key: `shared-${i % 16}`, limit: 4 } })).then((v) => shared.push(v)),
      ];
      for (const side of round % 2 === 0 ? sides : sides.reverse()) await side();
    }
    const over = (await box.db.query(`SELECT count(*)::int AS n FROM runs WHERE held_at IS NOT NULL OR state <> 'succeeded'`)).rows[0].n as number;
    if (over !== 0) throw new Error(`bench: ${over} runs did not succeed`);
    rows.push(sidesRow(kind, none, own, shared));
    await app.app.close();
    await box.drop();
  }
  process.stdout.write(`
concurrency keys: ${LIMIT_RUNS} noop runs a side and round, without a key, each with its own, and sharing 16 keys of limit 4
`);
  printTable(rows);
}

/**
 * What priority and fair share cost the run path: noop runs without either, beside runs of mixed
 * priorities (1 to 5 in turn: every job is ordered by BullMQ anyway), and runs spread over 1,000
 * fairness keys of weights 1 to 3 (every run goes through its queue's window and backlog), sides
 * alternating from round to round, on each transport.
 */
export async function fairnessScenario(): Promise<void> {
  const rows: string[][] = [['', 'plain runs/s', 'priorities 1-5 runs/s', 'priorities / plain', '1,000 keys runs/s', 'keys / plain']];
  for (const kind of TRANSPORTS) {
    const box = await sandbox(`fairness_${kind}`, undefined, kind);
    const app = await kairos(kind, box);
    const plain: number[] = [];
    const prioritized: number[] = [];
    const keyed: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const sides = [
        () => noopRunsPerSecond(box, app, LIMIT_RUNS).then((v) => plain.push(v)),
        () => noopRunsPerSecond(box, app, LIMIT_RUNS, (i) => ({ priority: 1 + (i % 5) })).then((v) => prioritized.push(v)),
        () => noopRunsPerSecond(box, app, LIMIT_RUNS, (i) => ({ fairness: { key: `tenant-${i % 1_000}`, weight: 1 + (i % 3) } })).then((v) => keyed.push(v)),
      ];
      for (const side of round % 2 === 0 ? sides : sides.reverse()) await side();
    }
    const over = (await box.db.query(`SELECT count(*)::int AS n FROM runs WHERE held_at IS NOT NULL OR state <> 'succeeded'`)).rows[0].n as number;
    if (over !== 0) throw new Error(`bench: ${over} runs did not succeed`);
    rows.push(sidesRow(kind, plain, prioritized, keyed));
    await app.app.close();
    await box.drop();
  }
  process.stdout.write(`
priority and fair share: ${LIMIT_RUNS} noop runs a side and round, plain, of priorities 1 to 5 in turn, and over 1,000 fairness keys of weights 1 to 3
`);
  printTable(rows);
}

/**
 * What subscriptions cost the run path: noop runs with the runs' outcome trigger disabled (the run
 * path before subscriptions), with it on while nobody listens, and with a subscription listening
 * to run.succeeded (an outbox event per run, fanned out and delivered to a local receiver).
 */
export async function alertsScenario(): Promise<void> {
  const { createServer } = await import('node:http');
  let received = 0;
  const receiver = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      received += 1;
      res.end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const hook = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hook`;
  const rows: string[][] = [['', 'no trigger runs/s', 'nobody listens runs/s', 'nobody / no trigger', 'run.succeeded listened runs/s', 'listened / no trigger']];
  for (const kind of TRANSPORTS) {
    const box = await sandbox(`alerts_${kind}`, undefined, kind);
    const app = await kairos(kind, box, ['scheduler', 'worker'], { KAIROS_HTTP_ALLOWLIST: '127.0.0.1' });
    const namespaceId = (await box.db.query(`SELECT id FROM namespaces WHERE name = 'default'`)).rows[0].id as string;
    const trigger = (on: boolean) => box.db.query(`ALTER TABLE runs ${on ? 'ENABLE' : 'DISABLE'} TRIGGER runs_outcome_event`);
    const listen = async (on: boolean) => {
      await box.db.query(`DELETE FROM subscriptions`);
      if (on) {
        await box.db.query(`INSERT INTO subscriptions (id, namespace_id, url, events, format, state) VALUES ($1, $2, $3, '{run.succeeded}', 'json', 'active')`, [newId(), namespaceId, hook]);
      }
    };
    const off: number[] = [];
    const quiet: number[] = [];
    const listened: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const sides = [
        async () => {
          await trigger(false);
          await listen(false);
          off.push(await noopRunsPerSecond(box, app, LIMIT_RUNS));
          await trigger(true);
        },
        async () => {
          await listen(false);
          quiet.push(await noopRunsPerSecond(box, app, LIMIT_RUNS));
        },
        async () => {
          await listen(true);
          const before = received;
          listened.push(await noopRunsPerSecond(box, app, LIMIT_RUNS));
          // The side ends when its events were delivered too, so their cost never lands on the next side.
          await until(async () => received - before >= LIMIT_RUNS, 300_000, 'the run.succeeded deliveries');
          await listen(false);
        },
      ];
      for (const side of round % 2 === 0 ? sides : sides.reverse()) await side();
    }
    rows.push(sidesRow(kind, off, quiet, listened));
    await app.app.close();
    await box.drop();
  }
  receiver.close();
  process.stdout.write(`
subscriptions: ${LIMIT_RUNS} noop runs a side and round; the listened side's runs/s counts the runs, its deliveries finish before the next side
`);
  printTable(rows);
}
