/**
 * A run followed as it changes: the GraphQL runUpdated(id) subscription over graphql-ws delivers
 * the run view now and at each change and completes after the run ended; an unknown run is
 * NOT_FOUND. GET /v1/runs/:id/stream stops reading the run when its client disconnects.
 */
import { describe, expect, it } from 'vitest';
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { RunStreamService } from '../../apps/api/src/runs/run-stream.service.js';
import { useKairos, waitFor } from '../support/kairos.js';

const echo = { type: 'handler', name: 'echo' };
const MISSING_ID = '01a226b4-d238-7c31-b6af-28c7c8951e9e';

describe('following a run as it changes', () => {
  const { kairos, client } = useKairos({ roles: ['api', 'scheduler', 'worker'] });

  const subscriptionClient = () => createClient({ url: `${kairos.url.replace(/^http/, 'ws')}/graphql`, webSocketImpl: WebSocket, retryAttempts: 0, lazy: true });
  // The feeds the API holds open; a private field, read here because leaking one is invisible from outside.
  const openFeeds = () => (kairos.app.get(RunStreamService) as unknown as { feeds: Set<unknown> }).feeds.size;

  it('delivers the run now and at each change over runUpdated, completing after it ended', async () => {
    // Due a little later, so the subscription sees the run queued and then follows it live.
    const created = await client.post('/v1/runs', { target: echo, payload: { say: 'hi' }, availableAt: new Date(Date.now() + 1_500).toISOString() });
    const runId = created.body.id as string;

    const ws = subscriptionClient();
    const received: { id: string; state: string; progress: unknown; result: unknown; checkpoints: unknown[] }[] = [];
    let completed = false;
    try {
      const updates = ws.iterate<{ runUpdated: (typeof received)[number] }>({
        query: `subscription ($id: ID!) { runUpdated(id: $id) { id state progress result checkpoints { name } } }`,
        variables: { id: runId },
      });
      for await (const result of updates) {
        expect(result.errors).toBeUndefined();
        received.push(result.data!.runUpdated);
      }
      completed = true;
    } finally {
      await ws.dispose();
    }
    expect(completed).toBe(true);
    expect(received[0]).toMatchObject({ id: runId, state: 'queued', progress: null });
    expect(received.at(-1)).toMatchObject({ id: runId, state: 'succeeded', result: { say: 'hi' }, progress: null, checkpoints: [] });
    expect(received.every((r) => r.id === runId)).toBe(true);
    expect(openFeeds()).toBe(0);
  });

  it('refuses to follow an unknown run with NOT_FOUND', async () => {
    const ws = subscriptionClient();
    try {
      const results = [];
      for await (const result of ws.iterate({ query: `subscription { runUpdated(id: "${MISSING_ID}") { id } }` })) results.push(result);
      expect(results).toEqual([
        { errors: [expect.objectContaining({ message: `run ${MISSING_ID} does not exist`, path: ['runUpdated'], extensions: { code: 'NOT_FOUND', field: null, status: 404 } })] },
      ]);
    } finally {
      await ws.dispose();
    }
  });

  it('stops reading the run when the client of its stream disconnects', async () => {
    const created = await client.post('/v1/runs', { target: echo, availableAt: '2099-01-01T00:00:00Z' });
    const runId = created.body.id as string;
    const abort = new AbortController();
    const response = await fetch(`${kairos.url}/v1/runs/${runId}/stream`, { signal: abort.signal });
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = '';
    while (!text.includes('\n\n')) text += (await reader.read()).value ?? '';
    expect(text).toMatch(/^event: run\ndata: \{.*"state":"queued"/);
    expect(openFeeds()).toBe(1);
    abort.abort();
    await waitFor(async () => (openFeeds() === 0 ? true : undefined), 'the stream to stop reading the run', 5_000);
    await client.post(`/v1/runs/${runId}/cancel`);
  });
});
