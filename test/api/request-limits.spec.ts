/**
 * Malformed requests answered at the HTTP edge, before any recursive walk and with nothing stored:
 * bodies and GraphQL documents nested past 64 levels (400 PAYLOAD_TOO_DEEP naming the field), query
 * parameters given as lists or objects (400 naming them), 415 for non-JSON and 413 for too large.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { useKairos } from '../support/kairos.js';

const handler = { type: 'handler', name: 'echo' };

/** `levels` objects nested inside each other around a leaf, as JSON text (built without recursion). */
function nestedJson(levels: number): string {
  return `${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`;
}

describe('request limits at the edge', () => {
  let scheduleId: string;

  const { t, kairos, client } = useKairos({ roles: ['api'] });

  beforeAll(async () => {
    scheduleId = (await client.post('/v1/schedules', { every: '1h', target: handler, payload: { v: 1 } })).body.id;
  });

  const counts = async () => (await t.db.query(`SELECT (SELECT count(*) FROM schedules)::int AS s, (SELECT count(*) FROM runs)::int AS r`)).rows[0];
  const deep = nestedJson(5_000);

  it.each<[string, string, string, () => string]>([
    ['POST', '/v1/runs', 'payload', () => `{"target":{"type":"handler","name":"echo"},"payload":${deep}}`],
    ['POST', '/v1/schedules', 'payload', () => `{"every":"1h","target":{"type":"handler","name":"echo"},"payload":${deep}}`],
    ['PATCH', '/v1/schedules/ID', 'payload', () => `{"payload":${deep}}`],
    ['PUT', '/v1/schedules/by-name/deep', 'payload', () => `{"every":"1h","target":{"type":"handler","name":"echo"},"payload":${deep}}`],
    ['POST', '/v1/schedules/ID/trigger', 'payload', () => `{"payload":${deep}}`],
    ['POST', '/v1/cron/preview', 'after', () => `{"cron":"* * * * *","after":${deep}}`],
    ['POST', '/graphql', 'variables.input', () => `{"query":"mutation($input: JSON!) { createRun(input: $input) { id } }","variables":{"input":{"target":{"type":"handler","name":"echo"},"payload":${deep}}}}`],
  ])('%s %s: 5,000 levels deep is a 400 naming %s, and nothing changes', async (method, path, field, body) => {
    const before = await counts();
    const response = await fetch(`${kairos.url}${path.replace('ID', scheduleId)}`, { method, headers: { 'content-type': 'application/json' }, body: body() });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ code: 'PAYLOAD_TOO_DEEP', field, message: expect.stringMatching(/deeper than 64 levels/) });
    expect(await counts()).toEqual(before);
    expect((await client.get(`/v1/schedules/${scheduleId}`)).body.payload).toEqual({ v: 1 });
  });

  it('refuses a GraphQL document nested 5,000 levels deep (inline input) before parsing it', async () => {
    const literal = `${'{a:'.repeat(5_000)}1${'}'.repeat(5_000)}`;
    const response = await client.post('/graphql', { query: `mutation { createRun(input: { target: { type: "handler", name: "echo" }, payload: ${literal} }) { id } }` });
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ code: 'PAYLOAD_TOO_DEEP', field: 'query' });
  });

  it('accepts a payload as deep as the limit allows, and gives it back', async () => {
    // The body is level 1 and payload level 2, so the payload may nest 63 levels.
    const payload = JSON.parse(nestedJson(63)) as unknown;
    const response = await client.post('/v1/runs', { target: handler, payload, availableAt: '2099-01-01T00:00:00Z' });
    expect(response.status).toBe(201);
    expect((await client.get(`/v1/runs/${response.body.id}`)).body.payload).toEqual(payload);
    const tooDeep = await client.post('/v1/runs', { target: handler, payload: JSON.parse(nestedJson(64)) as unknown });
    expect(tooDeep.status).toBe(400);
  });

  it.each([
    ['/v1/runs?state[a]=queued', 'state'],
    ['/v1/runs?state=queued&state=running', 'state'],
    ['/v1/schedules?status[]=active', 'status'],
    ['/v1/schedules?limit=1&limit=2', 'limit'],
    ['/v1/schedules?label[team]=billing', 'label'],
    ['/v1/dead-letters?scheduleId=a&scheduleId=b', 'scheduleId'],
  ])('refuses the query %s naming %s', async (path, field) => {
    const response = await client.get(path);
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ code: 'VALIDATION_FAILED', field });
    expect(response.body.message).toMatch(new RegExp(`${field} must be given once`));
  });

  it('answers non-JSON with 415 and too large with 413, on every route', async () => {
    for (const path of ['/v1/schedules', '/v1/runs', '/v1/cron/preview', `/v1/schedules/${scheduleId}/backfill`]) {
      const text = await fetch(`${kairos.url}${path}`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: '{}' });
      expect(text.status, path).toBe(415);
      expect(await text.json()).toMatchObject({ code: 'UNSUPPORTED_MEDIA_TYPE', field: null });
      const large = await fetch(`${kairos.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ blob: 'x'.repeat(1_100_000) }) });
      expect(large.status, path).toBe(413);
      expect(await large.json()).toMatchObject({ code: 'PAYLOAD_TOO_LARGE' });
    }
    const latin1 = await fetch(`${kairos.url}/v1/runs`, { method: 'POST', headers: { 'content-type': 'application/json; charset=latin1' }, body: '{}' });
    expect(latin1.status).toBe(415);
    expect(await latin1.json()).toMatchObject({ code: 'UNSUPPORTED_MEDIA_TYPE' });
  });
});
