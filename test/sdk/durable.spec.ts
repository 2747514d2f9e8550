/**
 * Durable functions on a user worker built from the packed @kairos/sdk: the onboarding example
 * (a step, a sleep, a wait for a person's answer, another step) with seconds for days. A kill -9
 * right after the first step stored its result does not run it twice; the sleep wakes on time; a
 * signal sent before the run asks and one sent after are both delivered, a second is refused, a
 * timeout answers null; a parked run holds no worker slot (1,000 sleeping runs on concurrency 8),
 * is cancelled at once, and wakes though the transport lost its job.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { StartedKairos } from '@kairos/process';
import { runCli } from '../../apps/cli/src/cli.js';
import { api, runInState, startInProcess, useTestEnvironment, waitFor, wipeTransport } from '../support/kairos.js';
import { userProject, userWorkers, type UserProject } from './packed-sdk.js';

const WORKER_SCRIPT = `
import { appendFileSync, existsSync, writeFileSync } from 'node:fs';
import { KairosWorker } from '@kairos/sdk';

const log = (line) => appendFileSync('durable.log', line + '\\n');

const worker = new KairosWorker({
  queue: 'agents',
  concurrency: Number(process.env.CONCURRENCY ?? 8),
  handlers: {
    'onboard-user': async (ctx) => {
      const account = await ctx.step('create-account', () => {
        log('create ' + ctx.payload.email);
        return { id: 'acct-' + ctx.payload.email, key: ctx.idempotencyKey('create-account') };
      });
      // The first worker to get here dies at once (kill -9 of itself), once per run.
      if (ctx.payload.crashAfterCreate && !existsSync('crashed-' + ctx.runId)) {
        writeFileSync('crashed-' + ctx.runId, '');
        process.kill(process.pid, 'SIGKILL');
      }
      await ctx.sleep(ctx.payload.sleep ?? '2s');
      const answer = await ctx.waitForSignal('approval', { timeout: ctx.payload.timeout ?? '30s' });
      if (!answer?.approved) return { approved: false, account: account.id };
      await ctx.step('send-welcome', () => { log('welcome ' + account.id); return 'sent'; }, { retry: { maxAttempts: 5 } });
      return { approved: true, account: account.id, key: account.key };
    },
    nap: async (ctx) => {
      await ctx.sleep(ctx.payload?.sleep ?? '2s');
      return 'rested';
    },
  },
});
await worker.start();
console.log('ready ' + worker.id);
`;

describe('durable functions on a user worker', () => {
  const t = useTestEnvironment();
  let control: StartedKairos;
  let client: ReturnType<typeof api>;
  let project: UserProject;
  const workers = userWorkers(t, () => project, { KAIROS_RUN_LEASE_TTL: '2s', KAIROS_SHUTDOWN_GRACE: '1s' });
  const startWorker = workers.start;

  beforeAll(async () => {
    [project, control] = await Promise.all([userProject({ 'worker.mjs': WORKER_SCRIPT }), startInProcess(t.env({ KAIROS_RUN_LEASE_TTL: '2s' }))]);
    client = api(control.url);
  }, 300_000);

  afterEach(() => workers.killAll());

  afterAll(async () => {
    await control?.app.close();
    await project?.remove();
  });

  const onboard = async (payload: Record<string, unknown>) => {
    const created = await client.post('/v1/runs', { target: { type: 'handler', name: 'onboard-user', queue: 'agents' }, payload, retry: { maxAttempts: 3, backoff: { type: 'fixed', base: '100ms' } } });
    expect(created.status).toBe(201);
    return created.body.id as string;
  };
  const signal = (runId: string, body: unknown, name = 'approval') => client.post(`/v1/runs/${runId}/signals/${name}`, body);
  const logLines = async (prefix: string) => (await readFile(join(project.dir, 'durable.log'), 'utf8').catch(() => '')).split('\n').filter((l) => l.startsWith(prefix));
  const events = async (runId: string) => (await client.get(`/v1/runs/${runId}/events`)).body.items as { kind: string; at: string; detail: Record<string, unknown> }[];

  it('runs the onboarding example: the step once, the sleep on time, the signal sent after the wait delivered, a second refused', async () => {
    await startWorker();
    const runId = await onboard({ email: 'ada@example.com', sleep: '2s' });
    const waiting = await runInState(client, runId, 'waiting', 20_000);
    expect(waiting.checkpoints.map((c: { name: string; state: string }) => `${c.name}:${c.state}`)).toEqual(['create-account:succeeded', 'sleep#1:woken', 'signal:approval:waiting']);
    // The sleep woke on time: the claim after it came within a second of its wake instant.
    const story = await events(runId);
    const slept = story.find((e) => e.kind === 'slept')!;
    const resumed = story.filter((e) => e.kind === 'claimed').at(-1)!;
    const wakeAt = Date.parse(slept.detail.wakeAt as string);
    expect(Date.parse(resumed.at)).toBeGreaterThanOrEqual(wakeAt - 20);
    expect(Date.parse(resumed.at) - wakeAt).toBeLessThan(1_000);

    const sent = await signal(runId, { approved: true, by: 'grace' });
    expect(sent.status).toBe(202);
    expect(sent.body).toEqual({ delivered: true });
    const done = await runInState(client, runId, ['succeeded', 'dead', 'cancelled'], 20_000);
    expect(done).toMatchObject({ state: 'succeeded', result: { approved: true, account: 'acct-ada@example.com', key: `${runId}:create-account` } });
    expect(done.checkpoints.map((c: { name: string; state: string }) => `${c.name}:${c.state}`)).toEqual([
      'create-account:succeeded',
      'sleep#1:woken',
      'signal:approval:received',
      'send-welcome:succeeded',
    ]);
    expect(done.checkpoints[2].result).toEqual({ approved: true, by: 'grace' });
    expect(await logLines('create ada@')).toHaveLength(1);
    // kairos explain tells the checkpoints in order.
    const lines: string[] = [];
    await runCli(['explain', runId], { line: (l) => lines.push(l) }, { DATABASE_URL: t.databaseUrl });
    expect(lines.filter((l) => /^ {4}(step|sleep|signal) /.test(l)).map((l) => l.trim().replace(/: \w+, .*$/, ''))).toEqual([
      'step   create-account',
      'sleep  sleep#1',
      'signal signal:approval',
      'step   send-welcome',
    ]);
    expect(lines.join('\n')).toMatch(/sleep {2}sleep#1: woken, \S+ → \S+, wakes \S+/);

    const again = await signal(runId, { approved: false });
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ code: 'SIGNAL_ALREADY_DELIVERED', field: 'name' });
    const ended = await signal(runId, {}, 'another');
    expect(ended.status).toBe(409);
    expect(ended.body).toMatchObject({ code: 'INVALID_STATE' });
  }, 60_000);

  it('keeps a signal sent before the run asks, refuses the same name twice, and answers null when the wait times out', async () => {
    await startWorker();
    const early = await onboard({ email: 'early@example.com', sleep: '1s' });
    const sent = await signal(early, { approved: true });
    expect(sent.status).toBe(202);
    expect(sent.body).toEqual({ delivered: false });
    const twice = await signal(early, { approved: true });
    expect(twice.status).toBe(409);
    expect(twice.body).toMatchObject({ code: 'SIGNAL_ALREADY_DELIVERED', field: 'name' });
    expect(await runInState(client, early, ['succeeded', 'dead', 'cancelled'], 20_000)).toMatchObject({ state: 'succeeded', result: { approved: true } });

    const ignored = await onboard({ email: 'ignored@example.com', sleep: '100ms', timeout: '1s' });
    const done = await runInState(client, ignored, ['succeeded', 'dead', 'cancelled'], 20_000);
    expect(done).toMatchObject({ state: 'succeeded', result: { approved: false } });
    expect(done.checkpoints.find((c: { name: string }) => c.name === 'signal:approval')).toMatchObject({ state: 'timed_out', result: null });
  }, 60_000);

  it('does not create the account twice when the worker is killed right after the step stored it', async () => {
    await startWorker();
    await startWorker();
    const runId = await onboard({ email: 'crash@example.com', crashAfterCreate: true, sleep: '100ms' });
    await runInState(client, runId, 'waiting', 30_000);
    await signal(runId, { approved: true });
    const done = await runInState(client, runId, ['succeeded', 'dead', 'cancelled'], 20_000);
    expect(done).toMatchObject({ state: 'succeeded', crashCount: 1, result: { approved: true, account: 'acct-crash@example.com' } });
    expect(await logLines('create crash@')).toHaveLength(1);
    expect(await logLines('welcome acct-crash@')).toHaveLength(1);
  }, 60_000);

  it('ends a parked run cancelled at once', async () => {
    await startWorker();
    const runId = await onboard({ email: 'cancel@example.com', sleep: '1h' });
    await runInState(client, runId, 'sleeping', 20_000);
    const cancelled = await client.post(`/v1/runs/${runId}/cancel`);
    expect(cancelled.body).toMatchObject({ state: 'cancelled', reasonCode: 'CANCELLED_BY_USER' });
  });

  it('holds no worker slot while parked: 1,000 runs sleeping 2 s on concurrency 8 all wake and finish', async () => {
    await startWorker({ CONCURRENCY: '8' });
    const started = Date.now();
    const items = Array.from({ length: 1_000 }, () => ({ target: { type: 'handler', name: 'nap', queue: 'agents' }, payload: { sleep: '2s' } }));
    const created = await client.post('/v1/runs/batch', { items });
    expect(created.status).toBe(200);
    const ids = created.body.items.map((i: { id: string }) => i.id);
    await waitFor(
      async () => {
        const { rows } = await t.db.query(`SELECT count(*)::int AS n FROM runs WHERE id = ANY($1::uuid[]) AND state = 'succeeded'`, [ids]);
        return rows[0].n === ids.length ? true : undefined;
      },
      'every napping run to finish',
      90_000,
      500,
    );
    // Held slots would have taken 1,000 × 2 s / 8 = 250 s.
    expect(Date.now() - started).toBeLessThan(90_000);
  }, 120_000);

  it('wakes sleeping runs whose jobs the transport lost', async () => {
    await startWorker();
    const items = Array.from({ length: 20 }, () => ({ target: { type: 'handler', name: 'nap', queue: 'agents' }, payload: { sleep: '2s' } }));
    const ids = (await client.post('/v1/runs/batch', { items })).body.items.map((i: { id: string }) => i.id);
    await waitFor(
      async () => {
        const { rows } = await t.db.query(`SELECT count(*)::int AS n FROM runs WHERE id = ANY($1::uuid[]) AND state = 'sleeping'`, [ids]);
        return rows[0].n === ids.length ? true : undefined;
      },
      'every run to sleep',
    );
    await wipeTransport(t);
    await waitFor(
      async () => {
        const { rows } = await t.db.query(`SELECT count(*)::int AS n FROM runs WHERE id = ANY($1::uuid[]) AND state = 'succeeded'`, [ids]);
        return rows[0].n === ids.length ? true : undefined;
      },
      'every run to wake and finish',
      30_000,
    );
  }, 60_000);
});
