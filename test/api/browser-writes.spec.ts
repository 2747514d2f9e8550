/**
 * Browser-safe writes: a state-changing request is JSON and same-site or it changes nothing (415,
 * 403); a key becomes a browser session through POST /auth/login (HttpOnly SameSite=Strict cookie
 * plus a CSRF token the page must echo); Bull Board, page and actions, needs admin.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../apps/cli/src/cli.js';
import { issueKey, useKairos, waitFor } from '../support/kairos.js';

const schedule = { every: '1h', target: { type: 'handler', name: 'noop' } };

async function send(base: string, method: string, path: string, init: { headers?: Record<string, string>; body?: string } = {}) {
  const response = await fetch(`${base}${path}`, { method, headers: init.headers, body: init.body, redirect: 'manual' });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text.startsWith('{') ? JSON.parse(text) : text };
}

describe('browser-safe writes', () => {
  let admin: string;
  let writer: string;
  let base: string;

  const { t, kairos } = useKairos({ env: { KAIROS_AUTH: 'required' }, roles: ['api'] });

  beforeAll(async () => {
    base = kairos.url;
    admin = await issueKey(t, 'default', 'admin');
    writer = await issueKey(t, 'default', 'read,write');
  });

  const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
  const json = { 'content-type': 'application/json' };
  const stored = async (id: string) => (await t.db.query(`SELECT status, paused_at, name FROM schedules WHERE id = $1`, [id])).rows[0];

  it.each<[string, Record<string, string>, string | undefined, number, string]>([
    ['text/plain (what a form-less fetch from any page sends)', { 'content-type': 'text/plain' }, '{}', 415, 'UNSUPPORTED_MEDIA_TYPE'],
    ['a form', { 'content-type': 'application/x-www-form-urlencoded' }, 'a=b', 415, 'UNSUPPORTED_MEDIA_TYPE'],
    ['multipart', { 'content-type': 'multipart/form-data; boundary=x' }, '--x--', 415, 'UNSUPPORTED_MEDIA_TYPE'],
    ['no body from another site', { origin: 'https://evil.example' }, undefined, 403, 'CROSS_SITE_REQUEST'],
    ['JSON from another site', { ...json, origin: 'https://evil.example' }, '{}', 403, 'CROSS_SITE_REQUEST'],
    ['JSON from an opaque origin', { ...json, origin: 'null' }, '{}', 403, 'CROSS_SITE_REQUEST'],
    ['JSON a browser marks cross-site', { ...json, 'sec-fetch-site': 'cross-site' }, '{}', 403, 'CROSS_SITE_REQUEST'],
  ])('refuses %s and leaves the schedule unchanged', async (_what, headers, body, status, code) => {
    const created = await send(base, 'POST', '/v1/schedules', { headers: { ...json, ...bearer(writer) }, body: JSON.stringify(schedule) });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    const before = await stored(id);
    for (const [method, path] of [
      ['POST', `/v1/schedules/${id}/pause`],
      ['POST', `/v1/schedules/${id}/trigger`],
      ['PATCH', `/v1/schedules/${id}`],
      ['DELETE', `/v1/schedules/${id}`],
      ['POST', '/v1/schedules'],
      ['POST', '/graphql'],
    ] as const) {
      const response = await send(base, method, path, { headers: { ...headers, ...bearer(writer) }, body });
      expect(response.status, `${method} ${path}`).toBe(status);
      expect(response.body).toMatchObject({ code, field: null });
    }
    expect(await stored(id)).toEqual(before);
    expect((await t.db.query(`SELECT count(*)::int AS n FROM runs WHERE schedule_id = $1`, [id])).rows[0].n).toBe(0);
  });

  it('accepts a bodyless write without a content type from a client that is not a cross-site browser (generated clients send none)', async () => {
    const created = await send(base, 'POST', '/v1/schedules', { headers: { ...json, ...bearer(writer) }, body: JSON.stringify(schedule) });
    const paused = await send(base, 'POST', `/v1/schedules/${created.body.id}/pause`, { headers: bearer(writer) });
    expect(paused.status).toBe(200);
    expect(paused.body.status).toBe('paused');
  });

  it('accepts same-site JSON writes, with or without an Origin', async () => {
    const created = await send(base, 'POST', '/v1/schedules', { headers: { ...json, ...bearer(writer), origin: base }, body: JSON.stringify(schedule) });
    expect(created.status).toBe(201);
    const paused = await send(base, 'POST', `/v1/schedules/${created.body.id}/pause`, { headers: { ...json, ...bearer(writer), 'sec-fetch-site': 'same-origin' } });
    expect(paused.status).toBe(200);
    expect(paused.body.status).toBe('paused');
  });

  it('turns a key into a session: HttpOnly SameSite=Strict cookie, CSRF token required on writes, logout ends it', async () => {
    expect((await send(base, 'POST', '/auth/login', { headers: json, body: JSON.stringify({ apiKey: 'kairos_nope' }) })).status).toBe(401);
    expect((await send(base, 'POST', '/auth/login', { headers: { 'content-type': 'text/plain' }, body: JSON.stringify({ apiKey: writer }) })).status).toBe(415);
    const login = await send(base, 'POST', '/auth/login', { headers: json, body: JSON.stringify({ apiKey: writer }) });
    expect(login.status).toBe(200);
    expect(login.body).toMatchObject({ csrfToken: expect.any(String), scopes: ['read', 'write'] });
    const cookies = login.headers.getSetCookie();
    const session = cookies.find((c) => c.startsWith('kairos_session='))!;
    const xsrf = cookies.find((c) => c.startsWith('XSRF-TOKEN='))!;
    expect(session).toMatch(/; HttpOnly/);
    expect(session).toMatch(/SameSite=Strict/);
    expect(session).not.toMatch(/Secure/); // plain HTTP here; Secure when the request came over HTTPS
    expect(xsrf).not.toMatch(/HttpOnly/);
    expect(xsrf.split(';')[0]).toBe(`XSRF-TOKEN=${login.body.csrfToken}`);
    const cookie = [session, xsrf].map((c) => c.split(';')[0]).join('; ');
    const token = session.split(';')[0]!.split('=')[1]!;
    expect((await t.db.query(`SELECT count(*)::int AS n FROM login_sessions WHERE token_hash = encode(sha256($1::bytea), 'hex')`, [token])).rows[0].n).toBe(1);

    // Reads need only the cookie.
    expect((await send(base, 'GET', '/v1/schedules', { headers: { cookie } })).status).toBe(200);
    // Writes need the CSRF token echoed, under either header name.
    const missing = await send(base, 'POST', '/v1/schedules', { headers: { ...json, cookie }, body: JSON.stringify(schedule) });
    expect(missing.status).toBe(403);
    expect(missing.body.code).toBe('CSRF_TOKEN_INVALID');
    const wrong = await send(base, 'POST', '/v1/schedules', { headers: { ...json, cookie, 'x-csrf-token': 'forged' }, body: JSON.stringify(schedule) });
    expect(wrong.status).toBe(403);
    const before = (await t.db.query(`SELECT count(*)::int AS n FROM schedules`)).rows[0].n;
    const ok = await send(base, 'POST', '/v1/schedules', { headers: { ...json, cookie, 'x-csrf-token': login.body.csrfToken }, body: JSON.stringify(schedule) });
    expect(ok.status).toBe(201);
    const axiosStyle = await send(base, 'POST', `/v1/schedules/${ok.body.id}/pause`, { headers: { ...json, cookie, 'x-xsrf-token': login.body.csrfToken } });
    expect(axiosStyle.status).toBe(200);
    expect((await t.db.query(`SELECT count(*)::int AS n FROM schedules`)).rows[0].n).toBe(before + 1);
    // A write key's session is not admin.
    expect((await send(base, 'GET', '/admin/queues', { headers: { cookie } })).status).toBe(403);

    const logout = await send(base, 'POST', '/auth/logout', { headers: { ...json, cookie } });
    expect(logout.status).toBe(204);
    expect(logout.headers.getSetCookie().every((c) => /Max-Age=0/.test(c))).toBe(true);
    expect((await send(base, 'GET', '/v1/schedules', { headers: { cookie } })).status).toBe(401);
    expect((await t.db.query(`SELECT count(*)::int AS n FROM login_sessions WHERE token_hash = encode(sha256($1::bytea), 'hex')`, [token])).rows[0].n).toBe(0);
    // Bearer keys work unchanged throughout.
    expect((await send(base, 'GET', '/v1/schedules', { headers: bearer(writer) })).status).toBe(200);
  });

  it('ends sessions whose key is revoked', async () => {
    const key = await issueKey(t, 'default', 'read');
    const login = await send(base, 'POST', '/auth/login', { headers: json, body: JSON.stringify({ apiKey: key }) });
    const cookie = login.headers.getSetCookie().map((c) => c.split(';')[0]).join('; ');
    expect((await send(base, 'GET', '/v1/schedules', { headers: { cookie } })).status).toBe(200);
    expect(await runCli(['keys', 'revoke', key.split('_')[1]!], { line: () => undefined }, { DATABASE_URL: t.databaseUrl })).toBe(0);
    // Sessions, like keys, are cached for five seconds: the session ends once its entry expires.
    await waitFor(async () => ((await send(base, 'GET', '/v1/schedules', { headers: { cookie } })).status === 401 ? true : undefined), 'the session to end', 6_000, 250);
  });

  describe('Bull Board', () => {
    const pause = '/admin/queues/api/queues/kairos-runs/pause';
    const resume = '/admin/queues/api/queues/kairos-runs/resume';
    const queuePaused = async () => (await send(base, 'GET', '/admin/queues/api/queues', { headers: bearer(admin) })).body.queues[0].isPaused as boolean;

    it('needs admin for its page, its reads and its actions', async () => {
      expect((await send(base, 'GET', '/admin/queues', { headers: bearer(writer) })).status).toBe(403);
      expect((await send(base, 'GET', '/admin/queues/api/queues', { headers: bearer(writer) })).status).toBe(403);
      expect((await send(base, 'PUT', pause, { headers: { ...json, ...bearer(writer) } })).status).toBe(403);
      expect((await send(base, 'PUT', pause, { headers: json })).status).toBe(401);
      expect(await queuePaused()).toBe(false);
      const page = await send(base, 'GET', '/admin/queues', { headers: bearer(admin) });
      expect(page.status).toBe(200);
      expect(page.body).toContain('<script src="/admin/board-requests.js"></script></body>');
      expect((await send(base, 'GET', '/admin/board-requests.js')).body).toContain("'Content-Type', 'application/json'");
    });

    it('sends a browser without a session to the login page', async () => {
      const page = await send(base, 'GET', '/admin/queues', { headers: { accept: 'text/html' } });
      expect(page.status).toBe(303);
      expect(page.headers.get('location')).toBe('/auth/login?next=%2Fadmin%2Fqueues');
      const login = await send(base, 'GET', '/auth/login');
      expect(login.status).toBe(200);
      expect(login.body).toContain('<form id="login">');
    });

    it('takes actions only as same-site JSON, and from a session only with the CSRF token', async () => {
      expect((await send(base, 'PUT', pause, { headers: { ...bearer(admin), origin: 'https://evil.example' } })).status).toBe(403);
      expect((await send(base, 'PUT', pause, { headers: { ...bearer(admin), 'content-type': 'text/plain' }, body: 'x' })).status).toBe(415);
      expect((await send(base, 'PUT', pause, { headers: { ...bearer(admin), ...json, origin: 'https://evil.example' } })).status).toBe(403);
      expect(await queuePaused()).toBe(false);

      const login = await send(base, 'POST', '/auth/login', { headers: json, body: JSON.stringify({ apiKey: admin }) });
      const cookie = login.headers.getSetCookie().map((c) => c.split(';')[0]).join('; ');
      expect((await send(base, 'GET', '/admin/queues', { headers: { cookie, accept: 'text/html' } })).status).toBe(200);
      const forged = await send(base, 'PUT', pause, { headers: { ...json, cookie } });
      expect(forged.status).toBe(403);
      expect(forged.body.code).toBe('CSRF_TOKEN_INVALID');
      expect(await queuePaused()).toBe(false);
      expect((await send(base, 'PUT', pause, { headers: { ...json, cookie, 'x-xsrf-token': login.body.csrfToken } })).status).toBe(200);
      expect(await queuePaused()).toBe(true);
      expect((await send(base, 'PUT', resume, { headers: { ...json, ...bearer(admin) } })).status).toBe(200);
      expect(await queuePaused()).toBe(false);
    });
  });
});
