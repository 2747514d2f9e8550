/**
 * Live progress of a run, and a run as a stream: a handler on an SDK worker of this process reports
 * ctx.progress five times with pauses between; a client reading GET /v1/runs/:id/stream (server-sent
 * events, parsed from a streaming body) sees the progress rise in order to the last value and the
 * run succeed, and then the stream ends. A second API process on the same ledger streams a run that
 * the worker changes. Progress over 64 KiB is refused (the run is dead, saying why); a report at a
 * stale epoch changes nothing; an unknown run is a JSON 404.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KairosApiError, KairosClient, KairosWorker } from '@kairos/sdk';
import { runInState, sleep, spawnKairos, SPAWNING_TIMEOUT_MS, useKairos, type KairosChild } from '../support/kairos.js';

interface RunView {
  id: string;
  state: string;
  progress: { done?: number; total?: number; phase?: string } | null;
  result: unknown;
  reasonCode: string | null;
  reasonText: string | null;
  leaseEpoch: number;
}

/** The `event: run` views of a stream, until it ends (or `timeoutMs` passes, which fails). */
async function streamed(url: string, timeoutMs = 30_000, onView?: (view: RunView) => void): Promise<{ views: RunView[]; comments: number }> {
  const response = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  const views: RunView[] = [];
  let comments = 0;
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += value;
    for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let event = 'message';
      const data: string[] = [];
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) comments += 1;
        else if (line.startsWith('event: ')) event = line.slice('event: '.length);
        else if (line.startsWith('data: ')) data.push(line.slice('data: '.length));
      }
      if (event === 'run' && data.length > 0) {
        const view = JSON.parse(data.join('\n')) as RunView;
        views.push(view);
        onView?.(view);
      }
    }
  }
  return { views, comments };
}

/** The distinct progress counts in the order the stream showed them. */
function progressCounts(views: RunView[]): number[] {
  const counts: number[] = [];
  for (const view of views) {
    const done = view.progress?.done;
    if (typeof done === 'number' && counts.at(-1) !== done) counts.push(done);
  }
  return counts;
}

describe('live progress of a run, and the run as a stream', () => {
  const { t, kairos, client } = useKairos();
  let worker: KairosWorker;
  let second: KairosChild | null = null;
  const warnings: string[] = [];

  beforeAll(async () => {
    const env = t.env();
    worker = new KairosWorker({
      databaseUrl: env.DATABASE_URL!,
      redisUrl: env.REDIS_URL || null,
      queuePrefix: env.KAIROS_QUEUE_PREFIX!,
      queue: 'progress',
      concurrency: 4,
      handlers: {
        'count-up': async (ctx) => {
          const { total, pauseMs } = ctx.payload as { total: number; pauseMs: number };
          for (let done = 1; done <= total; done++) {
            // Not awaited on purpose: reporting never holds the handler up.
            void ctx.progress({ done, total });
            await sleep(pauseMs);
          }
          return { counted: total };
        },
        'too-much': async (ctx) => {
          await ctx.progress({ blob: 'x'.repeat(70 * 1024) });
          return 'unreachable';
        },
        hold: async (ctx) => {
          await ctx.progress({ phase: 'holding' });
          await sleep((ctx.payload as { ms: number }).ms);
          return 'held';
        },
      },
      logger: { log: () => undefined, warn: (m) => warnings.push(m), error: (m) => warnings.push(m) },
    });
    await worker.start();
  }, 60_000);

  afterAll(async () => {
    second?.process.kill('SIGTERM');
    await second?.exited;
    await worker?.stop();
  }, 60_000);

  const start = async (name: string, payload: unknown) => {
    const created = await client.post('/v1/runs', { target: { type: 'handler', name, queue: 'progress' }, payload, retry: { maxAttempts: 1 } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    return created.body.id as string;
  };

  it('streams the run as it reports progress, in order, to the last value and the final state, then ends', async () => {
    const id = await start('count-up', { total: 5, pauseMs: 300 });
    const { views } = await streamed(`${kairos.url}/v1/runs/${id}/stream`);
    expect(views.length).toBeGreaterThan(1);
    expect(views.every((v) => v.id === id)).toBe(true);
    // Intermediate values may be coalesced; the order never goes back and the last is always there.
    const counts = progressCounts(views);
    expect(counts.length).toBeGreaterThanOrEqual(2);
    expect(counts).toEqual([...counts].sort((a, b) => a - b));
    expect(counts.at(-1)).toBe(5);
    const last = views.at(-1)!;
    expect(last).toMatchObject({ state: 'succeeded', progress: { done: 5, total: 5 }, result: { counted: 5 } });
    // Each event is a change: no two in a row are the same view.
    for (let i = 1; i < views.length; i++) expect(JSON.stringify(views[i])).not.toBe(JSON.stringify(views[i - 1]));
    // The run view keeps the last progress.
    expect((await client.get(`/v1/runs/${id}`)).body.progress).toEqual({ done: 5, total: 5 });
  }, 60_000);

  it('streams from a second API process a run the worker changes', async () => {
    second = spawnKairos('api', t.env());
    const url = await second.ready;
    const id = await start('count-up', { total: 5, pauseMs: 250 });
    const { views } = await streamed(`${url}/v1/runs/${id}/stream`);
    expect(progressCounts(views).at(-1)).toBe(5);
    expect(views.at(-1)).toMatchObject({ id, state: 'succeeded', progress: { done: 5, total: 5 } });
    // The first process, which made the run, streams the ended run at once and ends.
    const again = await streamed(`${kairos.url}/v1/runs/${id}/stream`, 10_000);
    expect(again.views).toHaveLength(1);
    expect(again.views[0]).toEqual(views.at(-1));
  }, SPAWNING_TIMEOUT_MS + 60_000);

  it('refuses progress over 64 KiB', async () => {
    const id = await start('too-much', null);
    const dead = await runInState(client, id, 'dead');
    expect(dead.reasonCode).toBe('HANDLER_NON_RETRYABLE');
    expect(dead.reasonText).toMatch(/ctx\.progress got \d+ bytes of JSON; a run's progress is at most 65536 bytes/);
    expect(dead.progress).toBeNull();
  }, 30_000);

  it('changes nothing for a report at a stale epoch, or of another owner', async () => {
    const id = await start('hold', { ms: 3_000 });
    const held = await runInState(client, id, 'running');
    const row = async () => (await t.db.query(`SELECT lease_owner, lease_epoch, progress, progress_at FROM runs WHERE id = $1`, [id])).rows[0];
    await expect.poll(async () => (await row()).progress, { timeout: 10_000 }).toEqual({ phase: 'holding' });
    const before = await row();
    expect(Number(before.lease_epoch)).toBe(held.leaseEpoch);
    const report = async (epoch: number, owner: string) =>
      (await t.db.query(`SELECT kairos_worker.report_progress($1, $2, $3, $4::json) AS stored`, [id, epoch, owner, '{"phase":"stale"}'])).rows[0].stored;
    expect(await report(Number(before.lease_epoch) - 1, before.lease_owner)).toBe(false);
    expect(await report(Number(before.lease_epoch) + 1, before.lease_owner)).toBe(false);
    expect(await report(Number(before.lease_epoch), 'someone-else')).toBe(false);
    const after = await row();
    expect(after.progress).toEqual({ phase: 'holding' });
    expect(after.progress_at).toEqual(before.progress_at);
    // The ledger refuses oversized progress from any caller, not only the SDK, even at the right epoch.
    await expect(
      t.db.query(`SELECT kairos_worker.report_progress($1, $2, $3, $4::json)`, [id, before.lease_epoch, before.lease_owner, JSON.stringify({ blob: 'x'.repeat(70_000) })]),
    ).rejects.toThrow(/at most 65536/);
    expect((await row()).progress).toEqual({ phase: 'holding' });
    expect((await runInState(client, id, 'succeeded')).progress).toEqual({ phase: 'holding' });
  }, 30_000);

  it('iterates the stream through the SDK client', async () => {
    const id = await start('count-up', { total: 3, pauseMs: 300 });
    const sdk = new KairosClient({ baseUrl: kairos.url });
    const views = [];
    for await (const view of sdk.runs.stream(id)) views.push(view);
    expect(views.at(-1)).toMatchObject({ id, state: 'succeeded', progress: { done: 3, total: 3 } });
    expect(progressCounts(views as RunView[]).at(-1)).toBe(3);
    await expect(sdk.runs.stream('01900000-0000-7000-8000-000000000000').next()).rejects.toMatchObject({ status: 404, code: 'NOT_FOUND' });
    await expect(sdk.runs.stream('01900000-0000-7000-8000-000000000000').next()).rejects.toBeInstanceOf(KairosApiError);
  }, 30_000);

  it('answers a JSON 404 for an unknown run', async () => {
    const response = await fetch(`${kairos.url}/v1/runs/01900000-0000-7000-8000-000000000000/stream`);
    expect(response.status).toBe(404);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await response.json()).toMatchObject({ code: 'NOT_FOUND' });
  });
});
