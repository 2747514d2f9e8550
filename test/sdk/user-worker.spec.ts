/**
 * A user's worker, built from the packed @kairos/sdk installed into a temporary project and run as
 * its own process, serves queue `media` beside the built-in worker (which serves `default` and
 * never touches media runs). Its runs get every guarantee of the built-in worker: a kill -9 mid-run
 * hands the run to another worker and the dead one's epoch is fenced off; NonRetryableError ends a
 * run dead at once, other errors are retried; cancellation and timeout reach the handler's signal;
 * a run that reaches a worker without its handler is handed back and finished once one has it.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { StartedKairos } from '@kairos/process';
import { ENDED_STATES, api, runInState, startInProcess, useTestEnvironment, waitFor } from '../support/kairos.js';
import { userProject, userWorkers, type UserProject } from './packed-sdk.js';
import { WorkerProtocol } from '../../packages/sdk/src/worker/worker-protocol.js';

/** Plain JavaScript, as a user writes it against the installed package. */
const WORKER_SCRIPT = `
import { KairosWorker, NonRetryableError } from '@kairos/sdk';

const sleep = (ms, signal) => new Promise((resolve, reject) => {
  const timer = setTimeout(resolve, ms);
  signal.addEventListener('abort', () => { clearTimeout(timer); reject(signal.reason); }, { once: true });
});

const all = {
  resize: async ({ payload, attempt, scheduleId }) => ({ resized: payload?.image ?? null, attempt, scheduled: scheduleId !== null, pid: process.pid }),
  slow: async ({ signal }) => { await sleep(4000, signal); return { pid: process.pid }; },
  'fail-hard': async () => { throw new NonRetryableError('the image is corrupt'); },
  flaky: async ({ attempt }) => { if (attempt < 2) throw new Error('try again'); return { attempt }; },
  'wait-for-signal': ({ runId, signal }) => new Promise((_, reject) => signal.addEventListener('abort', () => {
    console.log('aborted ' + runId + ' ' + signal.reason.kind);
    reject(signal.reason);
  }, { once: true })),
  late: async () => ({ late: true }),
};
const names = (process.env.HANDLERS ?? Object.keys(all).join(',')).split(',');
const worker = new KairosWorker({
  queue: 'media',
  concurrency: 4,
  version: process.env.VERSION ?? '1.0.0',
  handlers: Object.fromEntries(names.map((n) => [n, all[n]])),
});
await worker.start();
console.log('ready ' + worker.id);
process.on('SIGTERM', async () => { await worker.stop(); process.exit(0); });
`;

describe('a user worker from the packed SDK', () => {
  let control: StartedKairos;
  let client: ReturnType<typeof api>;
  let project: UserProject;
  const t = useTestEnvironment();
  const workers = userWorkers(t, () => project, { KAIROS_RUN_LEASE_TTL: '2s', KAIROS_SHUTDOWN_GRACE: '1s' });
  const startWorker = workers.start;

  beforeAll(async () => {
    [project, control] = await Promise.all([
      userProject({ 'worker.mjs': WORKER_SCRIPT }),
      startInProcess(t.env({ KAIROS_RUN_LEASE_TTL: '2s', KAIROS_CRASH_BUDGET: '3' })),
    ]);
    client = api(control.url);
  }, 300_000);

  afterEach(() => workers.killAll());

  afterAll(async () => {
    await control?.app.close();
    await project?.remove();
  });

  const runOf = async (id: string) => (await client.get(`/v1/runs/${id}`)).body;
  const settled = (id: string, timeoutMs = 30_000) => runInState(client, id, ENDED_STATES, timeoutMs);
  const events = async (id: string) => (await client.get(`/v1/runs/${id}/events`)).body.items as { kind: string; actor: string; leaseEpoch: number; reasonCode: string | null }[];
  const media = (name: string) => ({ type: 'handler', name, queue: 'media' });

  it('runs scheduled and ad-hoc runs of queue media, and the built-in worker never touches them', async () => {
    const before = await client.post('/v1/runs', { target: media('resize') });
    expect(before.status).toBe(400);
    expect(before.body).toMatchObject({ code: 'UNKNOWN_HANDLER', field: 'target.name' });

    const worker = await startWorker();
    const listed = (await client.get('/v1/workers')).body.items;
    expect(listed).toContainEqual(expect.objectContaining({ id: worker.id, queue: 'media', version: '1.0.0', handlers: ['fail-hard', 'flaky', 'late', 'resize', 'slow', 'wait-for-signal'] }));

    const adHoc = (await client.post('/v1/runs', { target: media('resize'), payload: { image: 'cat.png' } })).body;
    const schedule = (await client.post('/v1/schedules', { every: '1s', target: media('resize'), payload: { image: 'dog.png' } })).body;
    expect(schedule.target).toEqual(media('resize'));
    const done = await settled(adHoc.id);
    expect(done).toMatchObject({ state: 'succeeded', result: { resized: 'cat.png', attempt: 1, scheduled: false, pid: worker.process.pid } });

    const scheduled = await waitFor(async () => {
      const runs = (await client.get(`/v1/runs?scheduleId=${schedule.id}&state=succeeded`)).body.items;
      return runs.length >= 2 ? runs : undefined;
    }, 'two scheduled runs to succeed', 30_000);
    expect(scheduled[0].result).toMatchObject({ resized: 'dog.png', scheduled: true, pid: worker.process.pid });
    await client.delete(`/v1/schedules/${schedule.id}`);

    const { rows } = await t.db.query(`SELECT id FROM workers WHERE queue = 'default'`);
    const builtIn = rows.map((r) => r.id as string);
    expect(builtIn).toHaveLength(1);
    for (const run of [done, ...scheduled]) {
      const actors = (await events(run.id)).map((e) => e.actor);
      expect(actors.some((a) => a === worker.id)).toBe(true);
      expect(actors.filter((a) => builtIn.includes(a))).toEqual([]);
    }
    // The built-in worker still serves the default queue next to it.
    expect((await settled((await client.post('/v1/runs', { target: { type: 'handler', name: 'echo' }, payload: 1 })).body.id)).result).toBe(1);
  });

  it('hands the run of a worker killed mid-run to another one, and refuses the dead epoch', async () => {
    const first = await startWorker();
    const second = await startWorker();
    const run = (await client.post('/v1/runs', { target: media('slow'), retry: { maxAttempts: 1 } })).body;
    const holder = await waitFor(async () => {
      const { rows } = await t.db.query(`SELECT lease_owner, lease_epoch FROM runs WHERE id = $1 AND state = 'running'`, [run.id]);
      return rows[0] as { lease_owner: string; lease_epoch: number } | undefined;
    }, 'a user worker to claim the slow run');
    const [victim, rescuer] = holder.lease_owner === first.id ? [first, second] : [second, first];
    victim.process.kill('SIGKILL');

    const done = await settled(run.id, 45_000);
    expect(done).toMatchObject({ state: 'succeeded', crashCount: 1, result: { pid: rescuer.process.pid } });
    const history = await events(run.id);
    expect(history.map((e) => e.kind)).toEqual(['queued', 'claimed', 'reaped', 'claimed', 'succeeded']);
    expect(history.at(-1)!.actor).toBe(rescuer.id);

    // What the killed worker would have written at its epoch changes nothing.
    const stale = await new WorkerProtocol().finishMany(t.db, victim.id, [
      { runId: run.id, epoch: holder.lease_epoch, verdict: { state: 'failed', result: null, error: { message: 'late' }, reasonCode: 'HANDLER_ERROR', reasonText: null, response: null } },
    ]);
    expect(stale.written.size).toBe(0);
    expect(await runOf(run.id)).toMatchObject({ state: 'succeeded', result: { pid: rescuer.process.pid } });
  });

  it('ends a NonRetryableError dead after one attempt and retries a plain error', async () => {
    await startWorker();
    const hard = (await client.post('/v1/runs', { target: media('fail-hard'), retry: { maxAttempts: 5 } })).body;
    const flaky = (await client.post('/v1/runs', { target: media('flaky'), retry: { maxAttempts: 3, backoff: { type: 'fixed', base: '200ms' } } })).body;
    expect(await settled(hard.id)).toMatchObject({ state: 'dead', attempt: 1, reasonCode: 'HANDLER_NON_RETRYABLE', error: { message: 'the image is corrupt' } });
    expect(await settled(flaky.id)).toMatchObject({ state: 'succeeded', attempt: 2, result: { attempt: 2 } });
    expect((await events(flaky.id)).map((e) => e.kind)).toContain('retry_scheduled');
  });

  it('aborts the signal on cancellation and on timeout', async () => {
    const worker = await startWorker();
    const cancelled = (await client.post('/v1/runs', { target: media('wait-for-signal') })).body;
    const timedOut = (await client.post('/v1/runs', { target: media('wait-for-signal'), timeout: '1s', retry: { maxAttempts: 1 } })).body;
    await runInState(client, cancelled.id, 'running', 15_000);
    await client.post(`/v1/runs/${cancelled.id}/cancel`);
    expect(await settled(cancelled.id)).toMatchObject({ state: 'cancelled', reasonCode: 'CANCELLED_BY_USER' });
    expect(await settled(timedOut.id)).toMatchObject({ state: 'dead', reasonCode: 'TIMEOUT' });
    expect(worker.output()).toContain(`aborted ${cancelled.id} cancelled`);
    expect(worker.output()).toContain(`aborted ${timedOut.id} timeout`);
  });

  it('hands back a run that reaches a worker without its handler, and finishes it once one has it', async () => {
    // Version 2 registered `late` and was stopped; version 1, without it, still serves the queue.
    const v2 = await startWorker({ VERSION: '2.0.0' });
    v2.process.kill('SIGTERM');
    await v2.exited;
    const v1 = await startWorker({ HANDLERS: 'resize', VERSION: '1.0.0' });
    const run = (await client.post('/v1/runs', { target: media('late') })).body;
    const handedBack = await waitFor(async () => (await events(run.id)).find((e) => e.kind === 'handed_back'), 'the run to be handed back');
    expect(handedBack.reasonCode).toBe('HANDLER_NOT_REGISTERED');
    expect(await runOf(run.id)).toMatchObject({ state: 'queued', attempt: 1 });

    // The deploy goes on: version 2 starts again, version 1 stops.
    await startWorker({ VERSION: '2.0.0' });
    v1.process.kill('SIGTERM');
    expect(await settled(run.id, 60_000)).toMatchObject({ state: 'succeeded', attempt: 1, result: { late: true } });
    const detail = (await client.get(`/v1/runs/${run.id}`)).body;
    expect(detail.attempts.map((a: { outcome: string }) => a.outcome)).toContain('handed_back');
    expect(detail.attempts.at(-1)).toMatchObject({ outcome: 'succeeded' });
  }, 150_000);
});
