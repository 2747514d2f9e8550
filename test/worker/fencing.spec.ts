/**
 * Fencing by lease epoch: a worker whose lease was taken over can never write its verdict. Shown
 * on the repository (claim, reap, reclaim, stale write) and on a real worker whose run is taken
 * over while it executes.
 */
import { describe, expect, it } from 'vitest';
import { RunRecoveryRepository, RunRepository } from '@kairos/ledger';
import { api, runInState, runsQueue, sleepUntil, useKairos, waitFor } from '../support/kairos.js';
import { WorkerProtocol, type ClaimResult, type ClaimedRun } from '../../packages/sdk/src/worker/worker-protocol.js';

describe('lease fencing', () => {
  const runs = new RunRepository();
  const leases = new WorkerProtocol();
  const recovery = new RunRecoveryRepository();

  function claimedRun(result: ClaimResult | undefined): ClaimedRun {
    expect(result?.kind).toBe('claimed');
    return (result as Extract<ClaimResult, { kind: 'claimed' }>).run;
  }

  const { t, kairos } = useKairos({ env: { KAIROS_RUN_LEASE_TTL: '1500ms' }, roles: ['api', 'worker'] });

  /** An ad-hoc run inserted straight into the ledger, never dispatched (no worker will see it). */
  async function ledgerRun(): Promise<string> {
    const client = api(kairos.url);
    const created = await client.post('/v1/runs', { target: { type: 'handler', name: 'noop' }, availableAt: '2999-01-01T00:00:00Z' });
    await t.db.query(`UPDATE runs SET available_at = now() WHERE id = $1`, [created.body.id]);
    return created.body.id;
  }

  it('refuses the verdict of a holder whose epoch was superseded, and records the refusal', async () => {
    const id = await ledgerRun();
    const first = claimedRun((await leases.claimMany(t.db, [id], 'worker-a', 60_000))[0]);
    expect(first.leaseEpoch).toBe(1);
    // worker-a goes silent; its lease expires and the reaper takes the run back (epoch 2).
    await t.db.query(`UPDATE runs SET lease_expires_at = now() - interval '1 minute' WHERE id = $1`, [id]);
    const reaped = await recovery.reapExpired(t.db, { skewMs: 0, backoffMs: 0, crashBudget: 5, limit: 10, actor: 'reaper:test' });
    expect(reaped.requeued.map((r) => r.id)).toContain(id);
    const second = claimedRun((await leases.claimMany(t.db, [id], 'worker-b', 60_000))[0]);
    expect(second.leaseEpoch).toBe(3);

    const late = { state: 'succeeded' as const, result: { from: 'a' }, error: null, reasonCode: 'SUCCEEDED' as const, reasonText: null, response: null };
    expect((await leases.finishMany(t.db, 'worker-a', [{ runId: id, epoch: first.leaseEpoch, verdict: late }])).written).toEqual(new Set());
    expect((await t.db.query(`SELECT state, lease_owner FROM runs WHERE id = $1`, [id])).rows[0]).toEqual({ state: 'running', lease_owner: 'worker-b' });

    expect((await leases.finishMany(t.db, 'worker-b', [{ runId: id, epoch: second.leaseEpoch, verdict: { ...late, result: { from: 'b' } } }])).written).toEqual(
      new Set([id]),
    );
    const final = (await t.db.query(`SELECT state, result, crash_count FROM runs WHERE id = $1`, [id])).rows[0];
    expect(final).toEqual({ state: 'succeeded', result: { from: 'b' }, crash_count: 1 });
    const kinds = (await runs.events(t.db, id)).map((e) => `${e.kind}@${e.leaseEpoch}`);
    expect(kinds).toEqual(['queued@0', 'claimed@1', 'reaped@2', 'claimed@3', 'succeeded@3']);
  });

  it('fences each verdict of a batch on its own', async () => {
    const fresh = await ledgerRun();
    const stale = await ledgerRun();
    const claimed = await leases.claimMany(t.db, [fresh, stale], 'worker-a', 60_000);
    expect(claimed.map((c) => claimedRun(c).id)).toEqual([fresh, stale]);
    // The stale one was taken over in between (reaped and reclaimed elsewhere).
    await t.db.query(`UPDATE runs SET lease_epoch = lease_epoch + 2, lease_owner = 'worker-b' WHERE id = $1`, [stale]);
    const verdict = { state: 'succeeded' as const, result: null, error: null, reasonCode: 'SUCCEEDED' as const, reasonText: null, response: null };
    const written = await leases.finishMany(t.db, 'worker-a', [
      { runId: fresh, epoch: 1, verdict },
      { runId: stale, epoch: 1, verdict },
    ]);
    expect(written.written).toEqual(new Set([fresh]));
    const states = (await t.db.query(`SELECT id, state FROM runs WHERE id = ANY($1::uuid[])`, [[fresh, stale]])).rows;
    expect(Object.fromEntries(states.map((r) => [r.id, r.state]))).toEqual({ [fresh]: 'succeeded', [stale]: 'running' });
  });

  it('claims a run named twice in one batch once: two jobs of one run (on two shards) never both execute it', async () => {
    const id = await ledgerRun();
    const other = await ledgerRun();
    const claimed = await leases.claimMany(t.db, [id, other, id], 'worker-a', 60_000);
    expect(claimed.map((c) => c.kind)).toEqual(['claimed', 'claimed', 'unclaimable']);
    expect(claimedRun(claimed[0]).leaseEpoch).toBe(1);
  });

  it('drops a job that names no run, without failing the runs claimed in the same batch', async () => {
    const ids = [await ledgerRun(), await ledgerRun()];
    const queue = await runsQueue(t);
    try {
      const jobs = await queue.addBulk([
        // Job ids of their own: the runs' own jobs wait, delayed, for the year they were created for.
        { name: 'run', data: { runId: ids[0]! }, opts: { jobId: `now-${ids[0]}` } },
        { name: 'run', data: { runId: "0}'{" }, opts: { jobId: 'not-a-run' } },
        { name: 'run', data: { runId: ids[1]! }, opts: { jobId: `now-${ids[1]}` } },
      ]);
      expect(jobs).toHaveLength(3);
      await waitFor(async () => {
        const { rows } = await t.db.query(`SELECT count(*)::int AS n FROM runs WHERE id = ANY($1::uuid[]) AND state = 'succeeded'`, [ids]);
        return rows[0].n === 2 ? true : undefined;
      }, 'both runs to succeed');
      await waitFor(async () => ((await queue.getJobState('not-a-run')) === 'completed' ? true : undefined), 'the stray job to be dropped');
      expect((await queue.getJobCounts('failed')).failed).toBe(0);
    } finally {
      await queue.close();
    }
  });

  it('stops a running worker from writing once its run was taken over, and records the lease loss', async () => {
    const client = api(kairos.url);
    const created = await client.post('/v1/runs', { target: { type: 'handler', name: 'sleep' }, payload: { ms: 4_000 } });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    await runInState(client, id, 'running', 15_000);

    // Another holder takes the run over (as after a reap and a reclaim elsewhere): the epoch moves on.
    await t.db.query(
      `UPDATE runs SET lease_epoch = lease_epoch + 2, lease_owner = 'usurper', lease_expires_at = now() + interval '1 minute' WHERE id = $1`,
      [id],
    );
    const lost = await waitFor(async () => {
      const events = await runs.events(t.db, id);
      return events.find((e) => e.kind === 'lease_lost');
    }, 'the worker to notice it lost the lease', 10_000);
    expect(lost.leaseEpoch).toBe(1);
    expect(lost.reasonCode).toBe('LEASE_LOST');
    // Noticed on a renewal, while the handler was still running: its execution was stopped.
    expect(lost.detail).toMatchObject({ stage: 'execution' });

    // The worker wrote nothing, not even once the handler's 4 s would have run out (and half a
    // second for a verdict to land): the run is still the usurper's, running at the new epoch.
    const startedAt = (await t.db.query(`SELECT started_at FROM runs WHERE id = $1`, [id])).rows[0].started_at as Date;
    await sleepUntil(startedAt.getTime() + 4_500);
    const row = (await t.db.query(`SELECT state, lease_owner, lease_epoch, result FROM runs WHERE id = $1`, [id])).rows[0];
    expect(row).toEqual({ state: 'running', lease_owner: 'usurper', lease_epoch: 3, result: null });
  });
});
