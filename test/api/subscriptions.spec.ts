/**
 * Subscriptions over REST and GraphQL: declared with defaults filled in, listed, changed, paused,
 * resumed and deleted; refused with the field to fix and nothing stored; kept to the caller's
 * namespace and scopes; and a schedule's deadline (expect.succeededWithin) declared, shown,
 * changed and refused. Only the API runs: nothing is delivered, and no deadline is judged.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { SUBSCRIPTION_EVENT_TYPES, SUBSCRIPTION_EVENTS } from '@kairos/domain';
import { issueKey, useKairos } from '../support/kairos.js';

const HOOK = 'https://hooks.example.com/kairos';
const SCHEDULE = '0193a5e0-7b1c-7cc2-8f5e-2f9d1c0a1b2c';

describe('subscriptions', () => {
  const { t, kairos, client } = useKairos({ roles: ['api'] });

  const count = async (): Promise<number> => (await t.db.query(`SELECT count(*)::int AS n FROM subscriptions`)).rows[0].n;

  it('creates a subscription with its defaults, and lists, reads, changes, pauses, resumes and deletes it', async () => {
    const created = await client.post('/v1/subscriptions', { url: HOOK, events: ['run.dead', 'schedule.late'] });
    expect(created.status).toBe(201);
    const subscription = created.body;
    expect(subscription).toMatchObject({
      url: HOOK,
      events: ['run.dead', 'schedule.late'],
      filter: { scheduleIds: [], labels: {} },
      format: 'json',
      description: null,
      state: 'active',
      disabledReason: null,
      failingSince: null,
    });
    const other = await client.post('/v1/subscriptions', {
      url: 'https://hooks.slack.com/services/T0/B0/XYZ',
      events: ['run.failed'],
      filter: { scheduleIds: [SCHEDULE], labels: { team: 'billing' } },
      format: 'slack',
      description: '#billing-alerts',
      paused: true,
    });
    expect(other.body).toMatchObject({ state: 'paused', format: 'slack', description: '#billing-alerts', filter: { scheduleIds: [SCHEDULE], labels: { team: 'billing' } } });

    const page = await client.get('/v1/subscriptions?limit=1');
    expect(page.body.items.map((s: { id: string }) => s.id)).toEqual([other.body.id]);
    expect((await client.get(`/v1/subscriptions?limit=1&cursor=${page.body.nextCursor}`)).body).toEqual({ items: [subscription], nextCursor: null });
    expect((await client.get(`/v1/subscriptions/${subscription.id}`)).body).toEqual(subscription);
    expect((await client.get('/v1/subscriptions/not-a-uuid')).status).toBe(404);

    // PATCH replaces what it gives (a filter as a whole) and keeps the rest.
    const patched = await client.patch(`/v1/subscriptions/${other.body.id}`, { events: ['run.failed', 'run.dead'], filter: { labels: { team: 'search' } }, paused: false });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ events: ['run.failed', 'run.dead'], filter: { scheduleIds: [], labels: { team: 'search' } }, format: 'slack', description: '#billing-alerts', state: 'active' });
    expect((await client.patch(`/v1/subscriptions/${other.body.id}`, { description: null })).body.description).toBeNull();

    expect((await client.post(`/v1/subscriptions/${subscription.id}/pause`)).body.state).toBe('paused');
    expect((await client.post(`/v1/subscriptions/${subscription.id}/pause`)).body.state).toBe('paused');
    // A paused subscription cannot be tested; an active one can.
    expect((await client.post(`/v1/subscriptions/${subscription.id}/test`)).body).toMatchObject({ code: 'INVALID_STATE' });
    expect((await client.post(`/v1/subscriptions/${subscription.id}/resume`)).body.state).toBe('active');
    const test = await client.post(`/v1/subscriptions/${subscription.id}/test`);
    expect(test.status).toBe(202);
    const { rows } = await t.db.query(`SELECT topic, payload FROM outbox WHERE id = $1`, [test.body.eventId]);
    expect(rows).toEqual([{ topic: 'ping', payload: { subscriptionId: subscription.id, message: expect.any(String) } }]);

    // A disabled one comes back with its failures forgotten.
    await t.db.query(`UPDATE subscriptions SET state = 'disabled', disabled_reason = 'down', failing_since = now() WHERE id = $1`, [subscription.id]);
    expect((await client.post(`/v1/subscriptions/${subscription.id}/resume`)).body).toMatchObject({ state: 'active', disabledReason: null, failingSince: null });

    expect((await client.get(`/v1/subscriptions/${subscription.id}/deliveries`)).body).toEqual({ items: [], nextCursor: null });
    expect((await client.delete(`/v1/subscriptions/${subscription.id}`)).status).toBe(204);
    expect((await client.get(`/v1/subscriptions/${subscription.id}`)).status).toBe(404);
    expect((await client.delete(`/v1/subscriptions/${subscription.id}`)).status).toBe(404);
  });

  it.each<[string, unknown, string, string]>([
    ['no url', { events: ['run.dead'] }, 'MISSING_FIELD', 'url'],
    ['a url that is no URL', { url: 'hooks', events: ['run.dead'] }, 'VALIDATION_FAILED', 'url'],
    ['an ftp url', { url: 'ftp://example.com/x', events: ['run.dead'] }, 'VALIDATION_FAILED', 'url'],
    ['credentials in the url', { url: 'https://u:p@example.com/x', events: ['run.dead'] }, 'VALIDATION_FAILED', 'url'],
    ['a private address', { url: 'http://10.1.2.3/hook', events: ['run.dead'] }, 'VALIDATION_FAILED', 'url'],
    ['the metadata address', { url: 'http://169.254.169.254/latest', events: ['run.dead'] }, 'VALIDATION_FAILED', 'url'],
    ['no events', { url: HOOK }, 'MISSING_FIELD', 'events'],
    ['an empty list of events', { url: HOOK, events: [] }, 'VALIDATION_FAILED', 'events'],
    ['an unknown event', { url: HOOK, events: ['run.dead', 'run.exploded'] }, 'VALIDATION_FAILED', 'events[1]'],
    ['an event twice', { url: HOOK, events: ['run.dead', 'run.dead'] }, 'VALIDATION_FAILED', 'events[1]'],
    ['ping as an event', { url: HOOK, events: ['ping'] }, 'VALIDATION_FAILED', 'events[0]'],
    ['a schedule id that is no UUID', { url: HOOK, events: ['run.dead'], filter: { scheduleIds: ['nightly'] } }, 'VALIDATION_FAILED', 'filter.scheduleIds[0]'],
    ['a label that is no string', { url: HOOK, events: ['run.dead'], filter: { labels: { team: 1 } } }, 'VALIDATION_FAILED', 'filter.labels.team'],
    ['an unknown filter field', { url: HOOK, events: ['run.dead'], filter: { queue: 'etl' } }, 'UNKNOWN_FIELD', 'filter.queue'],
    ['an unknown format', { url: HOOK, events: ['run.dead'], format: 'teams' }, 'VALIDATION_FAILED', 'format'],
    ['an unknown field', { url: HOOK, events: ['run.dead'], secret: 'x' }, 'UNKNOWN_FIELD', 'secret'],
  ])('refuses %s with the field to fix, storing nothing', async (_name, sent, code, field) => {
    const before = await count();
    const answer = await client.post('/v1/subscriptions', sent);
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ code, field });
    expect(answer.body.message).toContain(field.split(/[.[]/)[0]);
    expect(await count()).toBe(before);
  });

  it('lists every event type in its refusal, and refuses a bad change without changing anything', async () => {
    const refused = await client.post('/v1/subscriptions', { url: HOOK, events: ['nope'] });
    for (const type of SUBSCRIPTION_EVENT_TYPES) expect(refused.body.message).toContain(type);
    const subscription = (await client.post('/v1/subscriptions', { url: HOOK, events: ['run.dead'] })).body;
    for (const change of [{ url: 'http://127.0.0.1/x' }, { events: [] }, { format: 'xml' }, { url: null }]) {
      expect((await client.patch(`/v1/subscriptions/${subscription.id}`, change)).status).toBe(400);
    }
    expect((await client.get(`/v1/subscriptions/${subscription.id}`)).body).toEqual(subscription);
  });

  it('documents every event type where users read them: the OpenAPI document and the alerts page', async () => {
    const document = (await client.get('/docs/openapi.json')).body;
    const described = JSON.stringify(document.components.schemas.SubscriptionCreate);
    const page = readFileSync(new URL('../../docs/alerts.md', import.meta.url), 'utf8');
    const start = page.indexOf('\n## Events\n');
    expect(start, 'docs/alerts.md has a section "## Events"').toBeGreaterThan(0);
    const events = page.slice(start, page.indexOf('\n## ', start + 1));
    for (const type of SUBSCRIPTION_EVENT_TYPES) {
      expect(described, type).toContain(SUBSCRIPTION_EVENTS[type].meaning.replace(/"/g, '\\"'));
      // The page shortens a family after its first member (`schedule.created`, `.updated`).
      expect(events.includes(`\`${type}\``) || events.includes(`\`.${type.split('.')[1]}\``), `${type} in the events of docs/alerts.md`).toBe(true);
    }
  });

  it('keeps to the caller namespace and scopes', async () => {
    const subscription = (await client.post('/v1/subscriptions', { url: HOOK, events: ['run.dead'] })).body;
    const call = (key: string, method: string, path: string, sent?: unknown) =>
      fetch(`${kairos.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${key}`, ...(method === 'GET' ? {} : { 'content-type': 'application/json' }) },
        body: sent === undefined ? undefined : JSON.stringify(sent),
      });
    const writer = await issueKey(t, 'subscribers', 'read,write');
    const reader = await issueKey(t, 'subscribers', 'read');
    expect((await call(writer, 'GET', `/v1/subscriptions/${subscription.id}`)).status).toBe(404);
    expect((await call(writer, 'POST', `/v1/subscriptions/${subscription.id}/test`)).status).toBe(404);
    expect((await call(writer, 'GET', `/v1/subscriptions/${subscription.id}/deliveries`)).status).toBe(404);
    const theirs = (await (await call(writer, 'POST', '/v1/subscriptions', { url: HOOK, events: ['run.dead'] })).json()) as { id: string };
    expect(((await (await call(writer, 'GET', '/v1/subscriptions')).json()) as { items: { id: string }[] }).items.map((s) => s.id)).toEqual([theirs.id]);
    expect((await call(reader, 'GET', `/v1/subscriptions/${theirs.id}`)).status).toBe(200);
    for (const [method, path, sent] of [
      ['POST', '/v1/subscriptions', { url: HOOK, events: ['run.dead'] }],
      ['PATCH', `/v1/subscriptions/${theirs.id}`, { events: ['run.failed'] }],
      ['POST', `/v1/subscriptions/${theirs.id}/pause`, undefined],
      ['POST', `/v1/subscriptions/${theirs.id}/test`, undefined],
      ['DELETE', `/v1/subscriptions/${theirs.id}`, undefined],
    ] as const) {
      const answer = await call(reader, method, path, sent);
      expect(answer.status, `${method} ${path}`).toBe(403);
    }
  });

  it('mirrors REST in GraphQL', async () => {
    const gql = async (query: string, variables: Record<string, unknown> = {}) => (await client.post('/graphql', { query, variables })).body;
    const fields = 'id url events filter { scheduleIds labels } format description state disabledReason failingSince createdAt updatedAt';
    const created = await gql(`mutation ($input: JSON!) { createSubscription(input: $input) { ${fields} } }`, { input: { url: HOOK, events: ['schedule.late'], format: 'slack' } });
    expect(created.errors).toBeUndefined();
    const subscription = created.data.createSubscription;
    expect(subscription).toEqual((await client.get(`/v1/subscriptions/${subscription.id}`)).body);
    const changed = await gql(
      `mutation ($id: ID!) {
        updateSubscription(id: $id, input: { description: "ops" }) { description }
        pauseSubscription(id: $id) { state }
        resumeSubscription(id: $id) { state }
        testSubscription(id: $id) { eventId }
      }`,
      { id: subscription.id },
    );
    expect(changed.errors).toBeUndefined();
    expect(changed.data).toMatchObject({ updateSubscription: { description: 'ops' }, pauseSubscription: { state: 'paused' }, resumeSubscription: { state: 'active' }, testSubscription: { eventId: expect.any(String) } });
    const read = await gql(`query ($id: ID!) { subscription(id: $id) { url } subscriptions(limit: 100) { items { id } } subscriptionDeliveries(id: $id) { items { id state attempts { attempt } } nextCursor } }`, { id: subscription.id });
    expect(read.data.subscription.url).toBe(HOOK);
    expect(read.data.subscriptions.items.map((s: { id: string }) => s.id)).toContain(subscription.id);
    expect(read.data.subscriptionDeliveries).toEqual({ items: [], nextCursor: null });
    const refused = await gql(`mutation ($input: JSON!) { createSubscription(input: $input) { id } }`, { input: { url: HOOK, events: ['nope'] } });
    expect(refused.errors[0].extensions).toMatchObject({ code: 'VALIDATION_FAILED', field: 'events[0]', status: 400 });
    expect((await gql(`mutation ($id: ID!) { deleteSubscription(id: $id) }`, { id: subscription.id })).data).toEqual({ deleteSubscription: true });
  });

  it("declares, shows, changes and drops a schedule's deadline, and refuses a bad one", async () => {
    // The API alone registers no worker: an HTTP target needs none.
    const target = { type: 'http', url: 'https://example.com/job' };
    const created = await client.post('/v1/schedules', { name: 'nightly', cron: '0 2 * * *', target, expect: { succeededWithin: '90m' } });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ expect: { succeededWithin: '1h30m' }, lateSince: null });
    const row = (await t.db.query(`SELECT expect_succeeded_within_ms AS ms, deadline_checked_through AS through FROM schedules WHERE id = $1`, [created.body.id])).rows[0];
    expect(row).toEqual({ ms: 5_400_000, through: null });

    const changed = await client.patch(`/v1/schedules/${created.body.id}`, { expect: { succeededWithin: '2h' } });
    expect(changed.body.expect).toEqual({ succeededWithin: '2h' });
    // A new deadline is judged from the change on.
    expect((await t.db.query(`SELECT deadline_checked_through AS through FROM schedules WHERE id = $1`, [created.body.id])).rows[0].through).toBeInstanceOf(Date);
    expect((await client.patch(`/v1/schedules/${created.body.id}`, { expect: null })).body.expect).toBeNull();
    expect((await client.get(`/v1/schedules/${created.body.id}/versions`)).body.items[0].changes).toEqual([{ field: 'expect', from: { succeededWithin: '2h' }, to: null }]);

    for (const [expectation, field] of [
      [{ succeededWithin: '100ms' }, 'expect.succeededWithin'],
      [{ succeededWithin: '31d' }, 'expect.succeededWithin'],
      [{}, 'expect.succeededWithin'],
      [{ within: '1h' }, 'expect.within'],
      ['1h', 'expect'],
    ] as const) {
      const refused = await client.post('/v1/schedules', { cron: '0 2 * * *', target, expect: expectation });
      expect(refused.status, JSON.stringify(expectation)).toBe(400);
      expect(refused.body.field).toBe(field);
    }
  });
});
