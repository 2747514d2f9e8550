/**
 * Kairos on a Redis Cluster (three masters, a replica each): every queue key lives under the
 * hash-tagged prefix, so BullMQ's scripts run on one slot, and when the master that owns it is
 * killed its replica takes over while an every-second schedule and a burst of 2,000 ad-hoc runs are
 * under way. What the dead master had not replicated, the reconciler re-creates from the ledger:
 * every run succeeds with its target called exactly once, and every slot fires once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedisCluster, type RedisClusterUnderTest } from '../support/engines.js';
import { SPAWNING_TIMEOUT_MS, spawnKairos, useTestEnvironment, type KairosChild } from '../support/kairos.js';
import { ALLOW_LOOPBACK, audit, slotsRan, startWorkload } from './workload.js';

describe('Redis Cluster', () => {
  const t = useTestEnvironment();
  let cluster: RedisClusterUnderTest;
  let kairos: KairosChild;

  beforeAll(async () => {
    cluster = await startRedisCluster();
    kairos = spawnKairos('kairos', t.env({ ...ALLOW_LOOPBACK, REDIS_URL: '', REDIS_CLUSTER_NODES: cluster.nodesVariable }));
    await kairos.ready;
  }, SPAWNING_TIMEOUT_MS);

  afterAll(async () => {
    kairos?.process.kill('SIGKILL');
    await cluster?.stop();
  });

  it('loses and doubles nothing of 2,000 runs and an every-second schedule while the master of the queues fails over', async () => {
    expect(kairos.output()).toMatch(/transport redis cluster 127\.0\.0\.1:\d+ \(\+2\)|redis cluster 127\.0\.0\.1/);
    const url = await kairos.ready;
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
    } finally {
      await workload.stop();
    }
  }, 240_000);
});
