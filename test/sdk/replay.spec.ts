/**
 * Replay safety across a deploy, on an SDK worker of this process whose handlers' code is swapped
 * while runs are in flight (one worker version throughout: how the claim pins runs to versions is
 * not this file's). A run that stored step "charge" and sleeps resumes on code that asks for
 * "chargeCard": the attempt fails with NONDETERMINISTIC_REPLAY naming both, "charge" is not run
 * again, and the retry on the old code finishes the run. Code that adds a step behind
 * ctx.patched('audit') answers false to a run older code took past it (the audit never runs) and
 * true to a new run, which keeps the answer, and its audit, across a retry. A handler sees its
 * worker's version, and a step of a multi-step run its graph's run.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KairosWorker, type HandlerContext } from '@kairos/sdk';
import { runInState, useKairos } from '../support/kairos.js';

type Code = 'old' | 'new';

describe('replaying durable functions across a code change', () => {
  const { t, client } = useKairos();
  let worker: KairosWorker;
  /** The code the handlers run now: swapped by the tests as a deploy would. */
  const code: { charge: Code; audit: Code } = { charge: 'old', audit: 'old' };
  /** How many times each step's function ran, by run id and step. */
  const ran = new Map<string, number>();
  const count = (ctx: HandlerContext, step: string) => ran.set(`${ctx.runId} ${step}`, (ran.get(`${ctx.runId} ${step}`) ?? 0) + 1);
  const runs = (runId: string, step: string) => ran.get(`${runId} ${step}`) ?? 0;

  beforeAll(async () => {
    const env = t.env();
    worker = new KairosWorker({
      databaseUrl: env.DATABASE_URL!,
      redisUrl: env.REDIS_URL || null,
      queuePrefix: env.KAIROS_QUEUE_PREFIX!,
      queue: 'replay',
      concurrency: 4,
      handlers: {
        'charge-order': async (ctx) => {
          const name = code.charge === 'old' ? 'charge' : 'chargeCard';
          const receipt = await ctx.step(name, () => (count(ctx, name), `receipt-${ctx.runId}`));
          await ctx.sleep('1s');
          return { receipt };
        },
        'audited-order': async (ctx) => {
          await ctx.step('a', () => count(ctx, 'a'));
          const patched = code.audit === 'new' && (await ctx.patched('audit'));
          if (patched) await ctx.step('audit', () => count(ctx, 'audit'));
          // A crash after the audit, once: the retry replays the patch and the audit.
          if (patched && (ctx.payload as { failOnce?: boolean }).failOnce && ctx.attempt === 1) throw new Error('crashed after the audit');
          await ctx.sleep('1s');
          await ctx.step('b', () => count(ctx, 'b'));
          return { patched };
        },
        whoami: async (ctx) => ({ version: ctx.version, parentRunId: ctx.parentRunId, stepName: ctx.stepName }),
      },
      logger: { log: () => undefined, warn: () => undefined, error: () => undefined },
    });
    await worker.start();
  }, 60_000);

  afterAll(async () => {
    await worker?.stop();
  }, 60_000);

  const start = async (name: string, payload: unknown, maxAttempts: number) => {
    const created = await client.post('/v1/runs', {
      target: { type: 'handler', name, queue: 'replay' },
      payload,
      retry: { maxAttempts, backoff: { type: 'fixed', base: '2s', jitter: 0 } },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    return created.body.id as string;
  };
  const checkpoints = (run: { checkpoints: { name: string; kind: string; result: unknown }[] }) => run.checkpoints.map((c) => `${c.kind} ${c.name}`);

  it('fails the replay that asks for another step than the run stored, naming both, without running the stored one again', async () => {
    code.charge = 'old';
    const id = await start('charge-order', null, 2);
    await runInState(client, id, 'sleeping', 20_000);
    code.charge = 'new';
    // The first replay fails; the retry policy applies: the run waits for its second attempt.
    const failed = await runInState(client, id, 'queued', 20_000);
    expect(failed.error).toMatchObject({ reasonCode: 'NONDETERMINISTIC_REPLAY', asked: 'chargeCard', stored: 'charge', attempt: 1 });
    expect(failed.error.message).toMatch(new RegExp(`^the code asks for step "chargeCard" where run ${id} stored step "charge" \\(NONDETERMINISTIC_REPLAY\\): .*ctx\\.patched`));
    expect(runs(id, 'charge')).toBe(1);
    expect(runs(id, 'chargeCard')).toBe(0);
    // Back on the code the run took, the retry replays it to the end.
    code.charge = 'old';
    const done = await runInState(client, id, ['succeeded', 'dead', 'cancelled'], 20_000);
    expect(done).toMatchObject({ state: 'succeeded', attempt: 2, result: { receipt: `receipt-${id}` } });
    expect(runs(id, 'charge')).toBe(1);
    expect(checkpoints(done)).toEqual(['step charge', 'sleep sleep#1']);
  }, 60_000);

  it('ends the run dead with NONDETERMINISTIC_REPLAY when no attempt is left', async () => {
    code.charge = 'old';
    const id = await start('charge-order', null, 1);
    await runInState(client, id, 'sleeping', 20_000);
    code.charge = 'new';
    const dead = await runInState(client, id, ['succeeded', 'dead', 'cancelled'], 20_000);
    expect(dead).toMatchObject({ state: 'dead', reasonCode: 'NONDETERMINISTIC_REPLAY' });
    expect(dead.reasonText).toContain(`the code asks for step "chargeCard" where run ${id} stored step "charge"`);
    expect(runs(id, 'charge')).toBe(1);
    expect(runs(id, 'chargeCard')).toBe(0);
    code.charge = 'old';
  }, 60_000);

  it('answers ctx.patched false to a run older code took past it, and true to a new run, kept across its retry', async () => {
    code.audit = 'old';
    const older = await start('audited-order', {}, 1);
    await runInState(client, older, 'sleeping', 20_000);
    code.audit = 'new';
    const newer = await start('audited-order', { failOnce: true }, 2);

    const olderDone = await runInState(client, older, ['succeeded', 'dead', 'cancelled'], 20_000);
    expect(olderDone).toMatchObject({ state: 'succeeded', result: { patched: false } });
    expect(checkpoints(olderDone)).toEqual(['step a', 'sleep sleep#1', 'step patch:audit', 'step b']);
    expect(olderDone.checkpoints[2].result).toBe(false);
    expect([runs(older, 'a'), runs(older, 'audit'), runs(older, 'b')]).toEqual([1, 0, 1]);

    const newerDone = await runInState(client, newer, ['succeeded', 'dead', 'cancelled'], 30_000);
    expect(newerDone).toMatchObject({ state: 'succeeded', attempt: 2, result: { patched: true } });
    expect(checkpoints(newerDone)).toEqual(['step a', 'step patch:audit', 'step audit', 'sleep sleep#1', 'step b']);
    expect(newerDone.checkpoints[1].result).toBe(true);
    expect([runs(newer, 'a'), runs(newer, 'audit'), runs(newer, 'b')]).toEqual([1, 1, 1]);
  }, 60_000);

  it("gives a handler its worker's version, and a step of a multi-step run its graph's run", async () => {
    const single = await runInState(client, await start('whoami', null, 1), ['succeeded', 'dead', 'cancelled'], 20_000);
    expect(single.result).toEqual({ version: 'unversioned', parentRunId: null, stepName: null });

    const created = await client.post('/v1/runs', { steps: [{ name: 'first', target: { type: 'handler', name: 'whoami', queue: 'replay' } }], retry: { maxAttempts: 1 } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const graph = await runInState(client, created.body.id, ['succeeded', 'dead', 'cancelled'], 20_000);
    expect(graph.state).toBe('succeeded');
    expect(graph.steps[0].result).toEqual({ version: 'unversioned', parentRunId: graph.id, stepName: 'first' });
  }, 60_000);
});
