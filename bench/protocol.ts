/**
 * The worker protocol's cost: a worker's hot path (claim a batch of runs, write their verdicts)
 * through the kairos_worker functions, beside the same statements sent directly, as workers sent
 * them before the protocol. The direct statements are read out of the functions' own bodies in the
 * database (the query each function returns, its parameters bound in their place), so both sides
 * run exactly the same SQL and differ only by the function call and its scope check. Each round
 * runs both sides, the first side alternating from round to round, over fresh due runs, in batches
 * of the worker's size, on one connection each; the median of the rounds' ratios is reported.
 */
import pg from 'pg';
import { defaultMigrationsDir, migrate, readMigrations } from '@kairos/ledger';
import { fmt, median, printTable, sandbox } from './sandbox.js';

const RUNS_PER_ROUND = Number(process.env.KAIROS_BENCH_PROTOCOL_RUNS ?? 10_000);
/** Rounds are short (a second or two each) and the machine noisy: more of them than the other scenarios take. */
const ROUNDS = Number(process.env.KAIROS_BENCH_PROTOCOL_ROUNDS ?? 9);
/** The worker's batch size (its MicroBatcher's maxBatch). */
const BATCH = 256;
const TTL_MS = 30_000;

/** The query `kairos_worker.<name>` returns, with its named parameters as positional ones. */
async function bodyOf(db: pg.Pool, name: string, params: Record<string, string>): Promise<string> {
  const { rows } = await db.query<{ src: string }>(`SELECT prosrc AS src FROM pg_proc WHERE proname = $1 AND pronamespace = 'kairos_worker'::regnamespace`, [name]);
  const query = /RETURN QUERY([\s\S]*);\s*END\s*$/.exec(rows[0]!.src)?.[1];
  if (!query) throw new Error(`bench: kairos_worker.${name} returns no query`);
  return Object.entries(params).reduce((sql, [param, positional]) => sql.replace(new RegExp(`\\b${param}\\b`, 'g'), positional), query);
}

interface Side {
  claim(ids: string[]): Promise<{ id: string; leaseEpoch: number }[]>;
  finish(verdicts: string): Promise<number>;
}

async function dueRuns(db: pg.Pool, count: number): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    `INSERT INTO runs (id, namespace_id, origin, scheduled_for, available_at, state, max_attempts, target, retry, timeout_ms, enqueued_at)
     SELECT gen_random_uuid(), (SELECT id FROM namespaces WHERE name = 'default'), 'manual', now(), now() - interval '1 second', 'queued', 1,
            '{"type":"handler","name":"noop","queue":"default"}', '{}', 60000, now()
     FROM generate_series(1, $1) RETURNING id`,
    [count],
  );
  return rows.map((r) => r.id);
}

/** Runs per second through `side`: every run claimed and finished, a batch at a time. */
async function round(side: Side, ids: string[], owner: string): Promise<number> {
  const started = performance.now();
  for (let i = 0; i < ids.length; i += BATCH) {
    const claimed = await side.claim(ids.slice(i, i + BATCH));
    const verdicts = JSON.stringify(
      claimed.map((r) => ({ id: r.id, epoch: r.leaseEpoch, state: 'succeeded', result: 'null', error: null, reason_code: 'SUCCEEDED', reason_text: null, response: null })),
    );
    if ((await side.finish(verdicts)) !== claimed.length || claimed.length === 0) throw new Error(`bench: ${owner} lost runs of its batch`);
  }
  return (ids.length * 1000) / (performance.now() - started);
}

export async function protocolScenario(): Promise<void> {
  const box = await sandbox('protocol');
  const client = await box.db.connect();
  try {
    await migrate(client, readMigrations(defaultMigrationsDir()));
  } finally {
    client.release();
  }
  const claimSql = await bodyOf(box.db, 'claim_runs', { _owner: '$1::text', _run_ids: '$2::uuid[]', _ttl_ms: '$3::bigint' });
  const finishSql = await bodyOf(box.db, 'finish_runs', { _owner: '$1::text', _verdicts: '$2::json' });
  const viaFunctions = new pg.Pool({ connectionString: box.url, max: 1 });
  // The direct statements ran on connections that rule sequential scans out, as the functions do.
  const direct = new pg.Pool({ connectionString: box.url, max: 1, options: '-c enable_seqscan=off' });
  const sides: Record<'functions' | 'direct', Side> = {
    functions: {
      claim: async (ids) => (await viaFunctions.query({ name: 'claim', text: `SELECT * FROM kairos_worker.claim_runs($1, $2::uuid[], $3)`, values: ['bench-f', ids, TTL_MS] })).rows,
      finish: async (verdicts) => (await viaFunctions.query({ name: 'finish', text: `SELECT id FROM kairos_worker.finish_runs($1, $2::json)`, values: ['bench-f', verdicts] })).rowCount!,
    },
    direct: {
      claim: async (ids) =>
        (await direct.query<{ id: string; lease_epoch: number }>({ name: 'claim', text: claimSql, values: ['bench-d', ids, TTL_MS] })).rows.map((r) => ({
          id: r.id,
          leaseEpoch: r.lease_epoch,
        })),
      finish: async (verdicts) => (await direct.query({ name: 'finish', text: finishSql, values: ['bench-d', verdicts] })).rowCount!,
    },
  };
  try {
    // A warm-up round each, so both have planned and cached their statements.
    for (const [name, side] of Object.entries(sides)) await round(side, await dueRuns(box.db, 2 * BATCH), `warm-up ${name}`);
    const rates: Record<string, number[]> = { functions: [], direct: [] };
    for (let r = 0; r < ROUNDS; r++) {
      // Each side goes first in every other round: neither always finds the table as the other left it.
      const order = r % 2 === 0 ? (['functions', 'direct'] as const) : (['direct', 'functions'] as const);
      for (const name of order) {
        const side = sides[name];
        // The same table for every round: the runs of the last one gone, the new ones analyzed.
        await box.db.query(`DELETE FROM runs`);
        const ids = await dueRuns(box.db, RUNS_PER_ROUND);
        await box.db.query('VACUUM ANALYZE runs');
        rates[name]!.push(await round(side, ids, name));
      }
    }
    // Each round's two sides ran back to back on the same machine state: their ratio is the figure.
    const ratios = rates.functions!.map((f, r) => f / rates.direct![r]!);
    printTable([
      ['worker hot path (claim + verdict, batches of 256)', 'runs/s (median)', 'rounds'],
      ['direct SQL (before the protocol)', fmt(median(rates.direct!)), rates.direct!.map((x) => fmt(x)).join(' ')],
      ['kairos_worker functions', fmt(median(rates.functions!)), rates.functions!.map((x) => fmt(x)).join(' ')],
      ['functions / direct (median of the rounds)', fmt(median(ratios), 2), ratios.map((x) => fmt(x, 2)).join(' ')],
    ]);
    process.stdout.write('target: the functions no slower than 0.95x the direct SQL\n');
  } finally {
    await viaFunctions.end();
    await direct.end();
    await box.drop();
  }
}
