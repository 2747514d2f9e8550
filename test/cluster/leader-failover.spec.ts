/**
 * Two scheduler processes against one database: exactly one leads at any moment, no slot ever
 * fires twice, and when the leader is killed with SIGKILL the standby fires the following slots
 * within the lease TTL plus one second.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, sleep, SPAWNING_TIMEOUT_MS, spawnKairos, useKairos, waitFor, type KairosChild } from '../support/kairos.js';

const TTL_MS = 2_000;

describe('two schedulers, one leader', () => {
  const schedulers: KairosChild[] = [];

  const { t, kairos: apiAndWorker } = useKairos({ roles: ['api', 'worker'] });

  beforeAll(async () => {
    for (let i = 0; i < 2; i++) schedulers.push(spawnKairos('scheduler', t.env({ KAIROS_LEADER_TTL: `${TTL_MS}ms` })));
    await Promise.all(schedulers.map((s) => s.ready));
  }, SPAWNING_TIMEOUT_MS);

  afterAll(async () => {
    for (const s of schedulers) s.process.kill('SIGKILL');
  });

  it('never fires a slot twice, and fails over within TTL + 1 s of a kill -9', async () => {
    const client = api(apiAndWorker.url);
    const created = await client.post('/v1/schedules', {
      name: 'failover',
      every: '1s',
      target: { type: 'handler', name: 'noop' },
      catchup: { mode: 'all' },
      overlap: 'allow',
    });
    expect(created.status).toBe(201);
    const id = created.body.id as string;

    // Watch the lease: at every sample, at most one live holder, and it is one of our two processes.
    const holders = new Set<string>();
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const { rows } = await t.db.query(`SELECT holder FROM leases WHERE name = 'scheduler' AND expires_at > now()`);
        expect(rows.length).toBeLessThanOrEqual(1);
        if (rows[0]) holders.add(rows[0].holder);
        await sleep(50);
      }
    })();

    // Runs of slots that came due and ran (ticks alone would not do: the lookahead writes them ahead).
    const ran = async (since: number): Promise<number> =>
      (
        await t.db.query(`SELECT count(*)::int AS n FROM runs WHERE schedule_id = $1 AND state = 'succeeded' AND scheduled_for > to_timestamp($2 / 1000.0)`, [
          id,
          since,
        ])
      ).rows[0].n;
    // The first leader fires a few slots with the standby beside it before it is killed.
    await waitFor(async () => ((await ran(0)) >= 4 ? true : undefined), 'four slots to run under the first leader', 20_000);
    const leader = await t.db.query(`SELECT holder FROM leases WHERE name = 'scheduler'`);
    const leaderPid = Number(String(leader.rows[0].holder).split(':')[1]);
    const victim = schedulers.find((s) => s.process.pid === leaderPid)!;
    expect(victim).toBeDefined();
    victim.process.kill('SIGKILL');
    const killedAt = Date.now();
    await victim.exited;

    // The standby takes over and the slots after the kill fire again.
    const firstAfterKill = await waitFor(async () => {
      const { rows } = await t.db.query(
        `SELECT min(created_at) AS at FROM ticks WHERE schedule_id = $1 AND outcome = 'triggered' AND created_at > to_timestamp($2 / 1000.0)`,
        [id, killedAt],
      );
      return rows[0].at ? new Date(rows[0].at) : undefined;
    }, 'a slot fired by the standby', TTL_MS + 5_000);
    const failoverMs = firstAfterKill.getTime() - killedAt;
    console.info(`failover: the standby fired its first slot ${failoverMs} ms after the leader was killed (TTL ${TTL_MS} ms)`);
    expect(failoverMs).toBeLessThanOrEqual(TTL_MS + 1_000);

    // And the standby goes on firing, slot after slot.
    await waitFor(async () => ((await ran(killedAt)) >= 4 ? true : undefined), 'four slots after the kill to run', 20_000);
    sampling = false;
    await sampler;
    expect(holders.size).toBe(2);

    // No slot twice: one tick per slot, one run per triggered tick, slots exactly a second apart.
    const ticks = (await t.db.query(`SELECT scheduled_for, outcome, run_id FROM ticks WHERE schedule_id = $1 ORDER BY scheduled_for`, [id])).rows;
    const runs = (await t.db.query(`SELECT id, scheduled_for FROM runs WHERE schedule_id = $1`, [id])).rows;
    const slots = ticks.map((tk) => new Date(tk.scheduled_for).getTime());
    expect(new Set(slots).size).toBe(slots.length);
    for (let i = 1; i < slots.length; i++) expect(slots[i]! - slots[i - 1]!).toBe(1_000);
    expect(runs.length).toBe(ticks.filter((tk) => tk.outcome === 'triggered').length);
    expect(new Set(runs.map((r) => new Date(r.scheduled_for).getTime())).size).toBe(runs.length);
    // Catch-up all with overlap allow: the slots that fell due during the failover fired too.
    expect(ticks.every((tk) => tk.outcome === 'triggered')).toBe(true);

    // Leadership terms never overlapped in time.
    const sessions = (await t.db.query(`SELECT holder, started_at, coalesce(stopped_at, now()) AS ended_at FROM scheduler_sessions ORDER BY started_at`)).rows;
    for (let i = 1; i < sessions.length; i++) {
      expect(new Date(sessions[i].started_at).getTime()).toBeGreaterThanOrEqual(new Date(sessions[i - 1].ended_at).getTime());
    }
    // The survivor recorded the crash of the killed leader.
    const crashed = await t.db.query(`SELECT count(*)::int AS n FROM scheduler_sessions WHERE stop_reason = 'crashed'`);
    expect(crashed.rows[0].n).toBe(1);
  }, SPAWNING_TIMEOUT_MS);
});
