/**
 * The cluster's chaos: Kairos as separate processes (an API, two schedulers, two workers), on one
 * Redis with Postgres itself, and on a Redis Cluster with DATABASE_URL on PgBouncer in transaction
 * mode. While an every-second schedule, an every-second four-step graph and 1,000 ad-hoc runs are
 * under way, the leading scheduler and a worker are killed with -9 and the transport breaks: on one
 * Redis every key of the queues is lost; on the Cluster the master that holds the queues is killed
 * and the pooler drops every connection for two seconds. Nothing is lost or doubled, every run has
 * ended within RUNS_END_WITHIN_MS of the faults (or the test names each run left and why), and
 * `fsck` finds nothing. The workers hold on to the verdicts they could not write while the pooler
 * was away, and write them once it is back.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPgBouncer, startRedisCluster, type PgBouncerUnderTest, type RedisClusterUnderTest } from '../support/engines.js';
import { SPAWNING_TIMEOUT_MS, spawnKairos, useTestEnvironment, waitFor, wipeTransport, type KairosChild, type TestEnvironment } from '../support/kairos.js';
import { ALLOW_LOOPBACK, WORKLOAD_LEASES, audit, slotsRan, startWorkload } from './workload.js';

/**
 * Every run has ended this long after the faults: a run the killed worker held waits out its lease
 * (WORKLOAD_LEASES, which also outlive the pooler's outage, so a worker keeps its verdicts through
 * it) and the reaper's pass, then runs again; the rest is the backlog draining on a busy machine.
 */
const RUNS_END_WITHIN_MS = 90_000;

interface Engine {
  name: string;
  /** Starts what the engine needs, and answers the variables that point Kairos at it. */
  start(t: TestEnvironment): Promise<Record<string, string>>;
  /** Breaks the transport (and the database's pooler) under load. */
  breakDown(t: TestEnvironment, more: () => Promise<void>): Promise<void>;
  stop(): Promise<void>;
}

let cluster: RedisClusterUnderTest | undefined;
let pooler: PgBouncerUnderTest | undefined;

const ENGINES: Engine[] = [
  {
    name: 'one Redis, Postgres itself',
    start: async () => ({}),
    breakDown: async (t, more) => {
      await wipeTransport(t);
      await more();
    },
    stop: async () => undefined,
  },
  {
    name: 'Redis Cluster, PgBouncer',
    start: async (t) => {
      [cluster, pooler] = await Promise.all([startRedisCluster(), startPgBouncer()]);
      return { REDIS_URL: '', REDIS_CLUSTER_NODES: cluster.nodesVariable, DATABASE_URL: pooler.url(new URL(t.databaseUrl).pathname.slice(1)), DATABASE_DIRECT_URL: t.databaseUrl };
    },
    breakDown: async (t, more) => {
      // The master of the default queue's first shard (a Cluster splits each queue in twice its masters' count).
      const key = `{${t.redisPrefix}:kairos-runs:0}`;
      const master = await cluster!.masterOf(key);
      await cluster!.kill(master);
      await more();
      await pooler!.restart(2_000);
      await cluster!.failedOver(key, master);
    },
    stop: async () => {
      await Promise.all([cluster?.stop(), pooler?.stop()]);
    },
  },
];

describe.each(ENGINES)('chaos on $name', (engine) => {
  const t = useTestEnvironment();
  let apiProcess: KairosChild;
  const schedulers: KairosChild[] = [];
  const workers: KairosChild[] = [];

  beforeAll(async () => {
    const env = t.env({ ...ALLOW_LOOPBACK, ...(await engine.start(t)), ...WORKLOAD_LEASES });
    apiProcess = spawnKairos('api', env);
    await apiProcess.ready;
    for (let i = 0; i < 2; i++) schedulers.push(spawnKairos('scheduler', env));
    for (let i = 0; i < 2; i++) workers.push(spawnKairos('worker', env));
    await Promise.all([...schedulers, ...workers].map((p) => p.ready));
  }, SPAWNING_TIMEOUT_MS);

  afterAll(async () => {
    for (const p of [apiProcess, ...schedulers, ...workers]) p?.process.kill('SIGKILL');
    await engine.stop();
  });

  it('kills the leader and a worker and breaks the transport under load, and loses and doubles nothing', async () => {
    const workload = await startWorkload(await apiProcess.ready);
    try {
      await slotsRan(t, workload, 2);
      await workload.submit(500);
      const holder = String((await t.db.query(`SELECT holder FROM leases WHERE name = 'scheduler'`)).rows[0].holder);
      const leader = schedulers.find((s) => s.process.pid === Number(holder.split(':')[1]))!;
      leader.process.kill('SIGKILL');
      const killedAt = Date.now();
      const killedWorker = workers[0]!;
      killedWorker.process.kill('SIGKILL');
      await engine.breakDown(t, () => workload.submit(500));
      await waitFor(
        async () => ((await t.db.query(`SELECT holder FROM leases WHERE name = 'scheduler' AND expires_at > now()`)).rows[0]?.holder !== holder ? true : undefined),
        'the standby to lead',
        10_000,
      );
      const ranBefore = (await t.db.query(`SELECT count(*)::int AS n FROM runs WHERE schedule_id = $1 AND state = 'succeeded'`, [workload.scheduleId])).rows[0].n;
      await slotsRan(t, workload, ranBefore + 3);
      await audit(t, workload, { across: killedAt, until: Date.now() - 1_000 }, RUNS_END_WITHIN_MS);
      const survivors = [apiProcess, ...workers, ...schedulers].filter((p) => p !== leader && p !== killedWorker);
      for (const p of survivors) expect(p.process.exitCode, p.output().slice(-2_000)).toBeNull();
    } finally {
      await workload.stop();
    }
  }, 240_000);
});
