/**
 * Workers that freeze or die lose nothing. A worker stopped with SIGSTOP past its lease loses the
 * run to the reaper, another worker finishes it, and the frozen one's late verdict is refused once
 * it is resumed (visible in the run's events). A worker killed with SIGKILL mid-run has its run
 * requeued and finished elsewhere; a run that kills every worker ends dead as POISONED.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { RunRepository } from '@kairos/ledger';
import { runInState, SPAWNING_TIMEOUT_MS, spawnKairos, useKairos, waitFor, type KairosChild } from '../support/kairos.js';

const WORKER_ENV = { KAIROS_RUN_LEASE_TTL: '2s', KAIROS_WORKER_CONCURRENCY: '4' };

describe('worker crashes', () => {
  const workers: KairosChild[] = [];

  const { t, client } = useKairos({ env: { KAIROS_CRASH_BUDGET: '2' }, roles: ['api', 'scheduler'] });

  afterEach(async () => {
    const stopping = workers.splice(0);
    for (const w of stopping) {
      w.process.kill('SIGCONT');
      w.process.kill('SIGKILL');
    }
    await Promise.all(stopping.map((w) => w.exited));
  });

  async function startWorker(): Promise<KairosChild> {
    const worker = spawnKairos('worker', t.env(WORKER_ENV));
    workers.push(worker);
    await worker.ready;
    return worker;
  }

  /**
   * The pid of the worker holding the run under a claim made after epoch `after`, once there is
   * one. A killed worker's claim stays on the row (running, its owner) until the reaper takes the
   * run back, so a claim is only new when its epoch is past the one seen before.
   */
  const claimedAfter = async (runId: string, after: number): Promise<{ pid: number; epoch: number } | undefined> => {
    const { rows } = await t.db.query(`SELECT state, lease_owner, lease_epoch FROM runs WHERE id = $1`, [runId]);
    const row = rows[0];
    if (row?.state !== 'running' || row.lease_epoch <= after) return undefined;
    return { pid: Number(String(row.lease_owner).split(':')[1]), epoch: row.lease_epoch };
  };
  const events = async (runId: string) =>
    (await new RunRepository().events(t.db, runId)).map((e) => ({ kind: e.kind, lease_epoch: e.leaseEpoch, actor: e.actor, reason_code: e.reasonCode }));

  it('refuses the late verdict of a worker frozen past its lease, after another worker finished the run', async () => {
    const frozen = await startWorker();
    const run = (await client.post('/v1/runs', { target: { type: 'handler', name: 'sleep' }, payload: { ms: 3_000 } })).body;
    expect((await waitFor(() => claimedAfter(run.id, 0), 'the first worker to claim')).pid).toBe(frozen.process.pid);
    frozen.process.kill('SIGSTOP');

    const rescuer = await startWorker();
    const finished = await waitFor(async () => {
      const { rows } = await t.db.query(`SELECT state, lease_epoch, crash_count FROM runs WHERE id = $1`, [run.id]);
      return rows[0].state === 'succeeded' ? rows[0] : undefined;
    }, 'another worker to finish the run', 25_000);
    expect(finished.crash_count).toBe(1);
    expect(finished.lease_epoch).toBe(3);
    const rescuerEvents = await events(run.id);
    expect(rescuerEvents.find((e) => e.kind === 'succeeded')!.actor).toContain(`:${rescuer.process.pid}:`);

    frozen.process.kill('SIGCONT');
    const refused = await waitFor(async () => (await events(run.id)).find((e) => e.kind === 'lease_lost'), 'the resumed worker to report its refused verdict', 10_000);
    expect(refused).toMatchObject({ lease_epoch: 1, reason_code: 'LEASE_LOST' });
    expect(refused.actor).toContain(`:${frozen.process.pid}:`);
    expect((await events(run.id)).map((e) => `${e.kind}@${e.lease_epoch}`)).toEqual([
      'queued@0',
      'claimed@1',
      'reaped@2',
      'claimed@3',
      'succeeded@3',
      'lease_lost@1',
    ]);
    const row = (await client.get(`/v1/runs/${run.id}`)).body;
    expect(row).toMatchObject({ state: 'succeeded', leaseEpoch: 3 });
  }, SPAWNING_TIMEOUT_MS);

  it('requeues the run of a worker killed mid-run and finishes it elsewhere', async () => {
    const doomed = await startWorker();
    const run = (await client.post('/v1/runs', { target: { type: 'handler', name: 'sleep' }, payload: { ms: 1_500 } })).body;
    expect((await waitFor(() => claimedAfter(run.id, 0), 'the worker to claim')).pid).toBe(doomed.process.pid);
    doomed.process.kill('SIGKILL');
    await doomed.exited;
    await startWorker();
    const done = await runInState(client, run.id, 'succeeded', 25_000);
    expect(done).toMatchObject({ crashCount: 1, attempt: 1 });
    expect((await events(run.id)).map((e) => e.kind)).toEqual(['queued', 'claimed', 'reaped', 'claimed', 'succeeded']);
  }, SPAWNING_TIMEOUT_MS);

  it('quarantines a run that outlives its crash budget as POISONED', async () => {
    const run = (await client.post('/v1/runs', { target: { type: 'handler', name: 'sleep' }, payload: { ms: 30_000 } })).body;
    // Claimed at epoch 1; reaped (2) and claimed again (3) after the first crash.
    let epoch = 0;
    for (let crash = 1; crash <= 2; crash++) {
      const worker = await startWorker();
      const claim = await waitFor(() => claimedAfter(run.id, epoch), `worker ${crash} to claim`, 25_000);
      expect(claim).toEqual({ pid: worker.process.pid, epoch: 2 * crash - 1 });
      epoch = claim.epoch;
      worker.process.kill('SIGKILL');
      await worker.exited;
    }
    const dead = await runInState(client, run.id, 'dead', 15_000);
    expect(dead).toMatchObject({ reasonCode: 'POISONED', crashCount: 2 });
    expect((await events(run.id)).map((e) => e.kind)).toEqual(['queued', 'claimed', 'reaped', 'claimed', 'poisoned']);
    const letters = (await client.get('/v1/dead-letters')).body.items;
    expect(letters.map((l: any) => l.id)).toContain(run.id);
  }, SPAWNING_TIMEOUT_MS);
});
