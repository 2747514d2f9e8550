/**
 * SSRF: with no allow-list, a literal special-purpose address is refused when a schedule or run is
 * declared (400 naming target.url, nothing stored), and a host name that resolves to one is refused
 * after DNS resolution, without the call being made.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runInState, useKairos } from '../support/kairos.js';

describe('HTTP targets without an allow-list', () => {
  let server: Server;
  let port: number;
  let calls = 0;

  beforeAll(async () => {
    server = createServer((_req, res) => {
      calls++;
      res.end('{}');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
  });

  afterAll(async () => {
    await new Promise((r) => server.close(r));
  });

  const { t, client } = useKairos();

  const literals = [
    'http://127.0.0.1:PORT/hook',
    'http://[::1]:PORT/hook',
    'http://[::ffff:127.0.0.1]:PORT/hook',
    'http://[::127.0.0.1]:PORT/hook',
    'http://[64:ff9b::7f00:1]:PORT/hook',
    'http://[2002:7f00:1::1]:PORT/hook',
    'http://198.18.0.1/hook',
    'http://224.0.0.1/hook',
    'http://240.0.0.1/hook',
    'http://2130706433:PORT/hook',
  ];

  it.each(literals)('refuses %s at create on every route that declares a target', async (template) => {
    const url = template.replace('PORT', String(port));
    const target = { type: 'http', url };
    for (const [path, body] of [
      ['/v1/runs', { target }],
      ['/v1/schedules', { every: '1h', target }],
    ] as const) {
      const response = await client.post(path, body);
      expect(response.status, path).toBe(400);
      expect(response.body).toMatchObject({ code: 'INVALID_TARGET', field: 'target.url' });
    }
    const put = await client.put('/v1/schedules/by-name/ssrf', { every: '1h', target });
    expect(put.status).toBe(400);
    const created = await client.post('/v1/schedules', { every: '1h', target: { type: 'handler', name: 'noop' } });
    const patched = await client.patch(`/v1/schedules/${created.body.id}`, { target });
    expect(patched.status).toBe(400);
    expect(patched.body.field).toBe('target.url');
    expect((await client.get(`/v1/schedules/${created.body.id}`)).body.target.type).toBe('handler');
    const stored = await t.db.query(`SELECT count(*)::int AS n FROM runs WHERE target->>'type' = 'http'`);
    expect(stored.rows[0].n).toBe(0);
  });

  it('refuses a host name that resolves to loopback, after resolution, without calling it', async () => {
    const run = await client.post('/v1/runs', { target: { type: 'http', url: `http://localhost:${port}/hook` } });
    expect(run.status).toBe(201);
    const done = await runInState(client, run.body.id, 'dead');
    expect(done).toMatchObject({ reasonCode: 'TARGET_REFUSED', attempt: 1 });
    expect(done.error.message).toMatch(/localhost resolves to 127\.0\.0\.1 is a loopback address/);
    expect(calls).toBe(0);
  });
});
