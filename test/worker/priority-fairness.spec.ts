/**
 * Priority and fair share, end to end on the built-in worker, behind a backlog the workers take a
 * few seconds to drain: runs of priority 1 created behind 1,500 runs of priority 5, or of the
 * default priority (whose jobs BullMQ keeps apart), start within 2 s (p99) and before the backlog is done; a tenant's 50 runs created behind another tenant's
 * 1,500 start within 2 s (p99) while the other keeps running; weights 3 and 1 share starts 3 : 1
 * while both have backlog; a key with one run behind a key with 3,000 starts within the bound the
 * window gives (its size over the start rate); and a worker killed with -9 mid-backlog loses no run.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { StartedKairos } from '@kairos/process';
import { api, spawnKairos, startInProcess, useTestEnvironment, waitFor, type KairosChild } from '../support/kairos.js';
import { allSucceeded, createRuns, percentile } from '../support/run-batches.js';
import { allowance, watchMachineLag } from '../support/timer-lag.js';

interface Started {
  id: string;
  key: string | null;
  priority: number;
  createdAt: Date;
  startedAt: Date | null;
}

describe('priority and fair share', () => {
  const t = useTestEnvironment();
  const started: StartedKairos[] = [];
  const children: KairosChild[] = [];

  afterEach(async () => {
    for (const child of children.splice(0)) child.process.kill('SIGKILL');
    await Promise.all(started.splice(0).map((k) => k.app.close()));
  });

  /** All roles in one process, its worker taking 8 runs at a time: about 200 starts a second on runs of 10 ms here. */
  async function start(env: Record<string, string> = {}): Promise<ReturnType<typeof api>> {
    const kairos = await startInProcess(t.env({ KAIROS_WORKER_CONCURRENCY: '8', ...env }));
    started.push(kairos);
    await waitFor(async () => ((await t.db.query(`SELECT 1 FROM leases WHERE name = 'scheduler' AND expires_at > now()`)).rowCount ? true : undefined), 'a leading scheduler');
    return api(kairos.url);
  }

  async function runsOf(ids: readonly string[]): Promise<Started[]> {
    const { rows } = await t.db.query<Started>(
      `SELECT id, fairness_key AS key, priority, created_at AS "createdAt", started_at AS "startedAt" FROM runs WHERE id = ANY($1::uuid[])`,
      [ids],
    );
    return rows;
  }

  const sleepRun = (extra: Record<string, unknown>, payload: Record<string, unknown> = {}) => ({
    target: { type: 'handler', name: 'sleep' },
    payload: { ms: 10, ...payload },
    ...extra,
  });

  it.each([5, 3])('runs of priority 1 behind 1,500 of priority %i start within 2 s (p99), before the backlog is done', async (backlogPriority) => {
    const client = await start();
    const lag = await watchMachineLag();
    const backlog = await createRuns(client, Array.from({ length: 1_500 }, () => sleepRun({ priority: backlogPriority })));
    // The backlog is under way.
    await waitFor(async () => ((await t.db.query(`SELECT 1 FROM runs WHERE state = 'succeeded' LIMIT 1`)).rowCount ? true : undefined), 'the backlog to start');
    const urgent = await createRuns(client, Array.from({ length: 50 }, () => sleepRun({ priority: 1 })));
    await allSucceeded(t.db, urgent, 60_000);
    const { rows } = await t.db.query<{ left: number }>(`SELECT count(*)::int AS left FROM runs WHERE id = ANY($1::uuid[]) AND started_at IS NULL`, [backlog]);
    const waits = (await runsOf(urgent)).map((r) => r.startedAt!.getTime() - r.createdAt.getTime());
    const machine = await lag.stop();
    console.info(`priority 1 behind priority ${backlogPriority}: p50 ${percentile(waits, 50)} ms, p99 ${percentile(waits, 99)} ms; ${rows[0]!.left} of the backlog not started yet (${machine.describe()})`);
    expect(rows[0]!.left, 'the backlog was still waiting when the urgent runs had all started').toBeGreaterThan(0);
    expect(percentile(waits, 99)).toBeLessThanOrEqual(2_000 + allowance(machine));
    await allSucceeded(t.db, backlog, 120_000);
  });

  it("a tenant's 50 runs behind another tenant's 1,500 start within 2 s (p99) while the other keeps running", async () => {
    const client = await start();
    const lag = await watchMachineLag();
    const fairness = { key: 'tenant-{{payload.tenant}}' };
    const a = await createRuns(client, Array.from({ length: 1_500 }, () => sleepRun({ fairness }, { tenant: 'a' })));
    await waitFor(async () => ((await t.db.query(`SELECT 1 FROM runs WHERE state = 'succeeded' LIMIT 1`)).rowCount ? true : undefined), "tenant a's runs to start");
    // A run waiting its turn says so.
    const waiting = await client.get(`/v1/runs/${a.at(-1)}`);
    expect(waiting.body).toMatchObject({ state: 'queued', deferReason: 'FAIR_SHARE', fairnessKey: 'tenant-a', priority: 3 });
    const createdB = Date.now();
    const b = await createRuns(client, Array.from({ length: 50 }, () => sleepRun({ fairness }, { tenant: 'b' })));
    await allSucceeded(t.db, b, 60_000);
    const bRuns = await runsOf(b);
    const waits = bRuns.map((r) => r.startedAt!.getTime() - r.createdAt.getTime());
    const lastB = Math.max(...bRuns.map((r) => r.startedAt!.getTime()));
    const { rows } = await t.db.query<{ during: number; left: number }>(
      `SELECT count(*) FILTER (WHERE started_at BETWEEN $2 AND $3)::int AS during, count(*) FILTER (WHERE started_at IS NULL OR started_at > $3)::int AS left
       FROM runs WHERE id = ANY($1::uuid[])`,
      [a, new Date(createdB), new Date(lastB)],
    );
    const machine = await lag.stop();
    console.info(`tenant b behind tenant a: p50 ${percentile(waits, 50)} ms, p99 ${percentile(waits, 99)} ms; a started ${rows[0]!.during} meanwhile, ${rows[0]!.left} after (${machine.describe()})`);
    expect(percentile(waits, 99)).toBeLessThanOrEqual(2_000 + allowance(machine));
    expect(rows[0]!.during, 'tenant a kept running').toBeGreaterThan(0);
    expect(rows[0]!.left, "tenant a's backlog was not done before b's runs started").toBeGreaterThan(0);
    await allSucceeded(t.db, a, 120_000);
  });

  it('weights 3 and 1 share starts within 10% of 3 : 1 while both have backlog; every run starts once', async () => {
    const client = await start();
    const bodies = Array.from({ length: 1_200 }, (_, i) =>
      i % 2 === 0 ? sleepRun({ fairness: { key: 'heavy', weight: 3 } }) : sleepRun({ fairness: { key: 'light', weight: 1 } }),
    );
    const ids = await createRuns(client, bodies);
    await allSucceeded(t.db, ids, 120_000);
    const runs = (await runsOf(ids)).sort((x, y) => x.startedAt!.getTime() - y.startedAt!.getTime() || x.id.localeCompare(y.id));
    // The first window of runs entered before anything waited, in the order they were made; then, while both
    // have backlog, the turns: 600 starts (each key has 536 left, and heavy runs out first, after about 715).
    const early = runs.slice(128, 728);
    const heavy = early.filter((r) => r.key === 'heavy').length;
    const light = early.filter((r) => r.key === 'light').length;
    console.info(`weights 3 : 1 over 600 starts after the first window: heavy ${heavy}, light ${light} (${(heavy / light).toFixed(2)} : 1)`);
    expect(heavy / light).toBeGreaterThanOrEqual(2.7);
    expect(heavy / light).toBeLessThanOrEqual(3.3);
    const { rows } = await t.db.query<{ attempts: number }>(`SELECT max(attempt)::int AS attempts FROM runs WHERE id = ANY($1::uuid[])`, [ids]);
    expect(rows[0]!.attempts).toBe(1);
  });

  it('a key with one run behind a key with 3,000 starts within the window over the start rate (128 runs at 200 a second, 0.64 s) plus 1 s', async () => {
    const client = await start();
    const lag = await watchMachineLag();
    const flood = await createRuns(client, Array.from({ length: 3_000 }, () => sleepRun({ fairness: { key: 'flood' } })));
    await waitFor(async () => ((await t.db.query(`SELECT 1 FROM runs WHERE state = 'succeeded' LIMIT 1`)).rowCount ? true : undefined), 'the flood to start');
    const [lone] = await createRuns(client, [sleepRun({ fairness: { key: 'lone' } })]);
    await allSucceeded(t.db, [lone!], 30_000);
    const [run] = await runsOf([lone!]);
    const wait = run!.startedAt!.getTime() - run!.createdAt.getTime();
    const machine = await lag.stop();
    console.info(`one run behind 3,000 of another key started after ${wait} ms (${machine.describe()})`);
    expect(wait).toBeLessThanOrEqual(1_500 + allowance(machine));
    // Stop the flood: cancelling its runs leaves nothing behind.
    const cancelled = await client.post('/v1/runs/bulk', { action: 'cancel', filter: { state: ['queued'] } });
    expect(cancelled.status).toBeLessThan(300);
    await waitFor(
      async () => ((await t.db.query(`SELECT 1 FROM runs WHERE id = ANY($1::uuid[]) AND state IN ('queued', 'running')`, [flood])).rowCount === 0 ? true : undefined),
      'the flood to end',
      60_000,
    );
    // The relay's next fill finds the keys with no run left and forgets them.
    await waitFor(async () => ((await t.db.query(`SELECT 1 FROM fair_keys`)).rowCount === 0 ? true : undefined), 'the keys to be forgotten', 10_000);
  });

  it('a worker killed with -9 mid-backlog loses no run, and the order still holds afterwards', async () => {
    const env = t.env({ KAIROS_WORKER_CONCURRENCY: '4', KAIROS_RUN_LEASE_TTL: '3s' });
    const control = await startInProcess(env, ['api', 'scheduler']);
    started.push(control);
    const client = api(control.url);
    const fairness = { key: 'tenant-{{payload.tenant}}' };
    const a = await createRuns(client, Array.from({ length: 800 }, () => sleepRun({ fairness }, { tenant: 'a' })));
    const worker = spawnKairos('worker', env);
    children.push(worker);
    await waitFor(async () => ((await t.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM runs WHERE id = ANY($1::uuid[]) AND state = 'succeeded'`, [a])).rows[0]!.n > 100 ? true : undefined), '100 runs of tenant a', 60_000);
    worker.process.kill('SIGKILL');
    const b = await createRuns(client, Array.from({ length: 40 }, () => sleepRun({ fairness }, { tenant: 'b' })));
    const createdB = Date.now();
    const second = spawnKairos('worker', env);
    children.push(second);
    await allSucceeded(t.db, [...a, ...b], 120_000);
    const bRuns = await runsOf(b);
    const lastB = Math.max(...bRuns.map((r) => r.startedAt!.getTime()));
    const { rows } = await t.db.query<{ after: number; attempts: number }>(
      `SELECT count(*) FILTER (WHERE started_at > $2)::int AS after, max(attempt)::int AS attempts FROM runs WHERE id = ANY($1::uuid[])`,
      [a, new Date(lastB)],
    );
    console.info(`after the crash, tenant b's 40 runs had all started ${lastB - createdB} ms after they were made; ${rows[0]!.after} of tenant a's started after them`);
    // Tenant b did not wait for tenant a's backlog: a had runs left to start after b's last one.
    expect(rows[0]!.after).toBeGreaterThan(0);
  });

  it('fsck finds a backlog in order, and names a run whose key lost its turn and a window left short', async () => {
    // The API alone: no worker claims, and no relay refills a window behind the test's back.
    const control = await startInProcess(t.env({}), ['api']);
    started.push(control);
    const client = api(control.url);
    // 128 runs fill the window, the other 72 wait their turn.
    await t.db.query(`INSERT INTO workers (id, queue, handlers, version, started_at, last_seen_at) VALUES ('host:1:idle', 'idle', '{noop}', 'v1', now(), now())`);
    const ids = await createRuns(client, Array.from({ length: 200 }, (_, i) => ({ target: { type: 'handler', name: 'noop', queue: 'idle' }, payload: { t: i % 3 }, fairness: { key: 't{{payload.t}}' } })));
    const { rows } = await t.db.query<{ waiting: number; inside: number }>(
      `SELECT count(*) FILTER (WHERE defer_reason = 'FAIR_SHARE')::int AS waiting, count(*) FILTER (WHERE held_at IS NULL AND enqueued_at IS NOT NULL)::int AS inside FROM runs WHERE id = ANY($1::uuid[])`,
      [ids],
    );
    expect(rows[0]).toEqual({ waiting: 72, inside: 128 });
    const { fsck } = await import('@kairos/ledger');
    // (The tests before leave runs of their own in this ledger: only the fair-share checks are read here.)
    const fairShare = async () => (await fsck(t.db)).filter((v) => v.check.startsWith('fair-share'));
    expect(await fairShare()).toEqual([]);
    // A minute later, the window emptied behind the ledger's back (no trigger took the next turns).
    await t.db.query(`UPDATE runs SET held_at = now() - interval '2 minutes' WHERE id = ANY($1::uuid[]) AND held_at IS NOT NULL`, [ids]);
    const client2 = await t.db.connect();
    try {
      await client2.query('BEGIN');
      await client2.query(`SET LOCAL session_replication_role = replica`);
      await client2.query(`UPDATE runs SET state = 'cancelled', reason_code = 'CANCELLED_BY_USER', finished_at = now() WHERE id = ANY($1::uuid[]) AND held_at IS NULL`, [ids]);
      await client2.query('COMMIT');
    } finally {
      client2.release();
    }
    expect((await fairShare()).map((v) => [v.check, v.subject])).toEqual([['fair-share-window-short', 'queue idle']]);
    // The turns lost as well: each waiting run is named.
    await t.db.query(`DELETE FROM fair_keys`);
    expect((await fairShare()).filter((v) => v.check === 'fair-share-backlog-has-turn')).toHaveLength(72);
  });
});
