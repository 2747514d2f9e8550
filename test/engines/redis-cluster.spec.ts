/**
 * Kairos on a Redis Cluster (three masters, a replica each) with its runs queues in shards: each
 * shard of a runs queue is a BullMQ queue under a hash tag of its own, `{<prefix>:kairos-runs:<n>}`,
 * so the shards' slots, and the load, spread over the masters.
 *
 * - Unset, KAIROS_QUEUE_SHARDS is twice the masters the cluster has at start: 6 here.
 * - With 6 shards, 3,000 runs each call their target once, and every master serves at least 15% of
 *   the Redis commands they cost (one shard of six is 16.7%).
 * - A worker credential for queue `media` reads and writes its queue's shards on every master, and
 *   is refused (NOPERM) the default queue's shards and any other key.
 * - The master holding the most shards (two) is killed under an every-second schedule and a burst
 *   of 2,000 runs, half sent before the kill and half during the failover: its replica takes over,
 *   every run succeeds with its target called once, every slot fires once, the rate limiter counts
 *   in the cluster, domain events go on into the stream, and the worker credential made before
 *   the failover works on the replica that took over.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Cluster } from 'ioredis';
import { shardOf, shardsPerMaster } from '@kairos/queue';
import { runCli } from '../../apps/cli/src/cli.js';
import { command, startRedisCluster, type RedisClusterUnderTest } from '../support/engines.js';
import { api, sleep, SPAWNING_TIMEOUT_MS, spawnKairos, waitFor, useTestEnvironment, type KairosChild } from '../support/kairos.js';
import { ALLOW_LOOPBACK, WORKLOAD_LEASES, audit, slotsRan, startWorkload, type Workload } from './workload.js';

/** Requests per second per caller: far above what the workload sends, well below the burst below. */
const RATE_LIMIT = 20;
/**
 * The queue prefix: the default one, as a deployment runs with (the cluster is this file's own).
 * Where the shards land follows from it, by the CRC16 of each hash tag: with `kairos` the default
 * queue's six shards sit two on each master of a cluster made by `redis-cli --cluster create`. A
 * random prefix per test run would put them 3-2-1 or 4-1-1 in two runs of three, and a master with
 * one shard then serves the share of runs that shard drew (1/6, give or take 0.7% for 3,000 runs):
 * too close to the 15% bar for a test that must not flake.
 */
const PREFIX = 'kairos';
const SHARDS = 6;
/** The least share of the load's Redis commands each master must serve. */
const LEAST_SHARE = 0.15;

/** The hash tag (and BullMQ prefix) of shard `n` of BullMQ queue `name`. */
const shardTag = (prefix: string, name: string, n: number): string => `{${prefix}:${name}:${n}}`;

/** The commands a node has served since its statistics were last reset: the sum of `calls=` over INFO commandstats. */
async function commandsServed(port: number): Promise<number> {
  const info = String(await command(port, 'INFO', 'commandstats'));
  return [...info.matchAll(/calls=(\d+)/g)].reduce((sum, match) => sum + Number(match[1]), 0);
}

/** The ports of the nodes that serve slots as masters now, in port order (asked of a live master). */
async function mastersOf(cluster: RedisClusterUnderTest): Promise<number[]> {
  const ranges = (await command(await cluster.masterOf('any'), 'CLUSTER', 'SLOTS')) as [number, number, [string, number]][];
  return [...new Set(ranges.map((range) => range[2][1]))].sort((a, b) => a - b);
}

/** The port of every node CLUSTER NODES lists and does not flag failed: masters and replicas. */
async function everyNode(cluster: RedisClusterUnderTest): Promise<number[]> {
  const [master] = await mastersOf(cluster);
  const lines = String(await command(master!, 'CLUSTER', 'NODES')).trim().split('\n');
  return lines.filter((line) => !line.split(' ')[2]!.split(',').includes('fail')).map((line) => Number(/:(\d+)@/.exec(line)![1]));
}

/** Which of shards 0..count-1 of BullMQ queue `name` each master holds, by the master's port. */
async function shardsByMaster(cluster: RedisClusterUnderTest, prefix: string, name: string, count: number): Promise<Map<number, number[]>> {
  const held = new Map<number, number[]>((await mastersOf(cluster)).map((port) => [port, []]));
  for (let n = 0; n < count; n++) held.get(await cluster.masterOf(shardTag(prefix, name, n)))!.push(n);
  return held;
}

/**
 * For each master, a shard index of BullMQ queue `name` whose slot it serves, the live shards
 * (0..SHARDS-1) first; the ACL rule admits any index, so 6..63 are looked at when a master holds
 * none of the live ones.
 */
async function aShardPerMaster(cluster: RedisClusterUnderTest, prefix: string, name: string): Promise<Map<number, number>> {
  const masters = await mastersOf(cluster);
  const picked = new Map<number, number>();
  for (let n = 0; n < 64 && picked.size < masters.length; n++) {
    const master = await cluster.masterOf(shardTag(prefix, name, n));
    if (!picked.has(master)) picked.set(master, n);
  }
  expect([...picked.keys()].sort((a, b) => a - b)).toEqual(masters);
  return picked;
}

/** For each master, a key outside every queue whose slot it serves. */
async function anUnrelatedKeyPerMaster(cluster: RedisClusterUnderTest, prefix: string): Promise<Map<number, string>> {
  const masters = await mastersOf(cluster);
  const picked = new Map<number, string>();
  for (let n = 0; n < 1_000 && picked.size < masters.length; n++) {
    const key = `{${prefix}-unrelated-${n}}:probe`;
    const master = await cluster.masterOf(key);
    if (!picked.has(master)) picked.set(master, key);
  }
  expect([...picked.keys()].sort((a, b) => a - b)).toEqual(masters);
  return picked;
}

/** A cluster connection as the Redis user of a worker credential, whose URL carries its name and password. */
async function connectAs(cluster: RedisClusterUnderTest, redisUrl: string): Promise<Cluster> {
  const url = new URL(redisUrl);
  const seeds = (await mastersOf(cluster)).map((port) => ({ host: '127.0.0.1', port }));
  const redis = new Cluster(seeds, {
    redisOptions: { username: decodeURIComponent(url.username), password: decodeURIComponent(url.password) },
    clusterRetryStrategy: () => null,
  });
  redis.on('error', () => undefined);
  await new Promise<void>((resolve, reject) => {
    redis.once('ready', resolve);
    redis.once('end', () => reject(new Error('the worker credential could not connect to the cluster')));
  });
  return redis;
}

/**
 * Checks, as the Redis user of a worker credential for queue `media`, on every master: a key of a
 * shard of `media` it serves is written, read and deleted; a write to the default queue's shard
 * there and a read or write of an unrelated key there are refused.
 */
async function checkMediaCredential(cluster: RedisClusterUnderTest, prefix: string, redisUrl: string): Promise<void> {
  const media = await aShardPerMaster(cluster, prefix, 'kairos-runs.media');
  const defaults = await aShardPerMaster(cluster, prefix, 'kairos-runs');
  const unrelated = await anUnrelatedKeyPerMaster(cluster, prefix);
  const redis = await connectAs(cluster, redisUrl);
  try {
    for (const [master, n] of media) {
      const key = `${shardTag(prefix, 'kairos-runs.media', n)}:kairos-runs.media:acl-probe`;
      expect(await redis.set(key, `from ${master}`), `${key} on ${master}`).toBe('OK');
      expect(await redis.get(key), `${key} on ${master}`).toBe(`from ${master}`);
      expect(await redis.del(key)).toBe(1);
    }
    for (const [master, n] of defaults) {
      const key = `${shardTag(prefix, 'kairos-runs', n)}:kairos-runs:wait`;
      // NX: were the write allowed, it still would not replace the queue's list.
      await expect(redis.set(key, 'probe', 'NX'), `${key} on ${master}`).rejects.toThrow(/NOPERM/);
    }
    for (const [master, key] of unrelated) {
      await expect(redis.set(key, 'probe'), `${key} on ${master}`).rejects.toThrow(/NOPERM/);
      await expect(redis.get(key), `${key} on ${master}`).rejects.toThrow(/NOPERM/);
    }
  } finally {
    redis.disconnect();
  }
}

describe('Redis Cluster, runs queues in shards', () => {
  const t = useTestEnvironment();
  let cluster: RedisClusterUnderTest;
  let kairos: KairosChild;
  let workload: Workload | undefined;
  /** The Redis URL of the worker credential for `media`, made before the failover. */
  let mediaRedisUrl: string | undefined;
  const env = (overrides: Record<string, string> = {}): Record<string, string> =>
    t.env({ ...ALLOW_LOOPBACK, ...WORKLOAD_LEASES, REDIS_URL: '', REDIS_CLUSTER_NODES: cluster.nodesVariable, KAIROS_QUEUE_PREFIX: PREFIX, KAIROS_RATE_LIMIT: String(RATE_LIMIT), ...overrides });

  beforeAll(async () => {
    cluster = await startRedisCluster();
    kairos = spawnKairos('kairos', env({ KAIROS_QUEUE_SHARDS: String(SHARDS) }));
    await kairos.ready;
  }, SPAWNING_TIMEOUT_MS);

  afterAll(async () => {
    await workload?.stop();
    kairos?.process.kill('SIGKILL');
    await cluster?.stop();
  });

  it('picks twice the masters as shards when KAIROS_QUEUE_SHARDS is unset: the banner and `kairos status` say so', async () => {
    // Empty is unset, also over a KAIROS_QUEUE_SHARDS the test process has.
    const unset = env({ KAIROS_QUEUE_SHARDS: '' });
    const defaults = spawnKairos('api', unset);
    try {
      await defaults.ready;
      expect(defaults.output()).toMatch(/Shards\s+6 shards per queue \(twice the cluster's 3 masters\)|"shards":"6 shards per queue \(twice the cluster's 3 masters\)"/);
    } finally {
      defaults.process.kill('SIGKILL');
    }
    const lines: string[] = [];
    expect(await runCli(['status'], { line: (l) => lines.push(l) }, unset)).toBe(0);
    expect(lines).toContain("shards     6 shards per queue (twice the cluster's 3 masters)");
  }, SPAWNING_TIMEOUT_MS);

  it('warns at start when the masters hold the default queue’s shards unevenly, naming a count that spreads them better', async () => {
    // A prefix whose six shards land 4-1-1 or 3-2-1 on the thirds of the slots `redis-cli --cluster create` gives three masters.
    const third = (slot: number): string => (slot <= 5_460 ? 'a' : slot <= 10_922 ? 'b' : 'c');
    const spread = (prefix: string): number[] => [...shardsPerMaster(prefix, 'kairos-runs', 6, third).values()].sort((a, b) => b - a);
    const prefix = Array.from({ length: 100 }, (_, i) => `kairos-uneven-${i}`).find((p) => spread(p)[0]! >= 3)!;
    const uneven = spawnKairos('api', env({ KAIROS_QUEUE_SHARDS: '', KAIROS_QUEUE_PREFIX: prefix }));
    try {
      await uneven.ready;
      const shown = spread(prefix).concat([0, 0]).slice(0, 3).join('-');
      expect(uneven.output()).toContain(`the default queue's 6 shards land ${shown} on the cluster's 3 masters`);
      expect(uneven.output()).toMatch(/KAIROS_QUEUE_SHARDS=\d+ spreads them \d+-\d+-\d+ \(\d+% on the busiest\)/);
    } finally {
      uneven.process.kill('SIGKILL');
    }
  }, SPAWNING_TIMEOUT_MS);

  it(`runs 3,000 runs once each on ${SHARDS} shards, every master serving at least ${LEAST_SHARE * 100}% of their Redis commands`, async () => {
    expect(kairos.output()).toMatch(/redis cluster 127\.0\.0\.1:\d+ \(\+2\)/);
    expect(kairos.output()).toMatch(/6 shards per queue \(KAIROS_QUEUE_SHARDS\)/);
    const url = await kairos.ready;
    const health = await fetch(`${url}/health/ready`);
    expect(health.status).toBe(200);
    expect(((await health.json()) as { details: { redis: { shards: number } } }).details.redis.shards).toBe(SHARDS);
    // The rate limiter counts in the cluster: a burst beyond the limit is refused.
    const statuses = await Promise.all(Array.from({ length: 3 * RATE_LIMIT }, () => fetch(`${url}/v1/schedules`).then((r) => r.status)));
    expect(statuses).toContain(429);
    await sleep(1_100);

    const layout = await shardsByMaster(cluster, PREFIX, 'kairos-runs', SHARDS);
    expect([...layout.values()].map((shards) => shards.length)).toEqual([2, 2, 2]);
    console.info(`cluster: shards of the default queue by master: ${[...layout].map(([port, shards]) => `${port} [${shards.join(',')}]`).join(', ')}`);
    workload = await startWorkload(url);
    const masters = await mastersOf(cluster);
    for (const port of masters) await command(port, 'CONFIG', 'RESETSTAT');
    const started = Date.now();
    const before = workload.runIds.length;
    await workload.submit(3_000);
    const ids = workload.runIds.slice(before);
    await waitFor(
      async () => {
        const { rows } = await t.db.query(`SELECT count(*)::int AS n FROM runs WHERE id = ANY($1::uuid[]) AND state = 'succeeded'`, [ids]);
        return rows[0].n === ids.length ? true : undefined;
      },
      `the ${ids.length} runs to succeed`,
      120_000,
      250,
    );
    const took = Date.now() - started;
    const served = await Promise.all(masters.map(commandsServed));
    const total = served.reduce((a, b) => a + b, 0);
    const perShard = new Array<number>(SHARDS).fill(0);
    for (const id of ids) perShard[shardOf(id, SHARDS) as number]! += 1;
    console.info(
      `cluster: 3,000 runs on ${SHARDS} shards (${perShard.join(', ')} runs per shard) in ${took} ms; Redis commands by master: ${masters
        .map((port, i) => `${port} (shards ${layout.get(port)!.join(',') || 'none'}) ${served[i]} = ${((100 * served[i]!) / total).toFixed(1)}%`)
        .join(', ')}`,
    );
    expect(ids.filter((id) => workload!.calls.get(id) !== 1).map((id) => `${id}: ${workload!.calls.get(id) ?? 0} calls`)).toEqual([]);
    // The runs spread over every shard, as their ids pick them.
    expect(Math.min(...perShard)).toBeGreaterThan(ids.length / SHARDS / 2);
    for (const [i, port] of masters.entries()) expect(served[i]! / total, `the share of master ${port}`).toBeGreaterThanOrEqual(LEAST_SHARE);
  }, 180_000);

  it('limits a worker credential’s Redis user to its queue’s shards, on every master', async () => {
    const nodes = await everyNode(cluster);
    expect(nodes).toHaveLength(6);
    // Kairos makes the user on every node CLUSTER NODES lists, so also on a replica CLUSTER SLOTS
    // leaves out while it is not seen as replicating yet (a fresh one, or one a loaded machine held back).
    const granted = await api(await kairos.ready).post('/v1/worker-credentials', { queues: ['media'] });
    expect(granted.status).toBe(201);
    expect(granted.body.redis).toMatchObject({ user: granted.body.role, applied: true });
    mediaRedisUrl = granted.body.redis.url as string;
    // The user is on every node, replicas too: a replica that takes over knows it.
    for (const port of nodes) {
      const user = (await command(port, 'ACL', 'GETUSER', granted.body.role)) as unknown[] | null;
      expect(user, `the user on ${port}`).not.toBeNull();
      const keys = String(user![user!.indexOf('keys') + 1]);
      expect(keys, `${port}`).toBe(`~{${PREFIX}}:kairos-runs.media:* ~{${PREFIX}:kairos-runs.media:[0-9]*}:kairos-runs.media:*`);
    }
    await checkMediaCredential(cluster, PREFIX, mediaRedisUrl);
  });

  it('loses and doubles nothing of 2,000 runs and an every-second schedule while the master of two shards fails over', async () => {
    const url = await kairos.ready;
    workload ??= await startWorkload(url);
    await slotsRan(t, workload, 2);
    const slotsSoFar = async (): Promise<number> =>
      (await t.db.query(`SELECT count(*)::int AS n FROM runs WHERE schedule_id = $1 AND state = 'succeeded'`, [workload!.scheduleId])).rows[0].n;
    const layout = await shardsByMaster(cluster, PREFIX, 'kairos-runs', SHARDS);
    const [master, shards] = [...layout].sort((a, b) => b[1].length - a[1].length)[0]!;
    expect(shards.length).toBeGreaterThanOrEqual(2);
    const key = shardTag(PREFIX, 'kairos-runs', shards[0]!);
    // Half the burst is in the queues (or on its way) when the master dies, half comes during the failover.
    await workload.submit(1_000);
    await cluster.kill(master);
    const killedAt = Date.now();
    await workload.submit(1_000);
    const promoted = await cluster.failedOver(key, master);
    console.info(`cluster: the replica on ${promoted} took over shards ${shards.join(',')} ${Date.now() - killedAt} ms after their master was killed`);
    for (const n of shards) expect(await cluster.masterOf(shardTag(PREFIX, 'kairos-runs', n))).toBe(promoted);
    // The schedule goes on after the failover: five more slots run.
    await slotsRan(t, workload, (await slotsSoFar()) + 5);
    await audit(t, workload, { across: killedAt, until: Date.now() - 1_000 });
    expect(kairos.process.exitCode).toBeNull();
    // Domain events go on into the stream after the failover: pausing the schedule is one.
    expect((await api(url).post(`/v1/schedules/${workload.scheduleId}/pause`)).status).toBe(200);
    const redis = cluster.client();
    try {
      const latest = await waitFor(async () => {
        const [entry] = (await redis.xrevrange(`${PREFIX}:events`, '+', '-', 'COUNT', 1)) as [string, string[]][];
        return entry?.[1].includes('schedule.paused') ? entry[1] : undefined;
      }, 'the pause to reach the event stream');
      expect(latest).toContain(workload.scheduleId);
    } finally {
      redis.disconnect();
    }
    // The worker credential made before the failover holds on the replica that took over.
    if (mediaRedisUrl) await checkMediaCredential(cluster, PREFIX, mediaRedisUrl);
  }, 240_000);
});
