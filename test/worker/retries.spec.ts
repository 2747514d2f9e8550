/**
 * Retries follow the policy's timing, the last failure dead-letters, non-retryable failures go
 * straight to dead, a dead run can be republished or retried, and cancellation works on queued and
 * running runs.
 */
import { describe, expect, it } from 'vitest';
import { ENDED_STATES, runInState, runsQueue, useKairos, waitFor } from '../support/kairos.js';

describe('retries, dead letters and cancellation', () => {
  const { t, client } = useKairos({ env: { KAIROS_RUN_LEASE_TTL: '1500ms' } });

  const ended = (id: string, timeoutMs = 15_000) => runInState(client, id, ENDED_STATES, timeoutMs);
  const events = async (id: string) => (await client.get(`/v1/runs/${id}/events`)).body.items as any[];

  it.each([
    ['fixed', { type: 'fixed', base: '600ms', max: '600ms', jitter: 0 }, [600, 600]],
    ['exponential', { type: 'exponential', base: '300ms', max: '10s', jitter: 0 }, [300, 600]],
  ])('retries with %s backoff on schedule and succeeds on the third attempt', async (_type, backoff, delays) => {
    const run = (await client.post('/v1/runs', { target: { type: 'handler', name: 'fail' }, payload: { times: 2 }, retry: { maxAttempts: 3, backoff } })).body;
    const done = await ended(run.id);
    expect(done).toMatchObject({ state: 'succeeded', attempt: 3, result: { succeededOnAttempt: 3 } });
    const history = await events(run.id);
    expect(history.map((e) => e.kind)).toEqual(['queued', 'claimed', 'retry_scheduled', 'claimed', 'retry_scheduled', 'claimed', 'succeeded']);
    const at = (i: number) => Date.parse(history[i].at);
    const gaps = [at(3) - at(2), at(5) - at(4)];
    gaps.forEach((gap, i) => {
      expect(gap).toBeGreaterThanOrEqual(delays[i]! - 20);
      expect(gap).toBeLessThan(delays[i]! + 1_000);
    });
    expect(history[2]).toMatchObject({ reasonCode: 'HANDLER_ERROR', detail: { nextAttempt: 2, delayMs: delays[0] } });
  });

  it('dead-letters the last failure, and republish runs it again as a fresh run', async () => {
    const run = (await client.post('/v1/runs', {
      target: { type: 'handler', name: 'fail' },
      payload: { message: 'boom' },
      retry: { maxAttempts: 2, backoff: { type: 'fixed', base: '100ms', max: '100ms', jitter: 0 } },
    })).body;
    const dead = await ended(run.id);
    expect(dead).toMatchObject({ state: 'dead', attempt: 2, reasonCode: 'HANDLER_ERROR', error: { message: 'boom', attempt: 2 } });
    expect(dead.reasonText).toMatch(/attempt 2 of 2 failed, no attempts left: boom/);
    const letters = (await client.get('/v1/dead-letters')).body.items;
    expect(letters.map((l: any) => l.id)).toContain(run.id);

    const republished = await client.post(`/v1/dead-letters/${run.id}/republish`);
    expect(republished.status).toBe(201);
    expect(republished.body).toMatchObject({ origin: 'republish', sourceRunId: run.id, attempt: 1, payload: { message: 'boom' } });
    const again = await ended(republished.body.id);
    expect(again.state).toBe('dead');
    expect((await events(again.id)).filter((e) => e.kind === 'claimed')).toHaveLength(2);

    const retried = await client.post(`/v1/runs/${run.id}/retry`);
    expect(retried.status).toBe(201);
    expect(retried.body).toMatchObject({ origin: 'retry', sourceRunId: run.id });
    const ok = (await client.post('/v1/runs', { target: { type: 'handler', name: 'noop' } })).body;
    expect((await ended(ok.id)).state).toBe('succeeded');
    const refused = await client.post(`/v1/runs/${ok.id}/retry`);
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({ code: 'INVALID_STATE' });
  });

  it('sends a non-retryable failure straight to dead', async () => {
    const run = (await client.post('/v1/runs', {
      target: { type: 'handler', name: 'fail' },
      payload: { message: 'bad input', retryable: false },
      retry: { maxAttempts: 5 },
    })).body;
    const dead = await ended(run.id);
    expect(dead).toMatchObject({ state: 'dead', attempt: 1, reasonCode: 'HANDLER_NON_RETRYABLE' });
    expect(dead.reasonText).toMatch(/not retryable/);
  });

  it('cancels a queued run at once', async () => {
    const run = (await client.post('/v1/runs', { target: { type: 'handler', name: 'noop' }, availableAt: '2999-01-01T00:00:00Z' })).body;
    const cancelled = await client.post(`/v1/runs/${run.id}/cancel`);
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toMatchObject({ state: 'cancelled', reasonCode: 'CANCELLED_BY_USER' });
    // Its job is still in Redis. Handed to the worker now, it finds the run cancelled and is dropped.
    const queue = await runsQueue(t);
    try {
      const job = (await queue.getJob(run.id))!;
      expect(await job.getState()).toBe('delayed');
      await job.promote();
      await waitFor(async () => ((await queue.getJob(run.id)) === undefined ? true : undefined), 'the worker to drop the job of the cancelled run');
    } finally {
      await queue.close();
    }
    expect((await client.get(`/v1/runs/${run.id}`)).body.state).toBe('cancelled');
    expect((await events(run.id)).map((e) => e.kind)).toEqual(['queued', 'cancel_requested', 'cancelled']);
    const again = await client.post(`/v1/runs/${run.id}/cancel`);
    expect(again.status).toBe(409);
    expect(again.body.code).toBe('INVALID_STATE');
  });

  it('cancels a running handler through its abort signal, within a lease renewal', async () => {
    const run = (await client.post('/v1/runs', { target: { type: 'handler', name: 'sleep' }, payload: { ms: 20_000 } })).body;
    await runInState(client, run.id, 'running', 15_000);
    const requestedAt = Date.now();
    expect((await client.post(`/v1/runs/${run.id}/cancel`)).body).toMatchObject({ state: 'running' });
    const done = await ended(run.id, 5_000);
    expect(done).toMatchObject({ state: 'cancelled', reasonCode: 'CANCELLED_BY_USER' });
    expect(Date.parse(done.finishedAt) - requestedAt).toBeLessThan(1_500);
    expect((await events(run.id)).map((e) => e.kind)).toEqual(['queued', 'claimed', 'cancel_requested', 'cancelled']);
  });

  it('times a run out and retries it', async () => {
    const run = (await client.post('/v1/runs', {
      target: { type: 'handler', name: 'sleep' },
      payload: { ms: 5_000 },
      timeout: '300ms',
      retry: { maxAttempts: 2, backoff: { type: 'fixed', base: '100ms', max: '100ms', jitter: 0 } },
    })).body;
    const dead = await ended(run.id);
    expect(dead).toMatchObject({ state: 'dead', attempt: 2, reasonCode: 'TIMEOUT' });
    expect((await events(run.id)).map((e) => e.kind)).toEqual(['queued', 'claimed', 'retry_scheduled', 'claimed', 'dead']);
  });
});
