/**
 * Kairos with DATABASE_URL on PgBouncer in transaction mode (max_prepared_statements unset, so a
 * named prepared statement would not survive from one transaction to the next): the end-to-end
 * smoke (schedules, runs, retries, a leader killed with -9, the pooler restarted under load) passes
 * with DATABASE_DIRECT_URL on Postgres itself, and again with no direct URL at all, where nothing
 * may keep a session: no presence lock is taken, and a killed leader is replaced once its lease expires.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPgBouncer, type PgBouncerUnderTest } from '../support/engines.js';
import { postgresReportedDown, readyAgain } from './workload.js';
import { api, runInState, sleep, SPAWNING_TIMEOUT_MS, spawnKairos, useTestEnvironment, waitFor, type KairosChild } from '../support/kairos.js';

const TTL_MS = 2_000;

let pooler: PgBouncerUnderTest;
beforeAll(async () => {
  pooler = await startPgBouncer();
});
afterAll(async () => {
  await pooler?.stop();
});

describe.each([
  ['with DATABASE_DIRECT_URL on Postgres', true],
  ['with no direct URL', false],
])('PgBouncer in transaction mode, %s', (_name, direct) => {
  const t = useTestEnvironment();
  let apiAndWorker: KairosChild;
  const schedulers: KairosChild[] = [];

  beforeAll(async () => {
    const database = new URL(t.databaseUrl).pathname.slice(1);
    const env = t.env({
      DATABASE_URL: direct ? pooler.url(database) : `${pooler.url(database)}?pgbouncer=true`,
      ...(direct && { DATABASE_DIRECT_URL: t.databaseUrl }),
      KAIROS_LEADER_TTL: `${TTL_MS}ms`,
    });
    // The first process applies the migrations through the pooler (or on the direct URL).
    apiAndWorker = spawnKairos('kairos', { ...env, KAIROS_ROLES: 'api,worker' });
    await apiAndWorker.ready;
    for (let i = 0; i < 2; i++) schedulers.push(spawnKairos('scheduler', env));
    await Promise.all(schedulers.map((s) => s.ready));
  }, SPAWNING_TIMEOUT_MS);

  afterAll(async () => {
    for (const p of [apiAndWorker, ...schedulers]) p?.process.kill('SIGKILL');
  });

  it('says in its banner how it uses the pooler', () => {
    expect(apiAndWorker.output()).toContain('through a transaction-mode pooler');
    expect(apiAndWorker.output()).toContain(direct ? 'sessions (presence locks, LISTEN) on 127.0.0.1:' : 'no DATABASE_DIRECT_URL');
  });

  it('runs schedules, ad-hoc runs and retries, and records every verdict through the pooler', async () => {
    const client = api(await apiAndWorker.ready);
    const schedule = await client.post('/v1/schedules', { name: 'smoke', every: '1s', target: { type: 'handler', name: 'echo' }, payload: { hi: 1 } });
    expect(schedule.status).toBe(201);
    const echoed = (await client.post('/v1/runs', { target: { type: 'handler', name: 'echo' }, payload: { n: 1 } })).body;
    const retried = (
      await client.post('/v1/runs', {
        target: { type: 'handler', name: 'fail' },
        payload: { times: 2 },
        retry: { maxAttempts: 3, backoff: { type: 'fixed', base: '100ms', max: '100ms', jitter: 0 } },
      })
    ).body;
    expect(await runInState(client, echoed.id)).toMatchObject({ state: 'succeeded', result: { n: 1 } });
    expect(await runInState(client, retried.id)).toMatchObject({ state: 'succeeded', attempt: 3, result: { succeededOnAttempt: 3 } });
    await waitFor(
      async () => ((await client.get(`/v1/runs?scheduleId=${schedule.body.id}&state=succeeded`)).body.items.length >= 3 ? true : undefined),
      'three slots of the schedule to succeed',
      20_000,
    );
    await client.delete(`/v1/schedules/${schedule.body.id}`);

    // Presence locks live on the direct URL only; with none, no session lock is taken anywhere.
    const { rows } = await t.db.query(
      `SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
    );
    if (direct) expect(rows[0].n).toBeGreaterThanOrEqual(2);
    else expect(rows[0].n).toBe(0);
  }, 60_000);

  it('fails over when the leader is killed with -9, never firing a slot twice', async () => {
    const client = api(await apiAndWorker.ready);
    const schedule = (
      await client.post('/v1/schedules', { name: 'failover', every: '1s', target: { type: 'handler', name: 'noop' }, catchup: { mode: 'all' }, overlap: 'allow' })
    ).body;
    const ran = async (since: number): Promise<number> =>
      (
        await t.db.query(`SELECT count(*)::int AS n FROM runs WHERE schedule_id = $1 AND state = 'succeeded' AND scheduled_for > to_timestamp($2 / 1000.0)`, [
          schedule.id,
          since,
        ])
      ).rows[0].n;
    await waitFor(async () => ((await ran(0)) >= 3 ? true : undefined), 'three slots under the first leader', 20_000);
    const holder = String((await t.db.query(`SELECT holder FROM leases WHERE name = 'scheduler'`)).rows[0].holder);
    expect(holder.endsWith('~lease-only')).toBe(!direct);
    const victim = schedulers.find((s) => s.process.pid === Number(holder.split(':')[1]))!;
    victim.process.kill('SIGKILL');
    const killedAt = Date.now();
    await victim.exited;
    const firstAfterKill = await waitFor(
      async () => {
        const { rows } = await t.db.query(`SELECT min(created_at) AS at FROM ticks WHERE schedule_id = $1 AND created_at > to_timestamp($2 / 1000.0)`, [
          schedule.id,
          killedAt,
        ]);
        return rows[0].at ? new Date(rows[0].at).getTime() : undefined;
      },
      'a slot fired by the standby',
      TTL_MS + 10_000,
    );
    console.info(`pgbouncer ${direct ? 'with' : 'without'} a direct URL: the standby fired ${firstAfterKill - killedAt} ms after the leader was killed`);
    // With presence locks the standby sees the leader gone at once; without, its lease must expire.
    expect(firstAfterKill - killedAt).toBeLessThanOrEqual(TTL_MS + 3_000);
    await waitFor(async () => ((await ran(killedAt)) >= 3 ? true : undefined), 'three slots after the kill', 20_000);
    await client.delete(`/v1/schedules/${schedule.id}`);
    const ticks = (await t.db.query(`SELECT scheduled_for FROM ticks WHERE schedule_id = $1 ORDER BY scheduled_for`, [schedule.id])).rows;
    const slots = ticks.map((tk) => new Date(tk.scheduled_for).getTime());
    for (let i = 1; i < slots.length; i++) expect(slots[i]! - slots[i - 1]!).toBe(1_000);
    const runs = (await t.db.query(`SELECT count(*)::int AS n, count(DISTINCT scheduled_for)::int AS d FROM runs WHERE schedule_id = $1`, [schedule.id])).rows[0];
    expect(runs.n).toBe(runs.d);
  }, 60_000);

  it('survives the pooler dropping every connection: no process exits, readiness says Postgres is down meanwhile, and work resumes', async () => {
    const base = await apiAndWorker.ready;
    const client = api(base);
    const restarting = pooler.restart(3_000);
    const down = await postgresReportedDown(base);
    expect(down.message).toMatch(/ECONNREFUSED|terminat|closed|Connection/i);
    await restarting;
    await readyAgain(base).catch((error: Error) => {
      // What each process and the pooler said: whether a process died, or why no scheduler leads.
      const processes = [apiAndWorker, ...schedulers].map(
        (p) => `--- pid ${p.process.pid} (exit ${p.process.exitCode ?? p.process.signalCode ?? 'none: running'}):\n${p.output().slice(-4_000)}`,
      );
      throw new Error([error.message, ...processes, `--- pgbouncer.log:\n${pooler.logTail()}`].join('\n'));
    });
    const run = (await client.post('/v1/runs', { target: { type: 'handler', name: 'echo' }, payload: { after: 'restart' } })).body;
    expect(await runInState(client, run.id)).toMatchObject({ state: 'succeeded' });
    await sleep(500);
    const live = [apiAndWorker, ...schedulers].filter((p) => p.process.exitCode === null && p.process.signalCode === null);
    // The scheduler killed in the failover case is the only one gone.
    expect(live.length).toBe(2);
  }, 90_000);
});
