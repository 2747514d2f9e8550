/**
 * Schedulers share the tick through partitions. Two scheduler processes: the second to start takes
 * half the partitions from the first; every-second schedules spread over the partitions fire from
 * both; kill -9 of one moves its partitions to the other well within the lease TTL (its session
 * ends, its presence lock is free); a frozen owner loses its partitions when their leases expire
 * and writes nothing after it thaws. Every slot in the window is audited: exactly one tick and one
 * run per slot, none lost, none twice.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StartedKairos } from '@kairos/process';
import { SPAWNING_TIMEOUT_MS, api, sleep, spawnKairos, startInProcess, testEnvironment, waitFor, type KairosChild, type TestEnvironment } from '../support/kairos.js';

const pidOf = (holder: string): number => Number(holder.split(':')[1]);

interface Owners {
  /** pid → partitions whose live lease it holds */
  byPid: Map<number, number[]>;
  unowned: number[];
}

describe('scheduler partitions', () => {
  let t: TestEnvironment;
  let apiAndWorker: StartedKairos;
  const children: KairosChild[] = [];

  const owners = async (): Promise<Owners> => {
    const { rows } = await t.db.query<{ partition: number; holder: string; live: boolean }>(
      `SELECT partition, holder, expires_at > now() AS live FROM partition_leases ORDER BY partition`,
    );
    const byPid = new Map<number, number[]>();
    const unowned: number[] = [];
    for (const r of rows) {
      if (!r.live) unowned.push(r.partition);
      else byPid.set(pidOf(r.holder), [...(byPid.get(pidOf(r.holder)) ?? []), r.partition]);
    }
    return { byPid, unowned };
  };
  const owned = async (child: KairosChild): Promise<number[]> => (await owners()).byPid.get(child.process.pid!) ?? [];
  const spawnScheduler = (ttl: string): KairosChild => {
    const child = spawnKairos('scheduler', t.env({ KAIROS_LEADER_TTL: ttl }));
    children.push(child);
    return child;
  };

  beforeAll(async () => {
    t = await testEnvironment();
    apiAndWorker = await startInProcess(t.env(), ['api', 'worker']);
  }, SPAWNING_TIMEOUT_MS);

  afterAll(async () => {
    for (const child of children) {
      child.process.kill('SIGCONT');
      child.process.kill('SIGKILL');
    }
    await Promise.all(children.map((c) => c.exited));
    await apiAndWorker?.app.close();
    await t?.cleanup();
  });

  /**
   * Exactly one tick per slot of every schedule from its first slot (a second after its creation)
   * up to `until`, all triggered (catch-up all, overlap allow), one run per tick, slots a second apart.
   */
  const audit = async (ids: string[], until: Date): Promise<number> => {
    let slots = 0;
    for (const id of ids) {
      const created = (await t.db.query(`SELECT created_at FROM schedules WHERE id = $1`, [id])).rows[0].created_at as Date;
      const ticks = (
        await t.db.query(`SELECT scheduled_for, outcome, run_id FROM ticks WHERE schedule_id = $1 AND scheduled_for <= $2 ORDER BY scheduled_for`, [id, until])
      ).rows;
      const at = ticks.map((tk) => new Date(tk.scheduled_for).getTime());
      // The slots are anchored at the instant the API read the request, at most a moment before the
      // row's created_at: the first tick is the first slot only if its anchor falls within that second.
      const anchor = at[0]! - 1_000;
      expect(anchor, `schedule ${id}: its first slot has a tick`).toBeLessThanOrEqual(created.getTime());
      expect(created.getTime() - anchor).toBeLessThan(1_000);
      const expected = Math.floor((until.getTime() - anchor) / 1000);
      expect(at.length, `schedule ${id}: one tick per slot up to ${until.toISOString()}`).toBe(expected);
      at.forEach((ms, k) => expect(ms, `schedule ${id}: slot ${k + 1}`).toBe(anchor + (k + 1) * 1000));
      expect(ticks.every((tk) => tk.outcome === 'triggered' && tk.run_id !== null)).toBe(true);
      const runs = (await t.db.query(`SELECT id, scheduled_for FROM runs WHERE schedule_id = $1 AND scheduled_for <= $2`, [id, until])).rows;
      expect(runs.length, `schedule ${id}: one run per slot`).toBe(expected);
      expect(new Set(runs.map((r) => r.id))).toEqual(new Set(ticks.map((tk) => tk.run_id)));
      slots += expected;
    }
    return slots;
  };

  const createEverySecond = async (prefix: string, count: number): Promise<string[]> => {
    const client = api(apiAndWorker.url);
    const ids: string[] = [];
    for (let i = 0; i < count; i++) {
      const created = await client.post('/v1/schedules', {
        name: `${prefix}-${i}`,
        every: '1s',
        target: { type: 'handler', name: 'noop' },
        catchup: { mode: 'all' },
        overlap: 'allow',
      });
      expect(created.status).toBe(201);
      ids.push(created.body.id as string);
    }
    return ids;
  };

  it('share the partitions, and a killed owner’s move to the other within a second', async () => {
    const ttlMs = 10_000;
    const first = spawnScheduler(`${ttlMs}ms`);
    await first.ready;
    await waitFor(async () => ((await owned(first)).length === 16 ? true : undefined), 'the first scheduler to own all 16 partitions', 30_000);
    const second = spawnScheduler(`${ttlMs}ms`);
    await second.ready;
    // The first gives up its surplus when the second joins: eight each.
    const shares = await waitFor(
      async () => {
        const [a, b] = [await owned(first), await owned(second)];
        return a.length === 8 && b.length === 8 ? [a, b] : undefined;
      },
      'eight partitions each',
      30_000,
    );
    expect(new Set([...shares[0]!, ...shares[1]!]).size).toBe(16);

    const ids = await createEverySecond('shared', 48);
    const spread = (await t.db.query(`SELECT DISTINCT tick_partition FROM schedules WHERE id = ANY($1::uuid[])`, [ids])).rows;
    expect(spread.length, 'the schedules fall into many partitions').toBeGreaterThanOrEqual(12);

    // /v1/cluster shows who owns what.
    const cluster = (await api(apiAndWorker.url).get('/v1/cluster')).body;
    expect(cluster.partitions).toHaveLength(16);
    const listed = new Map<number, number[]>(cluster.schedulers.map((s: { pid: number; partitions: number[] }) => [s.pid, s.partitions]));
    expect(listed.get(first.process.pid!)?.length).toBe(8);
    expect(listed.get(second.process.pid!)?.length).toBe(8);

    // Both fire slots: each run names the scheduler that made it.
    const makers = await waitFor(
      async () => {
        const found = new Set(
          (
            await t.db.query(
              `SELECT DISTINCT created_by AS actor FROM runs WHERE schedule_id = ANY($1::uuid[]) AND created_by LIKE 'scheduler:%'`,
              [ids],
            )
          ).rows.map((r) => pidOf(String(r.actor).slice('scheduler:'.length))),
        );
        return found.size >= 2 ? found : undefined;
      },
      'both schedulers to make runs',
      15_000,
    );
    expect(makers).toEqual(new Set([first.process.pid, second.process.pid]));

    const victimPartitions = await owned(second);
    second.process.kill('SIGKILL');
    const killedAt = performance.now();
    await waitFor(async () => ((await owned(first)).length === 16 ? true : undefined), 'the survivor to own all 16 partitions', ttlMs + 5_000, 10);
    const movedMs = Math.round(performance.now() - killedAt);
    console.info(`kill -9: partitions ${victimPartitions.join(',')} moved to the survivor after ${movedMs} ms (lease TTL ${ttlMs} ms)`);
    // Presence, not expiry: far inside the TTL.
    expect(movedMs).toBeLessThan(2_000);
    await second.exited;

    // The audit covers the slots of the seconds after the kill too, fired or caught up by the survivor.
    await sleep(5_000);
    const until = (await t.db.query(`SELECT now() - interval '1500 milliseconds' AS at`)).rows[0].at as Date;
    const slots = await audit(ids, until);
    console.info(`audited ${slots} slots of ${ids.length} every-second schedules across a kill -9: one tick and one run each`);
    first.process.kill('SIGTERM');
    expect(await first.exited).toBe(0);
    // A clean stop gives every partition back at once.
    expect((await owners()).unowned).toHaveLength(16);
  }, 360_000);

  it('a frozen owner loses its partitions when their leases expire, and writes nothing after it thaws', async () => {
    const ttlMs = 3_000;
    for (const child of children) child.process.kill('SIGKILL');
    await Promise.all(children.map((c) => c.exited));
    const pair = [spawnScheduler(`${ttlMs}ms`), spawnScheduler(`${ttlMs}ms`)];
    await Promise.all(pair.map((c) => c.ready));
    await waitFor(async () => ((await owned(pair[0]!)).length === 8 && (await owned(pair[1]!)).length === 8 ? true : undefined), 'eight each', 60_000).catch(
      (error: Error) => {
        for (const child of pair) console.error(child.output().slice(-4_000));
        throw error;
      },
    );
    const ids = await createEverySecond('frozen', 16);
    // Every schedule has run a slot before the freeze (a tick alone may be one the lookahead wrote ahead).
    await waitFor(async () => {
      const { rows } = await t.db.query(`SELECT count(DISTINCT schedule_id)::int AS n FROM runs WHERE schedule_id = ANY($1::uuid[]) AND state = 'succeeded'`, [ids]);
      return rows[0].n === ids.length ? true : undefined;
    }, 'every schedule to run a slot', 15_000);
    const [frozen, other] = pair as [KairosChild, KairosChild];
    const frozenPartitions = await owned(frozen);
    const frozenAtDb = (await t.db.query(`SELECT now() AS at`)).rows[0].at as Date;
    frozen.process.kill('SIGSTOP');
    const frozenAt = performance.now();
    await waitFor(async () => ((await owned(other)).length === 16 ? true : undefined), 'the other to own all 16', ttlMs + 5_000, 20);
    const tookMs = Math.round(performance.now() - frozenAt);
    console.info(`a frozen owner's partitions moved after ${tookMs} ms (lease TTL ${ttlMs} ms)`);
    // Its session is alive, so only expiry frees its leases (renewed at most a third of the TTL before the freeze).
    expect(tookMs).toBeGreaterThanOrEqual((ttlMs * 2) / 3 - 100);

    frozen.process.kill('SIGCONT');
    // Thawed, it finds its epochs stale, then rejoins and gets its share back.
    await waitFor(async () => ((await owned(frozen)).length === 8 ? true : undefined), 'the thawed scheduler to get its share back', 60_000);
    expect(frozen.output()).toMatch(/gave up partitions/);
    // Three seconds of slots after the thaw, in which it must not write a second tick or run for any.
    await sleep(3_000);
    const until = (await t.db.query(`SELECT now() - interval '1500 milliseconds' AS at`)).rows[0].at as Date;
    const slots = await audit(ids, until);
    console.info(`audited ${slots} slots across a freeze and a thaw`);
    // Each lost partition's gap (from the frozen owner's last renewal to the takeover) is its outage.
    const gaps = await t.db.query(`SELECT partition FROM outages WHERE partition IS NOT NULL AND ended_at > $1 AND reason_code = 'SCHEDULER_CRASHED' ORDER BY partition`, [
      frozenAtDb,
    ]);
    expect(gaps.rows.map((r) => r.partition)).toEqual(frozenPartitions);
    for (const child of pair) child.process.kill('SIGTERM');
    expect(await Promise.all(pair.map((c) => c.exited))).toEqual([0, 0]);
  }, 240_000);
});
