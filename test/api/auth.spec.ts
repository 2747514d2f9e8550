/**
 * API keys: a key opens its own namespace with its scopes, nothing else; a request without a key
 * works only while auth is optional; Bull Board needs admin; health and metrics stay public.
 */
import { beforeAll, describe, expect, it, vi } from 'vitest';
import type { StartedKairos } from '@kairos/process';
import { runCli } from '../../apps/cli/src/cli.js';
import { issueKey, startInProcess, useKairos, useTestEnvironment, waitFor } from '../support/kairos.js';

const schedule = { cron: '0 0 1 1 *', target: { type: 'handler', name: 'noop' } };

function client(base: string, key?: string) {
  return async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${base}${path}`, {
      method,
      headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), ...(method === 'GET' ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, body: text.startsWith('{') ? JSON.parse(text) : text };
  };
}

describe('API keys, with auth optional', () => {
  const keys: Record<string, string> = {};

  const { t, kairos } = useKairos({ roles: ['api'] });

  beforeAll(async () => {
    keys.acmeRead = await issueKey(t, 'acme', 'read');
    keys.acmeWrite = await issueKey(t, 'acme', 'read,write');
    keys.globexWrite = await issueKey(t, 'globex', 'write');
    keys.admin = await issueKey(t, 'ops', 'admin');
  });

  it('keeps each namespace to itself', async () => {
    const acme = client(kairos.url, keys.acmeWrite);
    const globex = client(kairos.url, keys.globexWrite);
    const anonymous = client(kairos.url);
    const mine = await acme('POST', '/v1/schedules', { ...schedule, name: 'report' });
    expect(mine.status).toBe(201);
    // The same name is free in another namespace.
    expect((await globex('POST', '/v1/schedules', { ...schedule, name: 'report' })).status).toBe(201);
    expect((await acme('GET', '/v1/schedules')).body.items.map((s: any) => s.id)).toEqual([mine.body.id]);
    expect((await globex('GET', `/v1/schedules/${mine.body.id}`)).status).toBe(404);
    expect((await anonymous('GET', `/v1/schedules/${mine.body.id}`)).status).toBe(404);
    expect((await anonymous('GET', '/v1/schedules')).body.items).toEqual([]);
    const run = await acme('POST', `/v1/schedules/${mine.body.id}/trigger`);
    expect(run.status).toBe(201);
    expect((await globex('GET', `/v1/runs/${run.body.id}`)).status).toBe(404);
    expect((await globex('POST', `/v1/runs/${run.body.id}/cancel`)).status).toBe(404);
  });

  it('enforces scopes: read reads, write writes, admin does both', async () => {
    const reader = client(kairos.url, keys.acmeRead);
    expect((await reader('GET', '/v1/schedules')).status).toBe(200);
    expect((await reader('POST', '/v1/cron/preview', { cron: '* * * * *', count: 1 })).status).toBe(200);
    const refused = await reader('POST', '/v1/schedules', schedule);
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ code: 'FORBIDDEN', field: null });
    expect(refused.body.message).toMatch(/needs write/);
    const admin = client(kairos.url, keys.admin);
    expect((await admin('POST', '/v1/schedules', schedule)).status).toBe(201);
  });

  it('refuses malformed, unknown and revoked keys with 401', async () => {
    for (const key of ['nonsense', `kairos_000000000000_${'x'.repeat(43)}`, `${keys.acmeRead!.slice(0, -1)}y`]) {
      const response = await client(kairos.url, key)('GET', '/v1/schedules');
      expect(response.status).toBe(401);
      expect(response.body.code).toBe('UNAUTHORIZED');
    }
    const doomed = await issueKey(t, 'acme', 'read');
    expect((await client(kairos.url, doomed)('GET', '/v1/schedules')).status).toBe(200);
    const prefix = doomed.split('_')[1]!;
    expect(await runCli(['keys', 'revoke', prefix], { line: () => undefined }, { DATABASE_URL: t.databaseUrl })).toBe(0);
    // Keys are cached for five seconds: the revoked one is refused once its entry expires.
    await waitFor(
      async () => ((await client(kairos.url, doomed)('GET', '/v1/schedules')).status === 401 ? true : undefined),
      'the revoked key to be refused',
      6_000,
      250,
    );
  });

  it('applies scopes to GraphQL: queries read, mutations write', async () => {
    const gql = (key: string, query: string) => client(kairos.url, key)('POST', '/graphql', { query });
    expect((await gql(keys.acmeRead!, '{ schedules { items { id } } }')).body.data.schedules.items).toHaveLength(1);
    const mutation = await gql(keys.acmeRead!, 'mutation { createSchedule(input: { cron: "0 0 1 1 *", target: { type: "handler", name: "noop" } }) { id } }');
    expect(mutation.body.errors[0].extensions).toMatchObject({ code: 'FORBIDDEN', status: 403 });
  });

  it('scopes the signing secret: reading it needs write, rotating it admin, each in its own namespace', async () => {
    const matrix: [string | undefined, string, string, number][] = [
      [keys.acmeRead, 'GET', '/v1/signing-secret', 403],
      [keys.acmeWrite, 'GET', '/v1/signing-secret', 200],
      [keys.admin, 'GET', '/v1/signing-secret', 200],
      [keys.acmeRead, 'POST', '/v1/signing-secret/rotate', 403],
      [keys.acmeWrite, 'POST', '/v1/signing-secret/rotate', 403],
      [undefined, 'GET', '/v1/signing-secret', 200],
      ['nonsense', 'GET', '/v1/signing-secret', 401],
    ];
    for (const [key, method, path, status] of matrix) expect((await client(kairos.url, key)(method, path)).status, `${method} ${path}`).toBe(status);
    const acme = (await client(kairos.url, keys.acmeWrite)('GET', '/v1/signing-secret')).body.secret;
    const globex = (await client(kairos.url, keys.globexWrite)('GET', '/v1/signing-secret')).body.secret;
    expect(acme).not.toBe(globex);
    const gql = (key: string, query: string) => client(kairos.url, key)('POST', '/graphql', { query });
    expect((await gql(keys.acmeRead!, '{ signingSecret { secret } }')).body.errors[0].extensions).toMatchObject({ code: 'FORBIDDEN', status: 403 });
    expect((await gql(keys.acmeWrite!, '{ signingSecret { secret } }')).body.data.signingSecret.secret).toBe(acme);
    expect((await gql(keys.acmeWrite!, 'mutation { rotateSigningSecret { secret } }')).body.errors[0].extensions).toMatchObject({ code: 'FORBIDDEN', status: 403 });
    // An admin rotates its own namespace's secret only.
    const rotated = await client(kairos.url, keys.admin)('POST', '/v1/signing-secret/rotate');
    expect(rotated.status).toBe(200);
    expect((await client(kairos.url, keys.acmeWrite)('GET', '/v1/signing-secret')).body.secret).toBe(acme);
  });

  it('never gives a key less than no key: a read key of the open namespace may write there', async () => {
    const defaultRead = await issueKey(t, 'default', 'read');
    const created = await client(kairos.url, defaultRead)('POST', '/v1/schedules', schedule);
    expect(created.status).toBe(201);
    expect((await client(kairos.url, defaultRead)('GET', '/admin/queues')).status).toBe(200);
    // A read key of another namespace stays a read key there.
    expect((await client(kairos.url, keys.acmeRead)('POST', '/v1/schedules', schedule)).status).toBe(403);
  });

  it('guards Bull Board with the admin scope, and leaves health and metrics public', async () => {
    expect((await client(kairos.url, keys.acmeWrite)('GET', '/admin/queues')).status).toBe(403);
    expect((await client(kairos.url, keys.acmeWrite)('PUT', '/admin/queues/api/queues/kairos-runs/pause')).status).toBe(403);
    expect((await client(kairos.url, keys.acmeRead)('GET', '/admin/queues/api/queues')).status).toBe(403);
    const admin = await client(kairos.url, keys.admin)('GET', '/admin/queues');
    expect(admin.status).toBe(200);
    expect(String(admin.body)).toContain('<html');
    // Anonymous callers act with every scope while auth is optional.
    expect((await client(kairos.url)('GET', '/admin/queues')).status).toBe(200);
    expect((await client(kairos.url, 'nonsense')('GET', '/health/live')).status).toBe(200);
    expect((await client(kairos.url, 'nonsense')('GET', '/metrics')).status).toBe(200);
  });
});

describe('with KAIROS_AUTH=required', () => {
  const { t, kairos } = useKairos({ env: { KAIROS_AUTH: 'required' }, roles: ['api'] });

  it('refuses requests without a key and serves those with one', async () => {
    const anonymous = await client(kairos.url)('GET', '/v1/schedules');
    expect(anonymous.status).toBe(401);
    expect(anonymous.body.message).toMatch(/kairos keys create/);
    expect((await client(kairos.url)('GET', '/admin/queues')).status).toBe(401);
    expect((await client(kairos.url)('PUT', '/admin/queues/api/queues/kairos-runs/pause')).status).toBe(401);
    expect((await client(kairos.url)('GET', '/v1/signing-secret')).status).toBe(401);
    expect((await client(kairos.url)('POST', '/v1/signing-secret/rotate')).status).toBe(401);
    expect((await client(kairos.url)('GET', '/health/ready')).status).not.toBe(401);
    const key = await issueKey(t, 'default', 'read,write');
    expect((await client(kairos.url, key)('POST', '/v1/schedules', schedule)).status).toBe(201);
  });
});

describe('first start with keys required', () => {
  const t = useTestEnvironment();

  it('issues one admin key for the default namespace, prints it once, and never again', async () => {
    const printed: string[] = [];
    const spy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      printed.push(String(chunk));
      return true;
    });
    let replicas: StartedKairos[] = [];
    try {
      // Three API replicas starting at once against the same fresh ledger, listening beyond loopback
      // without KAIROS_AUTH: keys are required.
      replicas = await Promise.all([0, 1, 2].map(() => startInProcess(t.env({ HOST: '0.0.0.0' }), ['api'])));
    } finally {
      spy.mockRestore();
    }
    try {
      const keysPrinted = printed.join('').match(/kairos_[0-9a-f]{12}_[0-9A-Za-z_-]{43}/g) ?? [];
      expect(keysPrinted).toHaveLength(1);
      // Off a terminal the logs are JSON lines, and the key's announcement is one of them.
      const announcement = JSON.parse(printed.join('').split('\n').find((line) => line.includes(keysPrinted[0]!))!);
      expect(announcement.msg).toMatch(/first admin API key .*namespace "default".*shown only now/);
      expect(announcement.msg).toMatch(/kairos -- keys create/);
      const rows = await t.db.query(`SELECT k.scopes, n.name FROM api_keys k JOIN namespaces n ON n.id = k.namespace_id`);
      expect(rows.rows).toEqual([{ scopes: ['admin'], name: 'default' }]);
      const url = replicas[0]!.url.replace('localhost', '127.0.0.1');
      expect((await client(url)('GET', '/v1/schedules')).status).toBe(401);
      const admin = client(url, keysPrinted[0]);
      expect((await admin('POST', '/v1/schedules', schedule)).status).toBe(201);
      expect((await admin('GET', '/admin/queues')).status).toBe(200);
    } finally {
      await Promise.all(replicas.map((r) => r.app.close()));
    }
    // A later start finds the admin key and prints nothing.
    const again: string[] = [];
    const spyAgain = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      again.push(String(chunk));
      return true;
    });
    let later: StartedKairos | undefined;
    try {
      later = await startInProcess(t.env({ HOST: '0.0.0.0' }), ['api']);
    } finally {
      spyAgain.mockRestore();
      await later?.app.close();
    }
    expect(again.join('')).not.toMatch(/kairos_[0-9a-f]{12}_/);
    expect((await t.db.query(`SELECT count(*)::int AS n FROM api_keys`)).rows[0].n).toBe(1);
  });

  it('stays open on loopback by default, as local use expects', async () => {
    const local = await startInProcess(t.env({ HOST: '127.0.0.1' }), ['api']);
    try {
      expect((await client(local.url)('GET', '/v1/schedules')).status).toBe(200);
    } finally {
      await local.app.close();
    }
  });
});
