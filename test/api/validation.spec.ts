/**
 * Bad input gets a 400 naming the field and the fix, and changes nothing; conflicts get a 409;
 * a repeated idempotency key returns the first schedule with deduped: true.
 */
import { describe, expect, it } from 'vitest';
import { useKairos } from '../support/kairos.js';

const handler = { type: 'handler', name: 'echo' };
const valid = { cron: '*/5 * * * *', target: handler };

describe('the REST API refuses bad input', () => {
  const { t, client } = useKairos({ roles: ['api'] });

  const counts = async () => ({
    schedules: (await t.db.query('SELECT count(*)::int AS n FROM schedules')).rows[0].n,
    runs: (await t.db.query('SELECT count(*)::int AS n FROM runs')).rows[0].n,
  });

  it.each([
    ['an invalid cron', { ...valid, cron: '61 * * * *' }, 'INVALID_CRON', 'cron', /minute field: 61 is out of range 0-59/],
    ['a cron with too many fields', { ...valid, cron: '* * * * * * *' }, 'INVALID_CRON', 'cron', /field/],
    ['an unknown day of week', { ...valid, cron: '0 0 * * 8' }, 'INVALID_CRON', 'cron', /day-of-week/],
    ['an unknown time zone', { ...valid, timezone: 'Mars/Olympus_Mons' }, 'INVALID_TIMEZONE', 'timezone', /IANA/],
    ['a one-shot in the past', { at: '2001-01-01T00:00:00Z', target: handler }, 'NO_FUTURE_FIRE', 'at', /past/],
    ['a cron that never fires', { ...valid, cron: '0 0 30 2 *' }, 'NO_FUTURE_FIRE', 'cron', /never fires/],
    ['an end before any fire', { every: '1h', endAt: new Date(Date.now() + 60_000).toISOString(), target: handler }, 'NO_FUTURE_FIRE', 'every', /never fires/],
    ['an unknown handler', { ...valid, target: { type: 'handler', name: 'launch-missiles' } }, 'UNKNOWN_HANDLER', 'target.name', /known handlers of queue "default": echo, fail, noop, sleep/],
    ['a handler on a queue no worker serves', { ...valid, target: { type: 'handler', name: 'echo', queue: 'media' } }, 'UNKNOWN_HANDLER', 'target.name', /no worker has registered on queue "media" yet/],
    ['no timing', { target: handler }, 'MISSING_FIELD', 'cron', /exactly one of/],
    ['two timings', { ...valid, every: '1m' }, 'CONFLICTING_FIELDS', 'every', /exactly one of/],
    ['a bad duration', { every: '5 parsecs', target: handler }, 'INVALID_DURATION', 'every', /duration/],
    ['an interval under a second', { every: '10ms', target: handler }, 'INVALID_DURATION', 'every', /at least 1000 ms/],
    ['an unknown field', { ...valid, cronn: '* * * * *' }, 'UNKNOWN_FIELD', 'cronn', /unknown field "cronn"/],
    ['no target', { cron: '* * * * *' }, 'MISSING_FIELD', 'target', /required/],
    ['a non-http URL', { ...valid, target: { type: 'http', url: 'ftp://example.com/x' } }, 'INVALID_TARGET', 'target.url', /http or https/],
    ['zero attempts', { ...valid, retry: { maxAttempts: 0 } }, 'VALIDATION_FAILED', 'retry.maxAttempts', /from 1 to 100/],
    ['an unknown overlap policy', { ...valid, overlap: 'sometimes' }, 'VALIDATION_FAILED', 'overlap', /one of "allow"/],
    ['an unknown DST policy', { ...valid, dst: { gap: 'jump' } }, 'VALIDATION_FAILED', 'dst.gap', /"auto", "shift", "skip"/],
    ['a zero catch-up limit', { ...valid, catchup: { mode: 'all', limit: 0 } }, 'VALIDATION_FAILED', 'catchup.limit', /from 1/],
    ['a local time without offset', { ...valid, startAt: '2030-01-01T00:00:00' }, 'INVALID_INSTANT', 'startAt', /offset/],
    ['an end before the start', { ...valid, startAt: '2030-01-02T00:00:00Z', endAt: '2030-01-01T00:00:00Z' }, 'VALIDATION_FAILED', 'endAt', /later than startAt/],
    ['a non-string label', { ...valid, labels: { team: 7 } }, 'VALIDATION_FAILED', 'labels.team', /string/],
    ['a name with spaces', { ...valid, name: 'my schedule' }, 'VALIDATION_FAILED', 'name', /letters, digits/],
    ['an array body', [valid], 'VALIDATION_FAILED', null, /JSON object/],
    ['a webhook header name that is not a token', { ...valid, target: { type: 'http', url: 'https://example.com/hook', headers: { 'X Team': 'a' } } }, 'VALIDATION_FAILED', 'target.headers.X Team', /RFC 9110 token/],
    ['a webhook header value with CR LF', { ...valid, target: { type: 'http', url: 'https://example.com/hook', headers: { 'X-Team': 'a\r\nX-Evil: 1' } } }, 'VALIDATION_FAILED', 'target.headers.X-Team', /CR, LF or NUL/],
    ['a webhook header value with NUL', { ...valid, target: { type: 'http', url: 'https://example.com/hook', headers: { 'X-Team': 'a\u0000' } } }, 'VALIDATION_FAILED', 'target.headers.X-Team', /NUL/],
    // Postgres cannot store NUL in text (it answered 500) and turns an unpaired surrogate into U+FFFD.
    ['an idempotency key with NUL', { ...valid, idempotencyKey: 'k\u0000' }, 'VALIDATION_FAILED', 'idempotencyKey', /NUL/],
    ['a label value with NUL', { ...valid, labels: { team: 'a\u0000' } }, 'VALIDATION_FAILED', 'labels.team', /NUL/],
    ['a label value with an unpaired surrogate', { ...valid, labels: { team: '\ud83d' } }, 'VALIDATION_FAILED', 'labels.team', /surrogate/],
    // JSON.parse makes "__proto__" an own key, as the server's body parser does.
    ['a label keyed __proto__', { ...valid, labels: JSON.parse('{"__proto__": "x"}') }, 'VALIDATION_FAILED', 'labels.__proto__', /reserved/],
    ['a label keyed constructor', { ...valid, labels: { constructor: 'x' } }, 'VALIDATION_FAILED', 'labels.constructor', /reserved/],
    ['an instant past year 9999', { ...valid, endAt: '9999-12-31T23:00:00-05:00' }, 'INVALID_INSTANT', 'endAt', /years 0000 to 9999/],
  ])('%s', async (_what, body, code, field, message) => {
    const before = await counts();
    const response = await client.post('/v1/schedules', body);
    expect(response.status).toBe(400);
    expect(response.body).toEqual({ code, field, message: expect.stringMatching(message) });
    expect(await counts()).toEqual(before);
  });

  it.each(['Host', 'Content-Length', 'Transfer-Encoding', 'Connection', 'Kairos-Signature', 'Idempotency-Key', 'Upgrade', 'TE', 'Trailer', 'Keep-Alive', 'Proxy-Authorization'])(
    'refuses the webhook header %s, which Kairos sets or which frames the request',
    async (name) => {
      const before = await counts();
      const response = await client.post('/v1/schedules', { ...valid, target: { type: 'http', url: 'https://example.com/hook', headers: { [name]: 'x' } } });
      expect(response.status).toBe(400);
      expect(response.body).toEqual({ code: 'INVALID_TARGET', field: `target.headers.${name}`, message: expect.stringMatching(/remove it/) });
      expect(await counts()).toEqual(before);
    },
  );

  it('refuses a run whose idempotency key holds NUL, and stores nothing', async () => {
    const before = await counts();
    const response = await client.post('/v1/runs', { target: handler, idempotencyKey: 'run\u0000' });
    expect(response.status).toBe(400);
    expect(response.body).toEqual({ code: 'VALIDATION_FAILED', field: 'idempotencyKey', message: expect.stringMatching(/NUL/) });
    expect(await counts()).toEqual(before);
  });

  it.each([
    ['NUL', 'nightly%00'],
    ['a space', 'my%20schedule'],
  ])('refuses a PUT by name whose path name holds %s (NUL answered 500), and stores nothing', async (_what, name) => {
    const before = await counts();
    const response = await client.put(`/v1/schedules/by-name/${name}`, valid);
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ code: 'VALIDATION_FAILED', field: 'name' });
    expect(await counts()).toEqual(before);
  });

  it('refuses a PATCH of paused that is not a boolean, and changes nothing', async () => {
    const created = await client.post('/v1/schedules', { ...valid, labels: { team: 'before' } });
    expect(created.status).toBe(201);
    const response = await client.patch(`/v1/schedules/${created.body.id}`, { paused: 'yes', labels: { team: 'after' } });
    expect(response.status).toBe(400);
    expect(response.body).toEqual({ code: 'VALIDATION_FAILED', field: 'paused', message: 'paused must be true or false' });
    expect((await client.get(`/v1/schedules/${created.body.id}`)).body).toMatchObject({ status: 'active', labels: { team: 'before' } });
  });

  it('answers a payload over 256 KiB with 413 naming it, like a body over 1 MB', async () => {
    const before = await counts();
    const response = await client.post('/v1/schedules', { ...valid, payload: { blob: 'x'.repeat(256 * 1024) } });
    expect(response.status).toBe(413);
    expect(response.body).toEqual({ code: 'PAYLOAD_TOO_LARGE', field: 'payload', message: expect.stringMatching(/256 KiB/) });
    const body = await client.post('/v1/schedules', { ...valid, payload: { blob: 'x'.repeat(1024 * 1024) } });
    expect(body.status).toBe(413);
    expect(body.body).toMatchObject({ code: 'PAYLOAD_TOO_LARGE', field: null });
    expect(await counts()).toEqual(before);
  });

  it.each([
    ['name=a%00b', 'name'],
    ['label=team:a%00b', 'label'],
    ['cursor=%00', 'cursor'],
  ])('refuses the list filter %s, which Postgres could not compare as given', async (query, field) => {
    const response = await client.get(`/v1/schedules?${query}`);
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ code: 'VALIDATION_FAILED', field });
  });

  it('answers malformed JSON with a 400 in the same shape', async () => {
    const response = await client.post('/v1/schedules', '{"cron": ');
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ code: 'VALIDATION_FAILED', field: null });
  });

  it.each([
    ['/v1/runs?state=finished', 'state'],
    ['/v1/runs?limit=0', 'limit'],
    ['/v1/runs?scheduleId=nope', 'scheduleId'],
    ['/v1/schedules?cursor=Zm9v', 'cursor'],
    ['/v1/schedules?status=sleeping', 'status'],
  ])('refuses the query %s naming %s', async (path, field) => {
    const response = await client.get(path);
    expect(response.status).toBe(400);
    expect(response.body.field).toBe(field);
  });

  it('answers unknown ids with 404', async () => {
    for (const path of ['/v1/schedules/not-a-uuid', '/v1/schedules/01a226b4-d238-7c31-b6af-28c7c8951e9e', '/v1/runs/01a226b4-d238-7c31-b6af-28c7c8951e9e']) {
      const response = await client.get(path);
      expect(response.status).toBe(404);
      expect(response.body.code).toBe('NOT_FOUND');
    }
  });

  it('refuses a second schedule with the same name with 409', async () => {
    expect((await client.post('/v1/schedules', { ...valid, name: 'unique' })).status).toBe(201);
    const again = await client.post('/v1/schedules', { ...valid, name: 'unique' });
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ code: 'CONFLICT', field: 'name' });
  });

  it('returns the existing schedule with deduped: true for a repeated idempotency key and body, 409 for another body', async () => {
    const body = { in: '10m', target: handler, payload: { wake: 'agent-7' }, idempotencyKey: 'wake-agent-7' };
    const first = await client.post('/v1/schedules', body);
    expect(first.status).toBe(201);
    expect(first.body.deduped).toBe(false);
    // The same body, keys in another order: the same request.
    const second = await client.post('/v1/schedules', { idempotencyKey: 'wake-agent-7', payload: { wake: 'agent-7' }, target: handler, in: '10m' });
    expect(second.status).toBe(200);
    expect(second.body).toMatchObject({ id: first.body.id, deduped: true, at: first.body.at, payload: { wake: 'agent-7' } });
    const other = await client.post('/v1/schedules', { ...body, in: '20m', payload: { other: true } });
    expect(other.status).toBe(409);
    expect(other.body).toEqual({ code: 'IDEMPOTENCY_CONFLICT', field: 'idempotencyKey', message: expect.stringMatching(/another request body/) });
    expect((await t.db.query(`SELECT count(*)::int AS n FROM schedules WHERE idempotency_key = 'wake-agent-7'`)).rows[0].n).toBe(1);
    expect((await client.get(`/v1/schedules/${first.body.id}`)).body.payload).toEqual({ wake: 'agent-7' });
  });

  it('does the same for ad-hoc runs', async () => {
    const body = { target: handler, payload: { n: 1 }, idempotencyKey: 'run-once', availableAt: '2099-01-01T00:00:00Z' };
    const first = await client.post('/v1/runs', body);
    expect(first.status).toBe(201);
    const again = await client.post('/v1/runs', body);
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ id: first.body.id, deduped: true });
    const other = await client.post('/v1/runs', { ...body, payload: { n: 2 } });
    expect(other.status).toBe(409);
    expect(other.body).toMatchObject({ code: 'IDEMPOTENCY_CONFLICT', field: 'idempotencyKey' });
    const gql = await client.post('/graphql', { query: 'mutation($input: JSON!) { createRun(input: $input) { id } }', variables: { input: { ...body, payload: { n: 3 } } } });
    expect(gql.body.errors[0].extensions).toMatchObject({ code: 'IDEMPOTENCY_CONFLICT', field: 'idempotencyKey', status: 409 });
    expect((await t.db.query(`SELECT count(*)::int AS n FROM runs WHERE idempotency_key = 'run-once'`)).rows[0].n).toBe(1);
  });
});
