/**
 * GraphQL depth and complexity limits, introspection off in production unless enabled, no
 * X-Powered-By, and security headers on the HTML pages.
 */
import { describe, expect, it } from 'vitest';
import { api, startInProcess, useKairos } from '../support/kairos.js';

const INTROSPECTION = '{ __schema { queryType { name } } }';

describe('GraphQL limits and HTTP headers', () => {
  const { t, kairos, client } = useKairos({ roles: ['api'] });

  it('answers ordinary queries, a full page with attempts and events included', async () => {
    const page = await client.post('/graphql', {
      query: '{ runs(limit: 500) { items { id state attempts { attempt outcome } events { kind toState at } } nextCursor } schedules { items { id name } } }',
    });
    expect(page.body.errors).toBeUndefined();
    expect(page.body.data.runs.items).toEqual([]);
  });

  it('refuses an operation nested too deep, written out or through fragments', async () => {
    const ofTypes = (n: number) => `${'ofType { '.repeat(n)}name${' }'.repeat(n)}`;
    // __type, fields, type and 7 ofType levels: depth 10, allowed.
    expect((await client.post('/graphql', { query: `{ __type(name: "Run") { fields { type { ${ofTypes(6)} } } } }` })).body.errors).toBeUndefined();
    const refused = await client.post('/graphql', { query: `{ __type(name: "Run") { fields { type { ${ofTypes(8)} } } } }` });
    expect(refused.status).toBe(400);
    expect(refused.body.errors[0].extensions).toMatchObject({ code: 'QUERY_TOO_DEEP', status: 400 });
    // Fragments spread into each other reach the same depth with little nesting in the text.
    const chain = Array.from({ length: 10 }, (_, i) => `fragment T${i} on __Type { ofType { ${i < 9 ? `...T${i + 1}` : 'name'} } }`).join(' ');
    const fragments = await client.post('/graphql', { query: `{ __type(name: "Run") { ...T0 } } ${chain}` });
    expect(fragments.status).toBe(400);
    expect(fragments.body.errors[0].extensions.code).toBe('QUERY_TOO_DEEP');
  });

  it('refuses an operation that may resolve too many fields (aliases count)', async () => {
    const aliases = Array.from({ length: 100 }, (_, i) => `a${i}: runs(limit: 500) { items { id state } }`).join(' ');
    const refused = await client.post('/graphql', { query: `{ ${aliases} }` });
    expect(refused.status).toBe(400);
    expect(refused.body.errors[0]).toMatchObject({ message: expect.stringMatching(/at most 20000/), extensions: { code: 'QUERY_TOO_COMPLEX', status: 400 } });
    const variable = await client.post('/graphql', { query: `query($n: Int) { ${Array.from({ length: 30 }, (_, i) => `a${i}: runs(limit: $n) { items { id state } }`).join(' ')} }`, variables: { n: 1 } });
    expect(variable.body.errors[0].extensions.code).toBe('QUERY_TOO_COMPLEX');
  });

  it('answers introspection outside production', async () => {
    expect((await client.post('/graphql', { query: INTROSPECTION })).body.data.__schema.queryType.name).toBe('Query');
  });

  it('turns introspection off in production unless KAIROS_GRAPHQL_INTROSPECTION enables it', async () => {
    const production = await startInProcess(t.env({ NODE_ENV: 'production' }), ['api']);
    const enabled = await startInProcess(t.env({ NODE_ENV: 'production', KAIROS_GRAPHQL_INTROSPECTION: 'true' }), ['api']);
    try {
      const refused = await api(production.url).post('/graphql', { query: INTROSPECTION });
      expect(refused.body.errors[0].message).toMatch(/introspection/i);
      expect((await api(production.url).post('/graphql', { query: '{ schedules { items { id } } }' })).body.errors).toBeUndefined();
      expect((await api(enabled.url).post('/graphql', { query: INTROSPECTION })).body.data.__schema.queryType.name).toBe('Query');
    } finally {
      await production.app.close();
      await enabled.app.close();
    }
  });

  it('sends security headers on the HTML pages and no X-Powered-By anywhere', async () => {
    for (const path of ['/docs/', '/admin/queues', '/auth/login']) {
      const response = await fetch(`${kairos.url}${path}`);
      expect(response.status, path).toBe(200);
      expect(response.headers.get('content-type'), path).toMatch(/text\/html/);
      const csp = response.headers.get('content-security-policy')!;
      expect(csp, path).toContain("frame-ancestors 'none'");
      expect(csp, path).toContain("script-src 'self'");
      expect(csp, path).toContain("object-src 'none'");
      expect(response.headers.get('x-frame-options'), path).toBe('DENY');
      expect(response.headers.get('x-content-type-options'), path).toBe('nosniff');
      expect(response.headers.get('referrer-policy'), path).toBe('no-referrer');
      expect(response.headers.get('x-powered-by'), path).toBeNull();
    }
    for (const path of ['/v1/schedules', '/health/live', '/metrics', '/nothing']) {
      expect((await fetch(`${kairos.url}${path}`)).headers.get('x-powered-by'), path).toBeNull();
    }
    expect((await fetch(`${kairos.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"query":"{ schedules { items { id } } }"}' })).headers.get('x-powered-by')).toBeNull();
  });
});
