/**
 * Kairos on a Redis Cluster (three masters, a replica each): every queue key lives under the
 * hash-tagged prefix, so BullMQ's scripts run on one slot, and when the master that owns it is
 * killed its replica takes over while an every-second schedule and a burst of 2,000 ad-hoc runs are
 * under way. What the dead master had not replicated, the reconciler re-creates from the ledger:
 * every run succeeds with its target called exactly once, and every slot fires once. The rate
 * limiter counts and the domain events stream in the cluster too.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedisCluster, type RedisClusterUnderTest } from '../support/engines.js';
import { api, sleep, SPAWNING_TIMEOUT_MS, spawnKairos, waitFor, useTestEnvironment, type KairosChild } from '../support/kairos.js';
import { ALLOW_LOOPBACK, WORKLOAD_LEASES, audit, slotsRan, startWorkload } from './workload.js';

/** Requests per second per caller: far above what the workload sends, well below the burst below. */
const RATE_LIMIT = 20;

describe('Redis Cluster', () => {
  const t = useTestEnvironment();
  let cluster: RedisClusterUnderTest;
  let kairos: KairosChild;

  beforeAll(async () => {
    cluster = await startRedisCluster();
    kairos = spawnKairos('kairos', t.env({ ...ALLOW_LOOPBACK, ...WORKLOAD_LEASES, REDIS_URL: '', REDIS_CLUSTER_NODES: cluster.nodesVariable, KAIROS_RATE_LIMIT: String(RATE_LIMIT) }));
    await kairos.ready;
  }, SPAWNING_TIMEOUT_MS);

  afterAll(async () => {
    kairos?.process.kill('SIGKILL');
    await cluster?.stop();
  });

  it('loses and doubles nothing of 2,000 runs and an every-second schedule while the master of the queues fails over', async () => {
    expect(kairos.output()).toMatch(/transport redis cluster 127\.0\.0\.1:\d+ \(\+2\)|redis cluster 127\.0\.0\.1/);
    const url = await kairos.ready;
    // The rate limiter counts in the cluster: a burst beyond the limit is refused.
    const statuses = await Promise.all(Array.from({ length: 3 * RATE_LIMIT }, () => fetch(`${url}/v1/schedules`).then((r) => r.status)));
    expect(statuses).toContain(429);
    await sleep(1_100);
    const workload = await startWorkload(url);
    try {
      await slotsRan(t, workload, 2);
      const key = `{${t.redisPrefix}}`;
      const master = await cluster.masterOf(key);
      // Half the burst is in the queues (or on its way) when their master dies, half comes during the failover.
      await workload.submit(1_000);
      await cluster.kill(master);
      const killedAt = Date.now();
      await workload.submit(1_000);
      const promoted = await cluster.failedOver(key, master);
      console.info(`cluster: the replica on ${promoted} took over the queues' slot ${Date.now() - killedAt} ms after its master was killed`);
      await slotsRan(t, workload, 8);
      await audit(t, workload, { across: killedAt, until: Date.now() - 1_000 });
      expect(kairos.process.exitCode).toBeNull();
      // Domain events go on into the stream after the failover: pausing the schedule is one.
      expect((await api(url).post(`/v1/schedules/${workload.scheduleId}/pause`)).status).toBe(200);
      const redis = cluster.client();
      try {
        const latest = await waitFor(async () => {
          const [entry] = (await redis.xrevrange(`${t.redisPrefix}:events`, '+', '-', 'COUNT', 1)) as [string, string[]][];
          return entry?.[1].includes('schedule.paused') ? entry[1] : undefined;
        }, 'the pause to reach the event stream');
        expect(latest).toContain(workload.scheduleId);
      } finally {
        redis.disconnect();
      }
    } finally {
      await workload.stop();
    }
  }, 240_000);

  it('makes a worker credential’s Redis user on every node, limited to its queues’ hash-tagged keys', async () => {
    const granted = await api(await kairos.ready).post('/v1/worker-credentials', { queues: ['media'] });
    expect(granted.status).toBe(201);
    expect(granted.body.redis).toMatchObject({ user: granted.body.role, applied: true });
    const redis = cluster.client();
    try {
      await new Promise((resolve) => redis.once('ready', resolve));
      const nodes = redis.nodes('all');
      expect(nodes.length).toBeGreaterThanOrEqual(5);
      for (const node of nodes) {
        const user = (await node.call('ACL', 'GETUSER', granted.body.role)) as unknown[];
        const keys = String(user[user.indexOf('keys') + 1]);
        expect(keys, `${node.options.port}`).toBe(`~{${t.redisPrefix}}:kairos-runs.media:*`);
      }
    } finally {
      redis.disconnect();
    }
  });
});
