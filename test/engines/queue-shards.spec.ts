/**
 * The runs queue split into shards (KAIROS_QUEUE_SHARDS) on one Redis, whose key layout is the one
 * a Cluster gets. With 4 shards under load every job sits on the shard its run's id picks, and the
 * jobs spread over all 4. Kairos (all roles, one process) is then stopped with SIGTERM and started
 * with 6 shards, killed with -9 and started with 2, while ad-hoc runs keep coming (half of them due
 * seconds ahead, so their jobs wait delayed across the restarts) and an every-second schedule and
 * graph fire. Every run succeeds with its target called once (again only for a run whose worker was
 * killed holding it). Once the reconciler has had its pass no job waits on a shard that 2 shards
 * do not use, nor in the unsharded layout, and once the locks of the jobs the killed process held
 * there have expired, those are moved too. The banner, /health/ready, `kairos status` and Bull
 * Board each say how many shards there are, with one shard and with six.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_QUEUE_SHARDS } from '@kairos/config';
import { DEFAULT_RUNS_QUEUE_NAME, shardOf } from '@kairos/queue';
import { builtMain } from '../support/build.js';
import { freePort } from '../support/engines.js';
import { api, issueKey, sleep, SPAWNING_TIMEOUT_MS, spawnKairos, TEST_TRANSPORT, useTestEnvironment, waitFor, type KairosChild, type TestEnvironment } from '../support/kairos.js';
import { spawnProcess } from '../support/processes.js';
import { REDIS_URL } from '../support/services.js';
import { ALLOW_LOOPBACK, WORKLOAD_LEASES, audit, slotsRan, startWorkload, type Workload } from './workload.js';

const QUEUE = DEFAULT_RUNS_QUEUE_NAME;
/** Ad-hoc runs per request, and the pause between requests: about 50 runs a second. */
const BATCH = 20;
const BATCH_EVERY_MS = 400;
/** How long each number of shards runs under load before the next restart. */
const PHASE_MS = 6_000;
/** A shard of the runs queue, or null for the unsharded layout. */
type Shard = number | null;

const escape = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The first part of BullMQ's keys of `shard` of the runs queue: `{<prefix>:kairos-runs:<n>}:kairos-runs`. */
const keysOf = (t: TestEnvironment, shard: Shard): string => (shard === null ? `${t.redisPrefix}:${QUEUE}` : `{${t.redisPrefix}:${QUEUE}:${shard}}:${QUEUE}`);

/** How `kairos` says the number of shards: `6 shards per queue (KAIROS_QUEUE_SHARDS)`. */
const shardsText = (count: number, reason: string): string => `${count} ${count === 1 ? 'shard' : 'shards'} per queue (${reason})`;

/** BullMQ's lists and sets of jobs that wait (waiting, paused, prioritized, delayed), and its list of jobs taken by a worker. */
const STATES = { waiting: ['wait', 'paused', 'prioritized', 'delayed'], active: ['active'] } as const;

/** How many jobs each of `shards` holds in `state`. */
async function jobsOn(redis: Redis, t: TestEnvironment, shards: readonly Shard[], state: keyof typeof STATES): Promise<Map<Shard, number>> {
  const pipeline = redis.pipeline();
  for (const shard of shards) {
    for (const key of STATES[state]) {
      if (key === 'prioritized' || key === 'delayed') pipeline.zcard(`${keysOf(t, shard)}:${key}`);
      else pipeline.llen(`${keysOf(t, shard)}:${key}`);
    }
  }
  const answers = (await pipeline.exec())!.map(([error, n]) => {
    if (error) throw error;
    return n as number;
  });
  const per = STATES[state].length;
  return new Map(shards.map((shard, i) => [shard, answers.slice(per * i, per * (i + 1)).reduce((a, b) => a + b, 0)]));
}

/** The shards 2 shards do not use, and the unsharded layout: where no job may be left once the reconciler has had its pass. */
const UNUSED_BY_TWO: Shard[] = [null, ...Array.from({ length: MAX_QUEUE_SHARDS - 2 }, (_, i) => i + 2)];

const total = (counts: Map<Shard, number>): number => [...counts.values()].reduce((a, b) => a + b, 0);

/** The job hashes in Redis (a job's own key, `<keys>:<job id>`) by shard, found with SCAN. */
async function jobHashes(redis: Redis, t: TestEnvironment): Promise<Map<Shard, string[]>> {
  const sharded = new RegExp(`^\\{${escape(t.redisPrefix)}:${QUEUE}:(\\d+)\\}:${QUEUE}:([0-9a-f-]{36})$`);
  const unsharded = new RegExp(`^${escape(t.redisPrefix)}:${QUEUE}:([0-9a-f-]{36})$`);
  const found = new Map<Shard, string[]>();
  for (const pattern of [`{${t.redisPrefix}:${QUEUE}:*`, `${t.redisPrefix}:${QUEUE}:*`]) {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
      cursor = next;
      for (const key of keys) {
        const match = sharded.exec(key);
        const [shard, id] = match ? [Number(match[1]), match[2]!] : [null, unsharded.exec(key)?.[1]];
        if (id === undefined) continue;
        found.set(shard, [...(found.get(shard) ?? []), id]);
      }
    } while (cursor !== '0');
  }
  return found;
}

/**
 * Submits ad-hoc runs to the workload's receiver until stopped, every other one due 2 to 6 s ahead.
 * Each run has an idempotency key, and a request that got no answer (Kairos was restarting, or was
 * killed while it answered) is sent again as it was: a run the lost answer created comes back, so
 * every run is counted once.
 */
function submitRuns(baseUrl: string, workload: Workload) {
  const client = api(baseUrl);
  let stopping = false;
  let retries = 0;
  const loop = (async () => {
    while (!stopping) {
      const now = Date.now();
      const items = Array.from({ length: BATCH }, (_, i) => {
        const n = workload.runIds.length + i;
        const ahead = n % 2 === 0 ? { availableAt: new Date(now + 2_000 + (n % 5) * 1_000).toISOString() } : {};
        return { target: workload.target, payload: { n }, idempotencyKey: `shards-${n}`, ...ahead };
      });
      for (;;) {
        const answer = await client.post('/v1/runs/batch', { items }).catch(() => null);
        const ids = answer?.status === 200 ? (answer.body.items as { id?: string }[]).map((item) => item.id) : [];
        if (ids.length === BATCH && ids.every((id) => typeof id === 'string')) {
          workload.runIds.push(...(ids as string[]));
          break;
        }
        retries += 1;
        await sleep(250);
      }
      await sleep(BATCH_EVERY_MS);
    }
  })();
  return {
    /** Stops after the request under way has been answered; answers how many requests were sent again. */
    stop: async (): Promise<number> => {
      stopping = true;
      await loop;
      return retries;
    },
  };
}

/** `kairos status` from the built CLI, with Kairos's environment. */
async function kairosStatus(env: Record<string, string>, ...args: string[]): Promise<{ code: number | null; out: string }> {
  const child = spawnProcess(process.execPath, [builtMain('cli'), 'status', ...args], { env: { ...process.env, ...env } });
  const code = await child.exited;
  return { code, out: child.output() };
}

/** The queues Bull Board's JSON API lists, with the delimiter it groups their names by. */
async function boardQueues(baseUrl: string, adminKey: string): Promise<{ name: string; delimiter: string }[]> {
  const response = await fetch(`${baseUrl}/admin/queues/api/queues`, { headers: { authorization: `Bearer ${adminKey}` } });
  expect(response.status).toBe(200);
  const body = (await response.json()) as { queues: { name: string; delimiter: string }[] };
  return body.queues.map(({ name, delimiter }) => ({ name, delimiter }));
}

/** The banner's Shards row and /health/ready's redis check both say `count` shards. */
async function expectShardsAnnounced(child: KairosChild, baseUrl: string, count: number, reason: string): Promise<void> {
  await child.until(new RegExp(`^ +Shards +${escape(shardsText(count, reason))}$`, 'm'), `the banner's Shards row to say ${count}`, 5_000);
  const ready = (await (await fetch(`${baseUrl}/health/ready`)).json()) as { details: Record<string, { status: string; shards?: number }> };
  expect(ready.details.redis).toMatchObject({ status: 'up', shards: count });
}

describe.skipIf(TEST_TRANSPORT !== 'redis')('the runs queue in shards', () => {
  const t = useTestEnvironment();
  let port: number;
  let adminKey: string;
  let redis: Redis;
  const children: KairosChild[] = [];

  /** Kairos with `env` on top of the test's, on the same port each time, its banner as a terminal shows it. */
  const environment = (env: Record<string, string>): Record<string, string> =>
    t.env({ ...ALLOW_LOOPBACK, ...WORKLOAD_LEASES, PORT: String(port), LOG_FORMAT: 'pretty', KAIROS_RECONCILE_INTERVAL: '1s', ...env });
  const spawn = (app: 'kairos' | 'api', env: Record<string, string>): KairosChild => {
    const child = spawnKairos(app, environment(env));
    children.push(child);
    return child;
  };

  beforeAll(async () => {
    port = await freePort();
    adminKey = await issueKey(t, 'default', 'admin');
    redis = new Redis(REDIS_URL);
  });

  afterAll(async () => {
    for (const child of children) child.process.kill('SIGKILL');
    await Promise.all(children.map((c) => c.exited));
    redis?.disconnect();
  });

  it('says so when it has one shard: the banner, /health/ready, kairos status and Bull Board', async () => {
    const env = { KAIROS_QUEUE_SHARDS: '' };
    const child = spawn('api', env);
    const url = await child.ready;
    await expectShardsAnnounced(child, url, 1, 'one Redis');
    expect(await boardQueues(url, adminKey)).toEqual([{ name: QUEUE, delimiter: '' }]);
    const status = await kairosStatus(environment(env));
    expect(status.code, status.out).toBe(0);
    expect(status.out).toMatch(/^shards {5}1 shard per queue \(one Redis\)$/m);
    child.process.kill('SIGTERM');
    expect(await child.exited).toBe(0);
  }, SPAWNING_TIMEOUT_MS);

  it('loses and doubles nothing while the number of shards goes from 4 to 6 to 2 under load, and leaves no job on a shard no longer used', async () => {
    const startedAt = Date.now();
    let kairos = spawn('kairos', { KAIROS_QUEUE_SHARDS: '4' });
    const url = await kairos.ready;
    await expectShardsAnnounced(kairos, url, 4, 'KAIROS_QUEUE_SHARDS');
    const workload = await startWorkload(url);
    try {
      const submitter = submitRuns(url, workload);
      try {
        await slotsRan(t, workload, 2);

        // 4 shards: every job seen in Redis sits on the shard its run's id picks, and each shard gets its share.
        const seen = new Map<Shard, Set<string>>();
        const phaseEnd = Date.now() + PHASE_MS;
        while (Date.now() < phaseEnd) {
          for (const [shard, ids] of await jobHashes(redis, t)) for (const id of ids) seen.set(shard, (seen.get(shard) ?? new Set()).add(id));
          await sleep(500);
        }
        const spread = [0, 1, 2, 3].map((n) => seen.get(n)?.size ?? 0);
        const seenJobs = spread.reduce((a, b) => a + b, 0);
        console.info(`4 shards: ${seenJobs} jobs seen in Redis, by shard ${spread.join(' / ')}`);
        expect([...seen.keys()].sort()).toEqual([0, 1, 2, 3]);
        const misplaced = [...seen].flatMap(([shard, ids]) => [...ids].filter((id) => shardOf(id, 4) !== shard).map((id) => `${id} on shard ${shard}`));
        expect(misplaced).toEqual([]);
        // Jump hashing spreads evenly: each shard carries a fair part of the jobs.
        for (const count of spread) expect(count).toBeGreaterThan(seenJobs / 8);

        // SIGTERM, then 6 shards: the jobs of shards 0 to 3 stay where they are, shards 4 and 5 are new.
        kairos.process.kill('SIGTERM');
        expect(await kairos.exited, kairos.output().slice(-2_000)).toBe(0);
        const across = Date.now();
        kairos = spawn('kairos', { KAIROS_QUEUE_SHARDS: '6' });
        await kairos.ready;
        await expectShardsAnnounced(kairos, url, 6, 'KAIROS_QUEUE_SHARDS');
        expect(await boardQueues(url, adminKey)).toEqual([0, 1, 2, 3, 4, 5].map((n) => ({ name: `${QUEUE}:shard-${n}`, delimiter: ':' })));
        const status = await kairosStatus(environment({ KAIROS_QUEUE_SHARDS: '6' }));
        expect(status.code, status.out).toBe(0);
        expect(status.out).toMatch(/^shards {5}6 shards per queue \(KAIROS_QUEUE_SHARDS\)$/m);
        const json = JSON.parse((await kairosStatus(environment({ KAIROS_QUEUE_SHARDS: '6' }), '--json')).out);
        expect(json.shards).toEqual({ count: 6, text: shardsText(6, 'KAIROS_QUEUE_SHARDS') });
        await sleep(PHASE_MS);

        // kill -9, then 2 shards: what waits on shards 2 to 5 is moved by the reconciler to shards 0 and 1.
        kairos.process.kill('SIGKILL');
        await kairos.exited;
        const killedAt = Date.now();
        const [waiting, active] = [await jobsOn(redis, t, UNUSED_BY_TWO, 'waiting'), await jobsOn(redis, t, UNUSED_BY_TWO, 'active')];
        kairos = spawn('kairos', { KAIROS_QUEUE_SHARDS: '2' });
        await kairos.ready;
        const upAt = Date.now();
        await expectShardsAnnounced(kairos, url, 2, 'KAIROS_QUEUE_SHARDS');
        await waitFor(async () => (total(await jobsOn(redis, t, UNUSED_BY_TWO, 'waiting')) === 0 ? true : undefined), 'the jobs waiting on shards 2 to 5 to be moved', 30_000);
        console.info(
          `2 shards: ${total(waiting)} jobs were waiting on shards 2 to 5 (${[2, 3, 4, 5].map((n) => waiting.get(n)).join(' / ')}) and ` +
            `${total(active)} active (held by the killed process); none was waiting there ${Date.now() - upAt} ms after the process was up`,
        );
        expect(total(waiting)).toBeGreaterThan(0);
        await sleep(PHASE_MS / 2);
        const resent = await submitter.stop();
        console.info(`${workload.runIds.length} ad-hoc runs submitted, ${resent} requests sent again across the restarts`);

        await audit(t, workload, { across, until: Date.now() - 1_000 }, 90_000);
        // The jobs the killed process held stay active on their shards until their locks (as long as
        // the run lease) expire; the reconciler's next pass moves them too. Then no job is left on a
        // shard 2 shards do not use, and the reconciler moved each job that was left there once.
        await waitFor(
          async () => ([...(await jobHashes(redis, t))].some(([shard]) => shard === null || shard >= 2) ? undefined : true),
          'no job to be left on shards 2 to 5',
          30_000,
          250,
        );
        console.info(`every job of shards 2 to 5 had been moved ${Date.now() - killedAt} ms after the kill`);
        const moved = (): number[] => [...kairos.output().matchAll(/moved (\d+) jobs off shards no longer in use/g)].map((m) => Number(m[1]));
        const sum = (ns: number[]): number => ns.reduce((a, b) => a + b, 0);
        // The reconciler says what it moved once its pass is over, just after the jobs have gone.
        await waitFor(async () => (sum(moved()) >= total(waiting) + total(active) ? true : undefined), 'the reconciler to say what it moved', 5_000).catch(() => undefined);
        console.info(`the reconciler said it moved ${moved().join(' + ')} jobs`);
        expect(sum(moved())).toBe(total(waiting) + total(active));
        expect(Object.fromEntries([...(await jobsOn(redis, t, UNUSED_BY_TWO, 'waiting'))].filter(([, n]) => n > 0))).toEqual({});
        expect(kairos.process.exitCode).toBeNull();
        console.info(`the restarts and the audit took ${Date.now() - startedAt} ms`);
      } finally {
        await submitter.stop();
      }
    } finally {
      await workload.stop();
    }
  }, 180_000);
});
