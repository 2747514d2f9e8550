/**
 * The cluster's chaos on the production engines at once: Kairos as separate processes (an API, two
 * schedulers, two workers) on a Redis Cluster, with DATABASE_URL on PgBouncer in transaction mode.
 * While an every-second schedule and 1,000 ad-hoc runs are under way, the leading scheduler is
 * killed with -9, the Redis master that holds the queues is killed, and the pooler drops every
 * connection for two seconds. Nothing is lost or doubled: the workers hold on to the verdicts they
 * could not write while the pooler was away, and write them once it is back.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPgBouncer, startRedisCluster, type PgBouncerUnderTest, type RedisClusterUnderTest } from '../support/engines.js';
import { SPAWNING_TIMEOUT_MS, spawnKairos, useTestEnvironment, waitFor, type KairosChild } from '../support/kairos.js';
import { ALLOW_LOOPBACK, audit, slotsRan, startWorkload } from './workload.js';

describe('chaos on Redis Cluster and PgBouncer', () => {
  const t = useTestEnvironment();
  let cluster: RedisClusterUnderTest;
  let pooler: PgBouncerUnderTest;
  let apiProcess: KairosChild;
  const schedulers: KairosChild[] = [];
  const workers: KairosChild[] = [];

  beforeAll(async () => {
    [cluster, pooler] = await Promise.all([startRedisCluster(), startPgBouncer()]);
    const env = t.env({
      ...ALLOW_LOOPBACK,
      REDIS_URL: '',
      REDIS_CLUSTER_NODES: cluster.nodesVariable,
      DATABASE_URL: pooler.url(new URL(t.databaseUrl).pathname.slice(1)),
      DATABASE_DIRECT_URL: t.databaseUrl,
      // Longer than the pooler's outage with room to spare, as the default (30 s) is: a worker keeps
      // its verdicts through the outage, and its leases outlive it.
      KAIROS_RUN_LEASE_TTL: '10s',
    });
    apiProcess = spawnKairos('api', env);
    await apiProcess.ready;
    for (let i = 0; i < 2; i++) schedulers.push(spawnKairos('scheduler', env));
    for (let i = 0; i < 2; i++) workers.push(spawnKairos('worker', env));
    await Promise.all([...schedulers, ...workers].map((p) => p.ready));
  }, SPAWNING_TIMEOUT_MS);

  afterAll(async () => {
    for (const p of [apiProcess, ...schedulers, ...workers]) p?.process.kill('SIGKILL');
    await Promise.all([cluster?.stop(), pooler?.stop()]);
  });

  it('kills the leader, the queues’ Redis master and the pooler’s connections under load, and loses and doubles nothing', async () => {
    const workload = await startWorkload(await apiProcess.ready);
    try {
      await slotsRan(t, workload, 2);
      await workload.submit(500);
      const holder = String((await t.db.query(`SELECT holder FROM leases WHERE name = 'scheduler'`)).rows[0].holder);
      const leader = schedulers.find((s) => s.process.pid === Number(holder.split(':')[1]))!;
      leader.process.kill('SIGKILL');
      const killedAt = Date.now();
      const key = `{${t.redisPrefix}}`;
      const master = await cluster.masterOf(key);
      await cluster.kill(master);
      await workload.submit(500);
      await pooler.restart(2_000);
      await cluster.failedOver(key, master);
      await waitFor(
        async () => ((await t.db.query(`SELECT holder FROM leases WHERE name = 'scheduler' AND expires_at > now()`)).rows[0]?.holder !== holder ? true : undefined),
        'the standby to lead',
        10_000,
      );
      const ranBefore = (await t.db.query(`SELECT count(*)::int AS n FROM runs WHERE schedule_id = $1 AND state = 'succeeded'`, [workload.scheduleId])).rows[0].n;
      await slotsRan(t, workload, ranBefore + 3);
      await audit(t, workload, { across: killedAt, until: Date.now() - 1_000 });
      for (const p of [apiProcess, ...workers, ...schedulers.filter((s) => s !== leader)]) expect(p.process.exitCode, p.output().slice(-2_000)).toBeNull();
    } finally {
      await workload.stop();
    }
  }, 240_000);
});
