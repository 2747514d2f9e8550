/**
 * The ledger's part of a durable run, in Postgres alone: the CPU of the database backend (read from
 * /proc/<pid>/stat) that writes a run three times as Kairos writes it (the insert of
 * RunRepository.insertRuns, 500 runs to a transaction; the claim and the verdict through the worker
 * functions, 128 runs to a statement), per run, with two heartbeats' lease renewals between the
 * claim and the verdict, and the share of the claims' and verdicts' updates, and of the renewals,
 * that were heap-only (pg_stat_user_tables). Beside it, the same on a copy of the ledger without the indexes
 * that name a column the claim or the verdict changes, with room left on each page: what heap-only
 * claims and verdicts would save at most, before paying for whatever would find queued runs, expired
 * leases and held runs instead. The two ledgers alternate round by round; medians.
 */
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { newId } from '@kairos/domain';
import { RunRepository, defaultMigrationsDir, inTransaction, manualRun, migrate, readMigrations } from '@kairos/ledger';
import { WorkerProtocol } from '../packages/sdk/src/worker/worker-protocol.js';
import { RETRY } from './producer.js';
import { fmt, median, printTable, sandbox, sleep, type Sandbox } from './sandbox.js';

const RUNS = Number(process.env.KAIROS_BENCH_LEDGER_RUNS ?? 10_000);
const ROUNDS = Number(process.env.KAIROS_BENCH_ROUNDS ?? 5);
const INSERT_BATCH = 500;
const WORKER_BATCH = 128;
/** Columns the claim or the verdict writes: an index naming one rules a heap-only update out. */
const CHANGED_BY_CLAIM_OR_VERDICT = /\b(state|lease_owner|lease_epoch|lease_expires_at|heartbeat_at|started_at|finished_at|held_at|holds_place|version)\b/;

/** Lease renewals per run between its claim and its verdict, as a heartbeat makes them. */
const RENEWALS = 2;

interface Round {
  insert: number;
  claim: number;
  /** Per renewal. */
  renewal: number;
  verdict: number;
  /** The heap-only share of the claims and verdicts, and of the renewals. */
  hot: number;
  hotRenewals: number;
}

/** CPU time of a process so far, in µs (clock ticks of 10 ms). */
function cpuMicros(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10_000;
}

async function updates(db: pg.Pool): Promise<{ all: number; hot: number }> {
  const { rows } = await db.query<{ all: string; hot: string }>(
    `SELECT pg_stat_clear_snapshot(), n_tup_upd AS all, n_tup_hot_upd AS hot FROM pg_stat_user_tables WHERE relname = 'runs'`,
  );
  return { all: Number(rows[0]!.all), hot: Number(rows[0]!.hot) };
}

/** The run rows' updates counted so far, once the bench's backend has reported its own (it does at the end of its next transaction). */
async function updatesAfter(db: pg.Pool, box: Sandbox, atLeast: number): Promise<{ all: number; hot: number }> {
  await db.query('SELECT pg_stat_force_next_flush()');
  await db.query('SELECT 1');
  let counted = await updates(box.db);
  for (let waited = 0; counted.all < atLeast && waited < 5_000; waited += 100) {
    await sleep(100);
    counted = await updates(box.db);
  }
  return counted;
}

async function round(box: Sandbox): Promise<Round> {
  const runs = new RunRepository();
  const protocol = new WorkerProtocol();
  // The same table for every round: the last round's runs gone, the statistics fresh.
  await box.db.query('DELETE FROM runs');
  await box.db.query('VACUUM ANALYZE runs');
  const before = await updates(box.db);
  const db = new pg.Pool({ connectionString: box.url, max: 1 });
  try {
    const pid = (await db.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
    const namespaceId = (await db.query<{ id: string }>(`SELECT id FROM namespaces WHERE name = 'default'`)).rows[0]!.id;
    const owner = 'bench-ledger';
    await protocol.register(db, { id: owner, queue: 'default', handlers: ['noop'], version: 'unversioned', upgrade: 'pinned', clockOffsetMs: 0 });
    const made = Array.from({ length: RUNS }, () =>
      manualRun({
        id: newId(),
        namespaceId,
        availableAt: new Date(Date.now() - 1_000),
        target: { type: 'handler', name: 'noop', queue: 'default' },
        payload: null,
        retry: RETRY,
        timeoutMs: 10_000,
        idempotencyKey: null,
        actor: 'bench',
      }),
    );
    let at = cpuMicros(pid);
    const spent = (): number => {
      const now = cpuMicros(pid);
      const micros = now - at;
      at = now;
      return micros / RUNS;
    };
    for (let i = 0; i < RUNS; i += INSERT_BATCH) await inTransaction(db, (tx) => runs.insertRuns(tx, made.slice(i, i + INSERT_BATCH)));
    const insert = spent();
    const held: { runId: string; epoch: number }[] = [];
    for (let i = 0; i < RUNS; i += WORKER_BATCH) {
      for (const claim of await protocol.claimMany(db, made.slice(i, i + WORKER_BATCH).map((r) => r.id), owner, 60_000)) {
        if (claim.kind === 'claimed') held.push({ runId: claim.run.id, epoch: claim.run.leaseEpoch });
      }
    }
    const claim = spent();
    if (held.length !== RUNS) throw new Error(`bench: ${RUNS - held.length} runs were not claimed`);
    const claimed = await updatesAfter(db, box, before.all + RUNS);
    spent();
    for (let n = 0; n < RENEWALS; n++) {
      for (let i = 0; i < RUNS; i += WORKER_BATCH) {
        const renewed = await protocol.renewLeases(db, owner, held.slice(i, i + WORKER_BATCH).map((h) => ({ id: h.runId, epoch: h.epoch })), 60_000);
        if (renewed.length !== Math.min(WORKER_BATCH, RUNS - i)) throw new Error('bench: a lease was not renewed');
      }
    }
    const renewal = spent() / RENEWALS;
    const renewed = await updatesAfter(db, box, claimed.all + RENEWALS * RUNS);
    spent();
    const succeeded = { state: 'succeeded' as const, result: null, error: null, reasonCode: 'SUCCEEDED' as const, reasonText: null, response: null };
    for (let i = 0; i < RUNS; i += WORKER_BATCH) {
      await protocol.finishMany(db, owner, held.slice(i, i + WORKER_BATCH).map((h) => ({ ...h, verdict: succeeded })));
    }
    const verdict = spent();
    const after = await updatesAfter(db, box, renewed.all + RUNS);
    await db.end();
    const share = (hot: number, all: number) => hot / Math.max(1, all);
    return {
      insert,
      claim,
      renewal,
      verdict,
      hot: share(claimed.hot - before.hot + after.hot - renewed.hot, claimed.all - before.all + after.all - renewed.all),
      hotRenewals: share(renewed.hot - claimed.hot, renewed.all - claimed.all),
    };
  } finally {
    if (!db.ended) await db.end();
  }
}

export async function ledgerScenario(): Promise<void> {
  const template = await sandbox('ledger_tpl');
  const client = await template.db.connect();
  try {
    await migrate(client, readMigrations(defaultMigrationsDir()));
  } finally {
    client.release();
  }
  await template.db.end();
  const ledgers = { kairos: await sandbox('ledger', template.name), 'without the indexes': await sandbox('ledger_hot', template.name) };
  try {
    const { rows } = await ledgers['without the indexes'].db.query<{ name: string; def: string }>(
      `SELECT indexname AS name, indexdef AS def FROM pg_indexes WHERE tablename = 'runs'`,
    );
    const dropped = rows.filter((r) => CHANGED_BY_CLAIM_OR_VERDICT.test(r.def.replace(/^.* USING \w+ /, '')));
    for (const index of dropped) await ledgers['without the indexes'].db.query(`DROP INDEX ${index.name}`);
    await ledgers['without the indexes'].db.query('ALTER TABLE runs SET (fillfactor = 70)');
    const results: Record<string, Round[]> = { kairos: [], 'without the indexes': [] };
    // A warm-up round each, then the ledgers alternate which goes first.
    for (const box of Object.values(ledgers)) await round(box);
    for (let r = 0; r < ROUNDS; r++) {
      const order = (r % 2 === 0 ? ['kairos', 'without the indexes'] : ['without the indexes', 'kairos']) as (keyof typeof ledgers)[];
      for (const name of order) results[name]!.push(await round(ledgers[name]));
    }
    const row = (label: string, rounds: Round[]): string[] => {
      const m = (pick: (r: Round) => number) => median(rounds.map(pick));
      const [insert, claim, verdict] = [m((r) => r.insert), m((r) => r.claim), m((r) => r.verdict)];
      return [label, fmt(insert), fmt(claim), fmt(m((r) => r.renewal)), fmt(verdict), fmt(insert + claim + verdict), `${fmt(100 * m((r) => r.hot))} %`, `${fmt(100 * m((r) => r.hotRenewals))} %`];
    };
    printTable([
      [
        `the ledger's writes of a run (Postgres backend CPU, µs per run, ${RUNS} runs, median of ${ROUNDS})`,
        'insert',
        'claim',
        'renewal',
        'verdict',
        'insert + claim + verdict',
        'heap-only claims and verdicts',
        'heap-only renewals',
      ],
      row('Kairos', results.kairos!),
      row(`without the ${dropped.length} indexes the claim or the verdict changes (fillfactor 70)`, results['without the indexes']!),
    ]);
    process.stdout.write(`indexes left out: ${dropped.map((i) => i.name).join(', ')}\n`);
  } finally {
    await Promise.all([...Object.values(ledgers).map((l) => l.drop()), template.drop()]);
  }
}
