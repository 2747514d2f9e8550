/**
 * Kairos on a Redis master with one replica and three Sentinels: the master is killed while an
 * every-second schedule and a burst of 2,000 ad-hoc runs are under way, the Sentinels promote the
 * replica, and Kairos follows it within seconds. Nothing is lost or doubled.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { command, startRedisSentinels, type RedisSentinelsUnderTest } from '../support/engines.js';
import { api, SPAWNING_TIMEOUT_MS, spawnKairos, useTestEnvironment, type KairosChild } from '../support/kairos.js';
import { ALLOW_LOOPBACK, WORKLOAD_LEASES, audit, slotsRan, startWorkload } from './workload.js';

describe('Redis Sentinel', () => {
  const t = useTestEnvironment();
  let sentinels: RedisSentinelsUnderTest;
  let kairos: KairosChild;

  beforeAll(async () => {
    sentinels = await startRedisSentinels();
    kairos = spawnKairos(
      'kairos',
      t.env({ ...ALLOW_LOOPBACK, ...WORKLOAD_LEASES, REDIS_URL: '', REDIS_SENTINELS: sentinels.sentinelsVariable, REDIS_SENTINEL_NAME: sentinels.name }),
    );
    await kairos.ready;
  }, SPAWNING_TIMEOUT_MS);

  afterAll(async () => {
    kairos?.process.kill('SIGKILL');
    await sentinels?.stop();
  });

  it('makes a worker credential’s Redis user on the master and on its replica, which may become the master', async () => {
    const granted = await api(await kairos.ready).post('/v1/worker-credentials', { queues: ['media'] });
    expect(granted.status).toBe(201);
    expect(granted.body.redis).toMatchObject({ user: granted.body.role, applied: true });
    for (const port of sentinels.dataPorts) {
      const user = (await command(port, 'ACL', 'GETUSER', granted.body.role)) as unknown[];
      // Its queue's keys, unsharded and of every shard (KAIROS_QUEUE_SHARDS), and nothing else.
      expect(String(user[user.indexOf('keys') + 1]), `node ${port}`).toBe(
        `~${t.redisPrefix}:kairos-runs.media:* ~{${t.redisPrefix}:kairos-runs.media:[0-9]*}:kairos-runs.media:*`,
      );
    }
  });

  it('follows the master to its replica, losing and doubling nothing of 2,000 runs and an every-second schedule', async () => {
    expect(kairos.output()).toContain(`redis master ${sentinels.name} via sentinels 127.0.0.1:`);
    const workload = await startWorkload(await kairos.ready);
    try {
      await slotsRan(t, workload, 2);
      const master = await sentinels.master();
      await workload.submit(1_000);
      await sentinels.kill(master);
      const killedAt = Date.now();
      await workload.submit(1_000);
      const promoted = await sentinels.failedOver(master);
      console.info(`sentinel: ${promoted} was promoted ${Date.now() - killedAt} ms after the master was killed`);
      // Kairos follows: slots keep running on the new master within seconds of the promotion.
      const ranBefore = (await t.db.query(`SELECT count(*)::int AS n FROM runs WHERE schedule_id = $1 AND state = 'succeeded'`, [workload.scheduleId])).rows[0].n;
      await slotsRan(t, workload, ranBefore + 3);
      await audit(t, workload, { across: killedAt, until: Date.now() - 1_000 });
      expect(kairos.process.exitCode).toBeNull();
    } finally {
      await workload.stop();
    }
  }, 240_000);
});
