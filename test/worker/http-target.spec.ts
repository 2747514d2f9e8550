/**
 * The HTTP target against a local server: the signed JSON envelope with the payload verbatim, an
 * idempotency key stable across retries, 5xx and timeouts retried, 4xx dead at once, redirects not
 * followed, private addresses refused, and a running call aborted by cancellation.
 */
import { createHmac } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runInState, useKairos, waitFor } from '../support/kairos.js';

interface Received {
  path: string;
  headers: IncomingMessage['headers'];
  body: string;
  at: number;
}

describe('the HTTP target', () => {
  let server: Server;
  let base: string;
  const received: Received[] = [];
  const counts = new Map<string, number>();
  let hangAborted = false;

  beforeAll(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        const path = req.url!.split('?')[0]!;
        const n = (counts.get(path) ?? 0) + 1;
        counts.set(path, n);
        received.push({ path, headers: req.headers, body, at: Date.now() });
        const json = (status: number, value: unknown) => {
          res.writeHead(status, { 'content-type': 'application/json' });
          res.end(JSON.stringify(value));
        };
        if (path === '/ok') return json(200, { received: JSON.parse(body).payload });
        if (path.startsWith('/flaky')) return n <= 2 ? json(503, { try: 'again' }) : json(200, { ok: n });
        if (path === '/bad') return json(422, { error: 'unprocessable' });
        if (path === '/rate') return n === 1 ? json(429, {}) : json(200, { ok: true });
        if (path === '/redirect') {
          res.writeHead(302, { location: '/ok' });
          return res.end();
        }
        if (path === '/slow') return setTimeout(() => json(200, { late: true }), 2_000);
        if (path === '/hang') {
          req.socket.on('close', () => (hangAborted = true));
          return;
        }
        json(404, {});
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  const { t, client } = useKairos({ env: { KAIROS_HTTP_ALLOWLIST: '127.0.0.1', KAIROS_RUN_LEASE_TTL: '1500ms' } });

  const fast = { maxAttempts: 3, backoff: { type: 'fixed', base: '200ms', max: '200ms', jitter: 0 } };
  const http = (path: string, extra: Record<string, unknown> = {}) => ({ type: 'http', url: `${base}${path}`, ...extra });
  const ended = (id: string) => runInState(client, id);

  it('posts the signed envelope with the payload verbatim and stores the response', async () => {
    const payload = { order: 17, lines: [{ sku: 'A-1', qty: 2 }], note: 'ünïcödé', empty: {} };
    const run = (await client.post('/v1/runs', { target: http('/ok', { headers: { 'x-tenant': 'acme' } }), payload })).body;
    const done = await ended(run.id);
    expect(done.state).toBe('succeeded');
    expect(done.result).toMatchObject({ status: 200, body: { received: payload }, headers: { 'content-type': 'application/json' } });

    const request = received.find((r) => JSON.parse(r.body).runId === run.id)!;
    const envelope = JSON.parse(request.body);
    expect(envelope).toEqual({ runId: run.id, scheduleId: null, scheduledFor: run.scheduledFor, attempt: 1, payload });
    expect(request.body).toContain(JSON.stringify(payload));
    expect(request.headers['content-type']).toBe('application/json');
    expect(request.headers['x-tenant']).toBe('acme');
    expect(request.headers['idempotency-key']).toBe(run.id);

    const secret = (await t.db.query(`SELECT signing_secret FROM namespaces WHERE name = 'default'`)).rows[0].signing_secret;
    const match = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(String(request.headers['kairos-signature']))!;
    expect(match).not.toBeNull();
    expect(Math.abs(Number(match[1]) * 1000 - request.at)).toBeLessThan(5_000);
    expect(match[2]).toBe(createHmac('sha256', secret).update(`${match[1]}.${request.body}`).digest('hex'));
    expect(createHmac('sha256', 'wrong secret').update(`${match[1]}.${request.body}`).digest('hex')).not.toBe(match[2]);
  });

  it('retries 5xx with the same idempotency key (schedule and slot) and succeeds', async () => {
    const schedule = (await client.post('/v1/schedules', { every: '1s', maxRuns: 1, target: http('/flaky-scheduled'), retry: fast })).body;
    const run = await waitFor(async () => (await client.get(`/v1/runs?scheduleId=${schedule.id}`)).body.items[0], 'the slot to fire');
    const done = await ended(run.id);
    expect(done).toMatchObject({ state: 'succeeded', attempt: 3, result: { status: 200, body: { ok: 3 } } });
    const requests = received.filter((r) => r.path === '/flaky-scheduled');
    expect(requests.map((r) => JSON.parse(r.body).attempt)).toEqual([1, 2, 3]);
    expect(new Set(requests.map((r) => r.headers['idempotency-key']))).toEqual(new Set([`${schedule.id}:${run.scheduledFor}`]));
    const history = (await client.get(`/v1/runs/${run.id}/events`)).body.items;
    expect(history.filter((e: any) => e.kind === 'retry_scheduled').map((e: any) => e.reasonCode)).toEqual(['HTTP_5XX', 'HTTP_5XX']);
  });

  it.each([
    ['a 4xx', '/bad', 'HTTP_4XX', 1],
    ['a redirect', '/redirect', 'HTTP_REDIRECT', 1],
  ])('sends %s straight to dead', async (_what, path, reason, attempts) => {
    const run = (await client.post('/v1/runs', { target: http(path), retry: fast })).body;
    const done = await ended(run.id);
    expect(done).toMatchObject({ state: 'dead', attempt: attempts, reasonCode: reason });
  });

  it('retries 429', async () => {
    const run = (await client.post('/v1/runs', { target: http('/rate'), retry: fast })).body;
    expect(await ended(run.id)).toMatchObject({ state: 'succeeded', attempt: 2 });
  });

  it('retries a call that times out, and dead-letters it when every attempt does', async () => {
    const run = (await client.post('/v1/runs', { target: http('/slow', { timeout: '300ms' }), retry: { ...fast, maxAttempts: 2 } })).body;
    const done = await ended(run.id);
    expect(done).toMatchObject({ state: 'dead', attempt: 2, reasonCode: 'TIMEOUT' });
  });

  it.each([
    ['link-local metadata', 'http://169.254.169.254/latest/meta-data'],
    ['a private network', 'http://10.1.2.3/hook'],
    ['IPv6 loopback (not allow-listed)', 'http://[::1]:9/hook'],
    ['IPv4-mapped link-local', 'http://[::ffff:169.254.169.254]/latest'],
  ])('refuses %s when the run is created, naming target.url', async (_what, url) => {
    const response = await client.post('/v1/runs', { target: { type: 'http', url }, retry: fast });
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ code: 'INVALID_TARGET', field: 'target.url' });
    expect(response.body.message).toMatch(/KAIROS_HTTP_ALLOWLIST/);
  });

  it('aborts a running call when the run is cancelled', async () => {
    const run = (await client.post('/v1/runs', { target: http('/hang', { timeout: '30s' }) })).body;
    await waitFor(async () => (received.some((r) => r.path === '/hang') ? true : undefined), 'the call to arrive');
    await client.post(`/v1/runs/${run.id}/cancel`);
    const done = await ended(run.id);
    expect(done).toMatchObject({ state: 'cancelled', reasonCode: 'CANCELLED_BY_USER' });
    await waitFor(async () => (hangAborted ? true : undefined), 'the server to see the connection closed', 5_000);
  });
});
