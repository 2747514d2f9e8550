/**
 * Graceful shutdown on SIGTERM: a worker lets short runs finish, hands back what outlives the
 * grace period (drained, picked up elsewhere at once), and exits 0; a leading scheduler releases
 * its lease so the standby takes over without waiting out the TTL.
 */
import { describe, expect, it } from 'vitest';
import { runInState, SPAWNING_TIMEOUT_MS, spawnKairos, startInProcess, useKairos, waitFor } from '../support/kairos.js';

describe('graceful shutdown', () => {
  const { t, client } = useKairos({ roles: ['api'] });

  /**
   * True once the process `pid` leads: it holds the live lease and has opened its session, which a
   * new leader writes in a transaction of its own right after the lease is granted.
   */
  const leads = async (pid: number): Promise<true | undefined> => {
    const { rows } = await t.db.query(
      `SELECT 1 FROM leases l JOIN scheduler_sessions s ON s.holder = l.holder AND s.stopped_at IS NULL
       WHERE l.name = 'scheduler' AND l.expires_at > now() AND s.pid = $1`,
      [pid],
    );
    return rows.length === 1 ? true : undefined;
  };
  const events = async (id: string) => (await client.get(`/v1/runs/${id}/events`)).body.items.map((e: any) => e.kind);

  it('finishes a short run, hands back a long one, and exits 0', async () => {
    const worker = spawnKairos('worker', t.env({ KAIROS_SHUTDOWN_GRACE: '1500ms' }));
    await worker.ready;
    const short = (await client.post('/v1/runs', { target: { type: 'handler', name: 'sleep' }, payload: { ms: 800 } })).body;
    const long = (await client.post('/v1/runs', { target: { type: 'handler', name: 'sleep' }, payload: { ms: 30_000 } })).body;
    await waitFor(async () => {
      const states = await Promise.all([short.id, long.id].map(async (id) => (await client.get(`/v1/runs/${id}`)).body.state));
      return states.every((s) => s === 'running') ? true : undefined;
    }, 'both runs to start');
    worker.process.kill('SIGTERM');
    expect(await worker.exited).toBe(0);

    expect((await client.get(`/v1/runs/${short.id}`)).body.state).toBe('succeeded');
    const handedBack = (await client.get(`/v1/runs/${long.id}`)).body;
    expect(handedBack).toMatchObject({ state: 'queued', attempt: 1, crashCount: 0 });
    expect(await events(long.id)).toEqual(['queued', 'claimed', 'drained']);

    // Another worker takes it at once: no lease to wait out.
    const next = await startInProcess(t.env(), ['worker']);
    try {
      await runInState(client, long.id, 'running', 5_000);
      expect((await client.get(`/v1/runs/${long.id}`)).body.leaseEpoch).toBe(3);
    } finally {
      await next.app.close();
    }
  }, SPAWNING_TIMEOUT_MS);

  it('releases the leader lease, so the standby leads at once', async () => {
    const first = spawnKairos('scheduler', t.env({ KAIROS_LEADER_TTL: '30s' }));
    await first.ready;
    await waitFor(() => leads(first.process.pid!), 'the first scheduler to lead');
    const standby = spawnKairos('scheduler', t.env({ KAIROS_LEADER_TTL: '30s' }));
    await standby.ready;
    first.process.kill('SIGTERM');
    const stoppedAt = Date.now();
    expect(await first.exited).toBe(0);
    try {
      await waitFor(() => leads(standby.process.pid!), 'the standby to lead', 5_000);
      // Well inside the 30 s TTL: the lease was released, not left to expire.
      expect(Date.now() - stoppedAt).toBeLessThan(5_000);
      const sessions = (await t.db.query(`SELECT pid, stop_reason FROM scheduler_sessions ORDER BY started_at`)).rows;
      expect(sessions).toEqual([
        { pid: first.process.pid, stop_reason: 'clean' },
        { pid: standby.process.pid, stop_reason: null },
      ]);
    } finally {
      standby.process.kill('SIGKILL');
      await standby.exited;
    }
  }, SPAWNING_TIMEOUT_MS);
});
