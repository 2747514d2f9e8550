/**
 * Retention of a large expired history, as the leader prunes it today: KAIROS_BENCH_RETENTION_RUNS
 * (1,000,000) runs that ended 40 days ago under the default retention (30 days), and 1,000 runs of
 * the same age still queued, which must stay. The leader's pruning statement runs batch after batch
 * (RetentionRepository.pruneRuns, at the default batch of 500 and at the largest, 10,000) until a
 * pass finds nothing: the time it takes, the Postgres backend's CPU, and the runs table's size on
 * disk before, after, and after a plain VACUUM.
 */
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { RetentionRepository, defaultMigrationsDir, migrate, readMigrations, type RetentionPolicy } from '@kairos/ledger';
import { fmt, printTable, sandbox } from './sandbox.js';

const RUNS = Number(process.env.KAIROS_BENCH_RETENTION_RUNS ?? 1_000_000);
const ACTIVE = 1_000;
const DAY_MS = 86_400_000;

/** CPU time of a process so far, in seconds (clock ticks of 10 ms). */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** Runs created `ageDays` ago (time-ordered ids of that instant), `n` of them, ended or still queued. */
async function seed(db: pg.Pool, n: number, ageDays: number, ended: boolean): Promise<void> {
  const chunk = 100_000;
  for (let from = 0; from < n; from += chunk) {
    await db.query(
      `WITH made AS (
         SELECT g, now() - $3 * interval '1 day' + g * interval '1 millisecond' AS at,
                lpad(to_hex((extract(epoch FROM now() - $3 * interval '1 day') * 1000)::bigint + g), 12, '0') AS ms, md5(g::text || $4) AS r
         FROM generate_series($1::bigint, $2::bigint) g
       )
       INSERT INTO runs (id, namespace_id, origin, scheduled_for, available_at, state, max_attempts, target, retry, timeout_ms,
                         enqueued_at, started_at, finished_at, reason_code, result, created_by, attempt)
       SELECT (substr(ms, 1, 8) || '-' || substr(ms, 9, 4) || '-7' || substr(r, 1, 3) || '-8' || substr(r, 4, 3) || '-' || substr(r, 7, 12))::uuid,
              (SELECT id FROM namespaces WHERE name = 'default'), 'manual', at, at,
              CASE WHEN $5 THEN 'succeeded' ELSE 'queued' END, 1, '{"type":"handler","name":"noop","queue":"default"}', '{}', 60000,
              at, CASE WHEN $5 THEN at END, CASE WHEN $5 THEN at + interval '5 milliseconds' END, CASE WHEN $5 THEN 'SUCCEEDED' END,
              CASE WHEN $5 THEN 'null'::json END, 'bench', 1
       FROM made`,
      [from, Math.min(n, from + chunk) - 1, ageDays, ended ? 'ended' : 'active', ended],
    );
  }
}

async function tableBytes(db: pg.Pool): Promise<number> {
  return Number((await db.query<{ bytes: string }>(`SELECT pg_total_relation_size('runs') AS bytes`)).rows[0]!.bytes);
}

export async function retentionScenario(): Promise<void> {
  const rows: string[][] = [['retention of expired runs (the leader\'s pruning, batch after batch)', 'runs pruned', 'seconds', 'Postgres CPU s', 'runs table before / after / after VACUUM (MB)']];
  for (const batchSize of [500, 10_000]) {
    const box = await sandbox('retention');
    const client = await box.db.connect();
    try {
      await migrate(client, readMigrations(defaultMigrationsDir()));
    } finally {
      client.release();
    }
    const pruner = new pg.Pool({ connectionString: box.url, max: 1 });
    try {
      await seed(box.db, RUNS, 40, true);
      await seed(box.db, ACTIVE, 40, false);
      await box.db.query('VACUUM ANALYZE runs');
      const before = await tableBytes(box.db);
      const pid = (await pruner.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
      const policy: RetentionPolicy = { retentionMs: 30 * DAY_MS, deadLetterRetentionMs: 90 * DAY_MS, eventRetentionMs: 7 * DAY_MS, batchSize };
      const repository = new RetentionRepository();
      const cpuBefore = cpuSeconds(pid);
      const started = performance.now();
      let pruned = 0;
      let cursor: string | null = null;
      for (;;) {
        const batch = await repository.pruneRuns(pruner, policy, cursor);
        pruned += batch.runs;
        if (batch.runs < batchSize) break;
        cursor = batch.lastId;
      }
      const seconds = (performance.now() - started) / 1000;
      const cpu = cpuSeconds(pid) - cpuBefore;
      const left = Number((await box.db.query<{ n: string }>(`SELECT count(*) AS n FROM runs`)).rows[0]!.n);
      if (pruned !== RUNS || left !== ACTIVE) throw new Error(`bench: pruned ${pruned} of ${RUNS}, ${left} runs left (${ACTIVE} active expected)`);
      const after = await tableBytes(box.db);
      await box.db.query('VACUUM runs');
      const vacuumed = await tableBytes(box.db);
      const mb = (bytes: number) => fmt(bytes / 1_048_576);
      rows.push([`batches of ${batchSize}`, String(pruned), fmt(seconds, 1), fmt(cpu, 1), `${mb(before)} / ${mb(after)} / ${mb(vacuumed)}`]);
    } finally {
      await pruner.end();
      await box.drop();
    }
  }
  printTable(rows);
  process.stdout.write(`${RUNS} runs ended 40 days ago, ${ACTIVE} of the same age still queued (kept); retention 30 days\n`);
}
