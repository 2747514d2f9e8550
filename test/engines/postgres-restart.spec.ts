/**
 * Postgres itself restarting under Kairos, not only a pooler dropping connections: the ledger is a
 * server of its own here (the embedded one, on its own port, so stopping it touches no other test),
 * with an all-in-one process and a second scheduler on it. While the server is down no process
 * exits and `/health/ready` says Postgres is down; once it is back every role reconnects, a leader
 * leads again at a higher epoch, and the every-second schedule fires each slot once.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '@kairos/ledger';
import { freePort } from '../support/engines.js';
import { api, sleep, SPAWNING_TIMEOUT_MS, spawnKairos, useTestEnvironment, waitFor, type KairosChild } from '../support/kairos.js';
import { postgresReportedDown, readyAgain } from './workload.js';

describe('Postgres restarting under Kairos', () => {
  const t = useTestEnvironment();
  const dataDir = mkdtempSync(join(tmpdir(), 'kairos-restart-'));
  let port: number;
  let server: EmbeddedPostgres;
  let ledger: pg.Pool;
  const processes: KairosChild[] = [];

  const start = async (): Promise<EmbeddedPostgres> => startEmbeddedPostgres({ dataDir, port, note: () => undefined });

  beforeAll(async () => {
    port = await freePort();
    server = await start();
    const env = t.env({ DATABASE_URL: server.url, KAIROS_LEADER_TTL: '2s' });
    processes.push(spawnKairos('kairos', env));
    await processes[0]!.ready;
    processes.push(spawnKairos('scheduler', env));
    await processes[1]!.ready;
    ledger = new pg.Pool({ connectionString: server.url, max: 2 });
    ledger.on('error', () => undefined);
  }, SPAWNING_TIMEOUT_MS);

  afterAll(async () => {
    for (const p of processes) p.process.kill('SIGKILL');
    await Promise.all(processes.map((p) => p.exited));
    await ledger?.end().catch(() => undefined);
    await server?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('keeps every process up while the server is down, says so on /health/ready, and fires each slot once after', async () => {
    const base = await processes[0]!.ready;
    const schedule = (
      await api(base).post('/v1/schedules', { name: 'through-a-restart', every: '1s', target: { type: 'handler', name: 'noop' }, catchup: { mode: 'all' }, overlap: 'allow' })
    ).body;
    const succeeded = async (): Promise<number> =>
      (await ledger.query(`SELECT count(*)::int AS n FROM runs WHERE schedule_id = $1 AND state = 'succeeded'`, [schedule.id])).rows[0].n;
    await waitFor(async () => ((await succeeded()) >= 3 ? true : undefined), 'three slots before the restart', 20_000);
    const epochBefore = (await ledger.query(`SELECT epoch FROM leases WHERE name = 'scheduler'`)).rows[0].epoch as number;

    await server.stop();
    const down = await postgresReportedDown(base);
    console.info(`while Postgres was down, /health/ready said: ${down.message}`);
    await sleep(3_000);
    server = await start();
    const restartedAt = Date.now();

    await readyAgain(base);
    const before = await succeeded();
    await waitFor(async () => ((await succeeded()) >= before + 3 ? true : undefined), 'three slots after the restart', 30_000);
    console.info(`after the restart, readiness and the schedule recovered within ${Date.now() - restartedAt} ms`);
    for (const p of processes) expect(p.process.exitCode, p.output().slice(-2_000)).toBeNull();

    // A leader leads again, at a higher epoch: the one before lost its presence connection with the server.
    const lease = (await ledger.query(`SELECT epoch, expires_at > now() AS alive FROM leases WHERE name = 'scheduler'`)).rows[0];
    expect(lease.alive).toBe(true);
    expect(lease.epoch).toBeGreaterThan(epochBefore);
    // Each slot once, a second apart, across the outage (catch-up all fired the slots it missed).
    const slots = (await ledger.query(`SELECT scheduled_for, outcome FROM ticks WHERE schedule_id = $1 ORDER BY scheduled_for`, [schedule.id])).rows;
    for (let i = 1; i < slots.length; i++) expect(new Date(slots[i].scheduled_for).getTime() - new Date(slots[i - 1].scheduled_for).getTime()).toBe(1_000);
    const runs = (await ledger.query(`SELECT count(*)::int AS n, count(DISTINCT scheduled_for)::int AS d FROM runs WHERE schedule_id = $1`, [schedule.id])).rows[0];
    expect(runs.n).toBe(runs.d);
    expect(runs.n).toBe(slots.filter((s) => s.outcome === 'triggered').length);
  }, 120_000);
});
