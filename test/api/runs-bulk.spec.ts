/**
 * POST /v1/runs/bulk: cancel or retry every run of the caller's namespace a filter matches, in
 * pages of 500 runs per transaction, while workers run other runs. A dry run counts and changes
 * nothing; retry makes a fresh run of each dead run as POST /v1/runs/:id/retry does; every refusal
 * is a 400 naming its field and changes nothing. GraphQL's bulkRuns answers the same.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { issueKey, runInState, useKairos, waitFor } from '../support/kairos.js';

const echo = { type: 'handler', name: 'echo' };
/** A handler only a worker that is never started serves: its runs stay queued. */
const held = { type: 'handler', name: 'hold', queue: 'bulk-held' };
const inAnHour = () => new Date(Date.now() + 3_600_000).toISOString();

describe('bulk cancel and retry of runs', () => {
  const { t, kairos, client } = useKairos();
  let acmeKey = '';

  beforeAll(async () => {
    // A worker of bulk-held was seen (so its targets are accepted); none serves the queue.
    await t.db.query(`INSERT INTO workers (id, queue, handlers, version, started_at, last_seen_at) VALUES ('host:9:held', 'bulk-held', '{hold}', '1.0.0', now(), now())`);
    acmeKey = await issueKey(t, 'acme', 'read,write');
  });

  const acme = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${kairos.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${acmeKey}`, ...(method === 'GET' ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as any };
  };

  const count = async (sql: string, params: unknown[] = []): Promise<number> => (await t.db.query(sql, params)).rows[0].n as number;
  const heldRuns = (state: string) => count(`SELECT count(*)::int AS n FROM runs WHERE target->>'queue' = 'bulk-held' AND state = $1`, [state]);
  /** A fingerprint of the whole runs table: a refused request must leave it as it was. */
  const ledger = async () => (await t.db.query(`SELECT count(*)::int AS n, md5(string_agg(id::text || state || coalesce(cancel_requested_at::text, ''), ',' ORDER BY id)) AS h FROM runs`)).rows[0];

  it('cancels 10,000 queued runs by filter in pages while workers run other runs, and a dry run first changes nothing and counts the same', async () => {
    // Runs the filter must not touch: delayed echo runs of the default queue, and a bulk-held run of another namespace.
    const bystanders = await client.post('/v1/runs/batch', { items: [1, 2, 3].map((n) => ({ target: echo, payload: { n }, availableAt: inAnHour() })) });
    const foreign = await acme('POST', '/v1/runs', { target: held, availableAt: inAnHour() });
    expect(foreign.status).toBe(201);

    const ids: string[] = [];
    for (let batch = 0; batch < 10; batch++) {
      const { status, body } = await client.post('/v1/runs/batch', {
        items: Array.from({ length: 1000 }, (_, i) => ({ target: held, payload: { batch, i }, availableAt: inAnHour() })),
      });
      expect(status).toBe(200);
      ids.push(...body.items.map((item: any) => item.id));
    }
    expect(new Set(ids).size).toBe(10_000);
    const filter = { queue: 'bulk-held', state: ['queued'] };

    const before = await ledger();
    const dry = await client.post('/v1/runs/bulk', { action: 'cancel', filter, dryRun: true });
    expect(dry.status).toBe(200);
    expect(dry.body.matched).toBe(10_000);
    expect(dry.body.acted).toBe(0);
    expect(dry.body.sample).toHaveLength(10);
    expect(dry.body.sample).toEqual(ids.slice().sort().slice(0, 10));
    expect(await ledger()).toEqual(before);

    // Workers run other runs meanwhile.
    const started = Date.now();
    const [bulk, others] = await Promise.all([
      client.post('/v1/runs/bulk', { action: 'cancel', filter }),
      (async () => {
        const made: string[] = [];
        for (let i = 0; i < 5; i++) made.push(...(await client.post('/v1/runs/batch', { items: [1, 2, 3, 4].map((n) => ({ target: echo, payload: { i, n } })) })).body.items.map((item: any) => item.id));
        return made;
      })(),
    ]);
    console.log(`bulk cancel of 10,000 runs answered in ${Date.now() - started} ms`);
    expect(bulk.status).toBe(200);
    expect(bulk.body).toEqual({ matched: 10_000, acted: 10_000, sample: dry.body.sample });

    expect(await heldRuns('cancelled')).toBe(10_000 + 0);
    expect(await count(`SELECT count(*)::int AS n FROM runs WHERE id = ANY($1::uuid[]) AND state = 'cancelled' AND reason_code = 'CANCELLED_BY_USER' AND cancel_requested_by = 'anonymous'`, [ids])).toBe(10_000);
    // In pages: each transaction stamps its runs with its own now(), one page of 500 runs at a time.
    const pages = (await t.db.query(`SELECT finished_at, count(*)::int AS n FROM runs WHERE id = ANY($1::uuid[]) GROUP BY finished_at`, [ids])).rows;
    expect(pages.length).toBeGreaterThanOrEqual(20);
    expect(Math.max(...pages.map((p: any) => p.n))).toBeLessThanOrEqual(500);
    // The actor is recorded as for a single cancel.
    const events = (await client.get(`/v1/runs/${ids[0]}/events`)).body.items;
    expect(events.at(-1)).toMatchObject({ kind: 'cancelled', toState: 'cancelled', actor: 'anonymous', reasonCode: 'CANCELLED_BY_USER' });

    // The others are untouched: the workers' runs succeeded, the delayed ones and the other namespace's wait.
    for (const id of others) expect((await runInState(client, id, 'succeeded')).state).toBe('succeeded');
    for (const item of bystanders.body.items) expect((await client.get(`/v1/runs/${item.id}`)).body.state).toBe('queued');
    expect((await acme('GET', `/v1/runs/${foreign.body.id}`)).body).toMatchObject({ state: 'queued', cancelRequestedAt: null });

    // Nothing is left to cancel.
    expect((await client.post('/v1/runs/bulk', { action: 'cancel', filter })).body).toEqual({ matched: 0, acted: 0, sample: [] });
    // The other namespace's run is its own namespace's to cancel.
    expect((await acme('POST', '/v1/runs/bulk', { action: 'cancel', filter })).body).toEqual({ matched: 1, acted: 1, sample: [foreign.body.id] });
  }, 300_000);

  it('retries dead runs: one fresh run each (origin retry, sourceRunId set), as POST /v1/runs/:id/retry does', async () => {
    const createdAfter = new Date(Date.now() - 1000).toISOString();
    const fail = { type: 'handler', name: 'fail' };
    const made = (await client.post('/v1/runs/batch', { items: [1, 2, 3, 4, 5].map((n) => ({ target: fail, payload: { n }, retry: { maxAttempts: 1 } })) })).body.items;
    const dead: string[] = [];
    for (const item of made) dead.push((await runInState(client, item.id, 'dead')).id);
    // A succeeded run and a queued one in the same window: retry matches neither.
    const succeeded = (await client.post('/v1/runs', { target: echo })).body.id;
    await runInState(client, succeeded, 'succeeded');
    const queued = (await client.post('/v1/runs', { target: echo, availableAt: inAnHour() })).body.id;
    const filter = { createdAfter, state: ['dead', 'succeeded', 'queued'] };
    const sorted = dead.slice().sort();

    const dry = await client.post('/v1/runs/bulk', { action: 'retry', filter, dryRun: true });
    expect(dry.body).toEqual({ matched: 5, acted: 0, sample: sorted });
    expect(await count(`SELECT count(*)::int AS n FROM runs WHERE source_run_id = ANY($1::uuid[])`, [dead])).toBe(0);

    const retried = await client.post('/v1/runs/bulk', { action: 'retry', filter });
    expect(retried.body).toEqual({ matched: 5, acted: 5, sample: sorted });
    const fresh = (await t.db.query(`SELECT id, source_run_id AS "sourceRunId", origin, created_by AS actor FROM runs WHERE source_run_id = ANY($1::uuid[])`, [dead])).rows;
    expect(fresh.map((r: any) => r.sourceRunId).sort()).toEqual(sorted);
    expect(fresh.every((r: any) => r.origin === 'retry' && r.actor === 'anonymous')).toBe(true);
    // Each fresh run ran (and failed again, as its source did) and reads as a /retry run reads.
    for (const r of fresh) expect(await runInState(client, r.id, 'dead')).toMatchObject({ origin: 'retry', sourceRunId: r.sourceRunId, attempt: 1 });
    expect((await client.get(`/v1/runs/${succeeded}`)).body.state).toBe('succeeded');
    expect((await client.get(`/v1/runs/${queued}`)).body.state).toBe('queued');

    // POST /v1/runs/:id/retry keeps no memory of earlier retries: it runs a dead run again each time it is asked.
    const single = await client.post(`/v1/runs/${dead[0]}/retry`);
    expect(single.status).toBe(201);
    await runInState(client, single.body.id, 'dead');
    // So a second bulk retry of the same filter retries every dead run again: the sources, and the
    // fresh runs of the first retry and of the single one, now dead too (all created in the window).
    const again = await client.post('/v1/runs/bulk', { action: 'retry', filter });
    expect(again.body.matched).toBe(11);
    expect(again.body.acted).toBe(11);
    expect(await count(`SELECT count(*)::int AS n FROM runs WHERE source_run_id = ANY($1::uuid[])`, [dead])).toBe(11);
    // Runs made by the bulk retry itself are never matched by it: it ended.
    await waitFor(async () => ((await count(`SELECT count(*)::int AS n FROM runs WHERE origin = 'retry' AND state = 'queued'`)) === 0 ? true : undefined), 'the fresh runs to run');
  }, 120_000);

  it('retries cancelled runs too, as POST /v1/runs/:id/retry does: a fresh run each, which runs', async () => {
    const createdAfter = new Date(Date.now() - 1000).toISOString();
    const made = (await client.post('/v1/runs/batch', { items: [1, 2, 3].map((n) => ({ target: echo, payload: { n }, availableAt: inAnHour() })) })).body.items;
    for (const item of made) expect((await client.post(`/v1/runs/${item.id}/cancel`)).body.state).toBe('cancelled');
    const filter = { createdAfter, state: ['cancelled'] };
    expect((await client.post('/v1/runs/bulk', { action: 'retry', filter })).body).toMatchObject({ matched: 3, acted: 3 });
    const fresh = (await t.db.query(`SELECT id FROM runs WHERE source_run_id = ANY($1::uuid[])`, [made.map((m: { id: string }) => m.id)])).rows;
    expect(fresh).toHaveLength(3);
    for (const r of fresh) expect(await runInState(client, r.id, 'succeeded')).toMatchObject({ origin: 'retry' });
    const single = await client.post(`/v1/runs/${made[0].id}/retry`);
    expect(single).toMatchObject({ status: 201, body: { origin: 'retry', sourceRunId: made[0].id } });
  }, 60_000);

  it('refuses an empty filter and every malformed field with a 400 naming it, and changes nothing', async () => {
    await client.post('/v1/runs', { target: echo, availableAt: inAnHour() });
    // The earlier tests' runs that are due have ended: only a refusal could change the ledger now.
    await waitFor(async () => {
      const { rows } = await t.db.query(`SELECT count(*)::int AS n FROM runs WHERE state = 'running' OR (state = 'queued' AND available_at <= now())`);
      return rows[0].n === 0 ? true : undefined;
    }, 'the due runs to end', 30_000);
    const before = await ledger();
    const refusals: [unknown, string][] = [
      [{ action: 'cancel', filter: {} }, 'filter'],
      [{ action: 'retry', filter: { scheduleId: null, state: null, reasonCode: null, queue: null, createdAfter: null, createdBefore: null } }, 'filter'],
      [{ action: 'cancel' }, 'filter'],
      [{ action: 'cancel', filter: 'queued' }, 'filter'],
      [{ filter: { state: ['queued'] } }, 'action'],
      [{ action: 'delete', filter: { state: ['queued'] } }, 'action'],
      [{ action: 'cancel', filter: { state: ['finished'] } }, 'filter.state[0]'],
      [{ action: 'cancel', filter: { state: [] } }, 'filter.state'],
      [{ action: 'cancel', filter: { reasonCode: 'BORED' } }, 'filter.reasonCode'],
      [{ action: 'cancel', filter: { queue: 'no spaces' } }, 'filter.queue'],
      [{ action: 'cancel', filter: { scheduleId: 'nightly' } }, 'filter.scheduleId'],
      [{ action: 'cancel', filter: { createdAfter: 'yesterday' } }, 'filter.createdAfter'],
      [{ action: 'cancel', filter: { createdBefore: '2026-02-30T00:00:00Z' } }, 'filter.createdBefore'],
      [{ action: 'cancel', filter: { createdAfter: '2026-01-02T00:00:00Z', createdBefore: '2026-01-01T00:00:00Z' } }, 'filter.createdAfter'],
      [{ action: 'cancel', filter: { createdAfter: '2026-01-01T00:00:00Z', createdBefore: '2026-01-01T00:00:00Z' } }, 'filter.createdAfter'],
      [{ action: 'cancel', filter: { state: ['queued'], owner: 'me' } }, 'filter.owner'],
      [{ action: 'cancel', filter: { state: ['queued'] }, dryRun: 'yes' }, 'dryRun'],
      [{ action: 'cancel', filter: { state: ['queued'] }, force: true }, 'force'],
    ];
    for (const [body, field] of refusals) {
      const { status, body: error } = await client.post('/v1/runs/bulk', body);
      expect([status, error.field], JSON.stringify(body)).toEqual([400, field]);
    }
    expect(await ledger()).toEqual(before);
  });

  it('answers the same over GraphQL', async () => {
    const gql = async (query: string, variables: Record<string, unknown>) => {
      const response = await fetch(`${kairos.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query, variables }) });
      return (await response.json()) as any;
    };
    // Past the runs of the tests above.
    await new Promise((resolve) => setTimeout(resolve, 50));
    const createdAfter = new Date().toISOString();
    const run = (await client.post('/v1/runs', { target: echo, availableAt: inAnHour() })).body.id;
    const mutation = `mutation($action: String!, $filter: JSON!, $dryRun: Boolean) { bulkRuns(action: $action, filter: $filter, dryRun: $dryRun) { matched acted sample } }`;
    const filter = { createdAfter, state: ['queued'] };
    const rest = (await client.post('/v1/runs/bulk', { action: 'cancel', filter, dryRun: true })).body;
    expect((await gql(mutation, { action: 'cancel', filter, dryRun: true })).data.bulkRuns).toEqual(rest);
    expect((await gql(mutation, { action: 'cancel', filter })).data.bulkRuns).toEqual({ matched: 1, acted: 1, sample: [run] });
    const refused = await gql(mutation, { action: 'cancel', filter: {} });
    expect(refused.errors[0].extensions).toMatchObject({ code: 'VALIDATION_FAILED', field: 'filter' });
  });
});
