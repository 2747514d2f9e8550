/**
 * Queue limits over REST, GraphQL, the SDK client and the CLI: every refusal of a PUT is a 400
 * naming the field and changes nothing; limits are set, read and cleared per namespace; a queue's
 * counts (running, queued, held, live workers, its queued runs per priority and its top fairness
 * keys) come from the ledger; and a PUT that raises or lifts a limit releases the held runs it
 * leaves places for, in the same transaction.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { KairosClient, type Queue } from '@kairos/sdk';
import { runCli } from '../../apps/cli/src/cli.js';
import { issueKey, useKairos } from '../support/kairos.js';

const work = { type: 'handler', name: 'work', queue: 'q1' };
const fairWork = { type: 'handler', name: 'work', queue: 'q-fair' };
/** A queue's counts per priority when nothing is queued on it. */
const NONE_BY_PRIORITY = [1, 2, 3, 4, 5].map((priority) => ({ priority, queued: 0 }));

describe('queue limits over the API', () => {
  const { t, kairos, client } = useKairos({ roles: ['api'] });

  beforeAll(async () => {
    // Live workers of q1 and q-fair (their handler makes their targets acceptable) and one of q-stale not seen for five minutes.
    await t.db.query(
      `INSERT INTO workers (id, queue, handlers, version, started_at, last_seen_at) VALUES
         ('host:1:q1', 'q1', '{work}', '1.0.0', now(), now()),
         ('host:3:fair', 'q-fair', '{work}', '1.0.0', now(), now()),
         ('host:2:stale', 'q-stale', '{work}', '1.0.0', now() - interval '1 hour', now() - interval '5 minutes')`,
    );
  });

  const limitsRows = async () => (await t.db.query(`SELECT queue, max_running, rate_max, rate_per_ms, updated_by FROM queue_limits ORDER BY queue`)).rows;

  const createRun = async (body: Record<string, unknown> = {}): Promise<string> => {
    const created = await client.post('/v1/runs', { target: work, ...body });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    return created.body.id as string;
  };

  /** Marks a run running as a claim would (a lease), for the running count. */
  const markRunning = (id: string) =>
    t.db.query(`UPDATE runs SET state = 'running', attempt = 1, lease_owner = 'test-worker', lease_expires_at = now() + interval '1 hour', started_at = now() WHERE id = $1`, [id]);

  /** Marks a queued run held back by its queue's limit, as the claim does. */
  const markHeld = (id: string) => t.db.query(`UPDATE runs SET held_at = now(), defer_reason = 'QUEUE_LIMIT', enqueued_at = NULL WHERE id = $1`, [id]);

  /** Ends runs (cancelled) so the tests after see only their own. */
  const endRuns = (ids: string[]) =>
    t.db.query(
      `UPDATE runs SET state = 'cancelled', reason_code = 'CANCELLED_BY_USER', lease_owner = NULL, lease_expires_at = NULL, held_at = NULL, finished_at = now() WHERE id = ANY($1)`,
      [ids],
    );

  const heldAt = async (id: string) => (await t.db.query(`SELECT held_at FROM runs WHERE id = $1`, [id])).rows[0].held_at as Date | null;

  it('sets limits with PUT and reads them back, alone and in the listing', async () => {
    const put = await client.put('/v1/queues/q1', { maxRunning: 10, rate: { max: 100, per: '1m' } });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({
      name: 'q1',
      maxRunning: 10,
      rate: { max: 100, per: '1m' },
      running: 0,
      queued: 0,
      held: 0,
      queuedByPriority: NONE_BY_PRIORITY,
      fairnessKeys: [],
      workers: 1,
    });
    expect(Date.parse(put.body.updatedAt)).toBeGreaterThan(Date.now() - 60_000);
    expect(await limitsRows()).toEqual([{ queue: 'q1', max_running: 10, rate_max: 100, rate_per_ms: 60_000, updated_by: 'anonymous' }]);

    expect((await client.get('/v1/queues/q1')).body).toEqual(put.body);
    const listed = await client.get('/v1/queues');
    expect(listed.status).toBe(200);
    expect(listed.body.nextCursor).toBeNull();
    expect(listed.body.items).toContainEqual(put.body);
    // The default queue (the built-in handlers) has no limits and no live worker here; the stale worker's queue is left out.
    expect(listed.body.items.map((q: Queue) => q.name)).not.toContain('q-stale');

    // A duration is written as Kairos writes it; only one of the limits may be given.
    const rateOnly = await client.put('/v1/queues/q1', { rate: { max: 5, per: 90_000 } });
    expect(rateOnly.body).toMatchObject({ maxRunning: null, rate: { max: 5, per: '1m30s' } });
    const maxOnly = await client.put('/v1/queues/q1', { maxRunning: 3, rate: null });
    expect(maxOnly.body).toMatchObject({ maxRunning: 3, rate: null });
  });

  it.each([
    ['maxRunning 0', 'q1', { maxRunning: 0 }, 'VALIDATION_FAILED', 'maxRunning', 'maxRunning must be an integer from 1 to 100000'],
    ['maxRunning above 100000', 'q1', { maxRunning: 100_001 }, 'VALIDATION_FAILED', 'maxRunning', 'maxRunning must be an integer from 1 to 100000'],
    ['a fractional maxRunning', 'q1', { maxRunning: 1.5 }, 'VALIDATION_FAILED', 'maxRunning', 'maxRunning must be an integer from 1 to 100000'],
    ['a rate without per', 'q1', { rate: { max: 10 } }, 'MISSING_FIELD', 'rate.per', /^rate\.per is required/],
    ['a rate without max', 'q1', { rate: { per: '1m' } }, 'MISSING_FIELD', 'rate.max', /^rate\.max is required/],
    ['a rate max of 0', 'q1', { rate: { max: 0, per: '1m' } }, 'VALIDATION_FAILED', 'rate.max', 'rate.max must be an integer from 1 to 1000000'],
    ['a per that is no duration', 'q1', { rate: { max: 10, per: 'soon' } }, 'INVALID_DURATION', 'rate.per', /^rate\.per: /],
    ['a per under 100ms', 'q1', { rate: { max: 10, per: '50ms' } }, 'INVALID_DURATION', 'rate.per', 'rate.per must be at least 100 ms'],
    ['a per over a day', 'q1', { rate: { max: 10, per: '2d' } }, 'INVALID_DURATION', 'rate.per', 'rate.per must be at most 86400000 ms'],
    ['an unknown field', 'q1', { maxRunning: 5, burst: 3 }, 'UNKNOWN_FIELD', 'burst', /^unknown field "burst"; accepted fields here are: maxRunning, rate$/],
    ['an unknown field in rate', 'q1', { rate: { max: 1, per: '1s', burst: 2 } }, 'UNKNOWN_FIELD', 'rate.burst', /^unknown field "rate\.burst"/],
    ['a body that is no object', 'q1', [1], 'VALIDATION_FAILED', null, 'the body must be a JSON object'],
    ['a queue name with a space', 'bad%20name', { maxRunning: 5 }, 'VALIDATION_FAILED', 'name', /^name must be 1 to 64 letters, digits/],
    ['a queue name of 65 characters', 'q'.repeat(65), { maxRunning: 5 }, 'VALIDATION_FAILED', 'name', /^name must be 1 to 64/],
  ])('refuses %s with a 400 naming the field, changing nothing', async (_what, name, body, code, field, message) => {
    const before = await limitsRows();
    const response = await client.put(`/v1/queues/${name}`, body);
    expect(response.status).toBe(400);
    expect(response.body).toEqual({ code, field, message: typeof message === 'string' ? message : expect.stringMatching(message) });
    expect(await limitsRows()).toEqual(before);
  });

  it('refuses a bad queue name on GET too', async () => {
    expect((await client.get('/v1/queues/no%2Fslash')).body).toMatchObject({ code: 'VALIDATION_FAILED', field: 'name' });
    // Any valid name answers, with zero counts when nothing is known of it.
    expect((await client.get('/v1/queues/nothing-here')).body).toEqual({
      name: 'nothing-here',
      maxRunning: null,
      rate: null,
      running: 0,
      queued: 0,
      held: 0,
      queuedByPriority: NONE_BY_PRIORITY,
      fairnessKeys: [],
      workers: 0,
      updatedAt: null,
    });
  });

  it('clears the limits with a body that gives none', async () => {
    await client.put('/v1/queues/q-clear', { maxRunning: 2, rate: { max: 1, per: '1s' } });
    const cleared = await client.put('/v1/queues/q-clear', {});
    expect(cleared.status).toBe(200);
    expect(cleared.body).toMatchObject({ name: 'q-clear', maxRunning: null, rate: null, updatedAt: null });
    await client.put('/v1/queues/q-clear', { maxRunning: 2 });
    expect((await client.put('/v1/queues/q-clear', { maxRunning: null, rate: null })).body).toMatchObject({ maxRunning: null, rate: null, updatedAt: null });
    expect((await limitsRows()).map((r) => r.queue)).not.toContain('q-clear');
    // A queue without limits, runs or live workers leaves the listing.
    expect((await client.get('/v1/queues')).body.items.map((q: Queue) => q.name)).not.toContain('q-clear');
  });

  it("counts the queue's runs: running, queued (due, not held), held, and its live workers", async () => {
    const ids = [await createRun(), await createRun(), await createRun()];
    await createRun({ availableAt: new Date(Date.now() + 3_600_000).toISOString() });
    expect((await client.get('/v1/queues/q1')).body).toMatchObject({ running: 0, queued: 3, held: 0, workers: 1 });
    await markRunning(ids[0]!);
    await markHeld(ids[1]!);
    expect((await client.get('/v1/queues/q1')).body).toMatchObject({ running: 1, queued: 1, held: 1, workers: 1 });
    expect((await client.get('/v1/queues')).body.items.find((q: Queue) => q.name === 'q1')).toMatchObject({ running: 1, queued: 1, held: 1 });
    // The run a limit holds tells why.
    expect((await client.get(`/v1/runs/${ids[1]}`)).body).toMatchObject({ state: 'queued', deferReason: 'QUEUE_LIMIT' });
    // Put back as they were for the tests after this one: nothing held, nothing running.
    await endRuns(ids);
  });

  it('counts the queued runs by priority, due or not, held or not, and names the ten fairness keys with the most', async () => {
    const byTenant = (tenantId: string, weight = 1) => ({ payload: { tenantId }, fairness: { key: 'tenant-{{payload.tenantId}}', weight } });
    const later = { availableAt: new Date(Date.now() + 3_600_000).toISOString() };
    const items = [
      // Priority 1: three of tenant a (one not due yet), one of tenant b.
      { priority: 1, ...byTenant('a', 5) },
      { priority: 1, ...byTenant('a', 5) },
      { priority: 1, ...byTenant('a', 5), ...later },
      { priority: 1, ...byTenant('b') },
      // Priority 2: two more of tenant b, and one each of tenants k00 to k10.
      { priority: 2, ...byTenant('b') },
      { priority: 2, ...byTenant('b') },
      ...Array.from({ length: 11 }, (_, i) => ({ priority: 2, ...byTenant(`k${String(i).padStart(2, '0')}`) })),
      // The default priority, without a key (left out of the keys).
      {},
      {},
      // Priority 5, of tenant c: one runs, one ends; neither is queued.
      { priority: 5, ...byTenant('c') },
      { priority: 5, ...byTenant('c') },
    ];
    const batch = await client.post('/v1/runs/batch', { items: items.map((item) => ({ target: fairWork, ...item })) });
    expect(batch.status, JSON.stringify(batch.body)).toBe(200);
    const ids = (batch.body.items as { id: string }[]).map((run) => run.id);
    expect(ids.every((id) => typeof id === 'string')).toBe(true);
    const runs = (await t.db.query(`SELECT priority, fairness_key FROM runs WHERE id = ANY($1) ORDER BY array_position($1, id)`, [ids])).rows;
    expect(runs.slice(0, 4)).toEqual([...Array(3).fill({ priority: 1, fairness_key: 'tenant-a' }), { priority: 1, fairness_key: 'tenant-b' }]);
    await markRunning(ids.at(-2)!);
    await endRuns([ids.at(-1)!]);
    // Held by its queue's limit, it is still queued.
    await markHeld(ids[0]!);

    const expected = {
      queuedByPriority: [
        { priority: 1, queued: 4 },
        { priority: 2, queued: 13 },
        { priority: 3, queued: 2 },
        { priority: 4, queued: 0 },
        { priority: 5, queued: 0 },
      ],
      // Most first, ties by key: tenant-k10 is the eleventh.
      fairnessKeys: [
        { key: 'tenant-a', queued: 3 },
        { key: 'tenant-b', queued: 3 },
        ...Array.from({ length: 8 }, (_, i) => ({ key: `tenant-k0${i}`, queued: 1 })),
      ],
    };
    const queue = (await client.get('/v1/queues/q-fair')).body;
    expect(queue).toMatchObject({ name: 'q-fair', running: 1, held: 1, ...expected });
    expect((await client.get('/v1/queues')).body.items.find((q: Queue) => q.name === 'q-fair')).toEqual(queue);
    // A PUT answers with them too.
    expect((await client.put('/v1/queues/q-fair', { maxRunning: 100 })).body).toMatchObject(expected);
    await client.put('/v1/queues/q-fair', {});

    // Another namespace sees none of them either.
    const key = await issueKey(t, 'fair-other', 'read');
    const other = await fetch(`${kairos.url}/v1/queues/q-fair`, { headers: { authorization: `Bearer ${key}` } });
    expect(await other.json()).toMatchObject({ queuedByPriority: NONE_BY_PRIORITY, fairnessKeys: [] });

    // A run that starts or ends leaves the counts; its key leaves the list with its last queued run.
    await endRuns(ids.slice(0, 3));
    expect((await client.get('/v1/queues/q-fair')).body).toMatchObject({
      queuedByPriority: [
        { priority: 1, queued: 1 },
        { priority: 2, queued: 13 },
        { priority: 3, queued: 2 },
        { priority: 4, queued: 0 },
        { priority: 5, queued: 0 },
      ],
      fairnessKeys: [{ key: 'tenant-b', queued: 3 }, ...Array.from({ length: 9 }, (_, i) => ({ key: `tenant-k0${i}`, queued: 1 }))],
    });
    await endRuns(ids);
    expect((await client.get('/v1/queues/q-fair')).body).toMatchObject({ running: 0, queued: 0, held: 0, queuedByPriority: NONE_BY_PRIORITY, fairnessKeys: [] });
  });

  it("keeps each namespace's limits and counts to itself", async () => {
    const key = await issueKey(t, 'other-team', 'read,write');
    const other = async (method: string, path: string, body?: unknown) => {
      const response = await fetch(`${kairos.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: response.status, body: (await response.json()) as any };
    };
    const before = (await client.get('/v1/queues/q1')).body;
    expect(before.maxRunning).not.toBeNull();
    // Another namespace sees q1 with its workers (the registry is the cluster's) but without the default namespace's limits or runs.
    expect((await other('GET', '/v1/queues/q1')).body).toMatchObject({ maxRunning: null, rate: null, running: 0, queued: 0, held: 0, workers: 1, updatedAt: null });
    expect((await other('PUT', '/v1/queues/q1', { maxRunning: 50 })).body).toMatchObject({ maxRunning: 50 });
    expect((await client.get('/v1/queues/q1')).body).toEqual(before);
    expect((await t.db.query(`SELECT count(*)::int AS n FROM queue_limits WHERE queue = 'q1'`)).rows[0].n).toBe(2);
  });

  it('releases held runs at once when a PUT raises the limit, as many as there are places', async () => {
    const running = await createRun();
    const first = await createRun();
    const second = await createRun();
    await markRunning(running);
    expect((await client.put('/v1/queues/q1', { maxRunning: 1 })).body).toMatchObject({ maxRunning: 1, running: 1 });
    await markHeld(first);
    await markHeld(second);

    // The limit stays at 1 with one running: nothing to release.
    expect((await client.put('/v1/queues/q1', { maxRunning: 1, rate: { max: 100, per: '1m' } })).body).toMatchObject({ held: 2 });
    expect(await heldAt(first)).not.toBeNull();

    // One more place: the oldest held run is released, the other stays held.
    const raised = await client.put('/v1/queues/q1', { maxRunning: 2 });
    expect(raised.body).toMatchObject({ maxRunning: 2, running: 1, held: 1, queued: 1 });
    expect(await heldAt(first)).toBeNull();
    expect(await heldAt(second)).not.toBeNull();
    expect((await client.get(`/v1/runs/${first}`)).body).toMatchObject({ state: 'queued', deferReason: null });
    const events = (await t.db.query(`SELECT kind, actor, detail FROM run_events WHERE run_id = $1 AND kind = 'released'`, [first])).rows;
    expect(events).toEqual([{ kind: 'released', actor: 'anonymous', detail: { queue: 'q1' } }]);

    // No limits at all: every held run is released.
    expect((await client.put('/v1/queues/q1', {})).body).toMatchObject({ maxRunning: null, held: 0, queued: 2 });
    expect(await heldAt(second)).toBeNull();
    await endRuns([running, first, second]);
  });

  describe('over GraphQL', () => {
    const gql = async (query: string, variables: Record<string, unknown> = {}) => (await client.post('/graphql', { query, variables })).body;
    const QUEUE = 'name maxRunning rate { max per } running queued held queuedByPriority { priority queued } fairnessKeys { key queued } workers updatedAt';

    it('reads queues as GET /v1/queues does, and sets limits as PUT does', async () => {
      const set = await gql(`mutation($rate: JSON) { setQueueLimits(name: "q-graph", maxRunning: 4, rate: $rate) { ${QUEUE} } }`, { rate: { max: 10, per: '1s' } });
      expect(set.errors).toBeUndefined();
      expect(set.data.setQueueLimits).toMatchObject({ name: 'q-graph', maxRunning: 4, rate: { max: 10, per: '1s' }, running: 0 });
      expect((await gql(`{ queue(name: "q-graph") { ${QUEUE} } }`)).data.queue).toEqual((await client.get('/v1/queues/q-graph')).body);
      expect((await gql(`{ queues { items { ${QUEUE} } nextCursor } }`)).data.queues).toEqual((await client.get('/v1/queues')).body);

      const cleared = await gql(`mutation { setQueueLimits(name: "q-graph") { ${QUEUE} } }`);
      expect(cleared.data.setQueueLimits).toMatchObject({ maxRunning: null, rate: null, updatedAt: null });
    });

    it('refuses what REST refuses, with the same code and field', async () => {
      const before = await limitsRows();
      for (const [query, variables, code, field] of [
        [`mutation { setQueueLimits(name: "q1", maxRunning: 0) { name } }`, {}, 'VALIDATION_FAILED', 'maxRunning'],
        [`mutation($rate: JSON) { setQueueLimits(name: "q1", rate: $rate) { name } }`, { rate: { max: 10 } }, 'MISSING_FIELD', 'rate.per'],
        [`mutation($rate: JSON) { setQueueLimits(name: "q1", rate: $rate) { name } }`, { rate: { max: 10, per: 'later' } }, 'INVALID_DURATION', 'rate.per'],
        [`mutation { setQueueLimits(name: "no such", maxRunning: 2) { name } }`, {}, 'VALIDATION_FAILED', 'name'],
        [`{ queue(name: "") { name } }`, {}, 'VALIDATION_FAILED', 'name'],
      ] as const) {
        const response = await gql(query, variables);
        expect(response.errors, query).toHaveLength(1);
        expect(response.errors[0].extensions, query).toEqual({ code, field, status: 400 });
      }
      expect(await limitsRows()).toEqual(before);
    });
  });

  it('is what the SDK client reads and sets', async () => {
    const sdk = new KairosClient({ baseUrl: kairos.url });
    const set = await sdk.queues.set('q-sdk', { maxRunning: 7, rate: { max: 20, per: '30s' } });
    expect(set).toMatchObject({ name: 'q-sdk', maxRunning: 7, rate: { max: 20, per: '30s' } });
    expect(await sdk.queues.get('q-sdk')).toEqual(set);
    const listed: Queue[] = [];
    for await (const queue of sdk.queues.list()) listed.push(queue);
    expect(listed).toContainEqual(set);
    expect(listed.map((q) => q.name)).toEqual([...listed.map((q) => q.name)].sort());
    await expect(sdk.queues.set('q-sdk', { maxRunning: 0 })).rejects.toMatchObject({ status: 400, code: 'VALIDATION_FAILED', field: 'maxRunning' });
    expect((await sdk.queues.set('q-sdk', {})).maxRunning).toBeNull();
  });

  describe('from the CLI', () => {
    const cli = async (...argv: string[]) => {
      const lines: string[] = [];
      const code = await runCli(argv, { line: (l) => lines.push(l) }, { KAIROS_URL: kairos.url });
      return { code, out: lines.join('\n') };
    };

    it('lists the queues as a table or JSON, and sets the limits it is given', async () => {
      const set = await cli('queues', 'set', 'q-cli', '--max-running', '5', '--rate', '100/1m');
      expect(set.code).toBe(0);
      expect(set.out.split('\n')).toEqual([expect.stringMatching(/^NAME\s+RUNNING\/MAX\s+QUEUED\s+HELD\s+RATE\s+WORKERS$/), expect.stringMatching(/^q-cli\s+0\/5\s+0\s+0\s+100\/1m\s+0$/)]);
      // Only the rate changes; --max-running stays 5.
      expect((await cli('queues', 'set', 'q-cli', '--rate', '10/1s')).code).toBe(0);
      expect((await client.get('/v1/queues/q-cli')).body).toMatchObject({ maxRunning: 5, rate: { max: 10, per: '1s' } });
      const lifted = JSON.parse((await cli('queues', 'set', 'q-cli', '--max-running', 'none', '--output', 'json')).out);
      expect(lifted).toMatchObject({ name: 'q-cli', maxRunning: null, rate: { max: 10, per: '1s' } });

      const table = await cli('queues');
      expect(table.code).toBe(0);
      expect(table.out).toMatch(/^q-cli\s+0\s+0\s+0\s+10\/1s\s+0$/m);
      expect(table.out).toMatch(/^q1\s+/m);
      const listed = JSON.parse((await cli('queues', '--output', 'json')).out) as Queue[];
      expect(listed).toEqual((await client.get('/v1/queues')).body.items);
    });

    it('prints, under the table, the queued runs of each queue per priority and its top fairness keys', async () => {
      const fairness = { key: 'tenant-{{payload.tenantId}}' };
      const items = [
        { priority: 2, payload: { tenantId: 'b' }, fairness },
        { priority: 2, payload: { tenantId: 'a' }, fairness },
        { priority: 2, payload: { tenantId: 'a' }, fairness },
        {},
      ];
      const batch = await client.post('/v1/runs/batch', { items: items.map((item) => ({ target: fairWork, ...item })) });
      const ids = (batch.body.items as { id: string }[]).map((run) => run.id);
      const table = (await cli('queues')).out.split('\n');
      const at = table.indexOf('queued runs of q-fair by priority: p1 0  p2 3  p3 1  p4 0  p5 0');
      expect(at, table.join('\n')).toBeGreaterThan(0);
      expect(table[at - 1]).toBe('');
      expect(table[at + 1]).toBe('  top fairness keys: tenant-a 2, tenant-b 1');
      // A queue without queued runs gets no such lines.
      expect(table.some((line) => line.startsWith('queued runs of q-cli '))).toBe(false);
      const listed = JSON.parse((await cli('queues', '--output', 'json')).out) as Queue[];
      expect(listed.find((q) => q.name === 'q-fair')).toMatchObject({
        queuedByPriority: [
          { priority: 1, queued: 0 },
          { priority: 2, queued: 3 },
          { priority: 3, queued: 1 },
          { priority: 4, queued: 0 },
          { priority: 5, queued: 0 },
        ],
        fairnessKeys: [
          { key: 'tenant-a', queued: 2 },
          { key: 'tenant-b', queued: 1 },
        ],
      });
      await endRuns(ids);
    });

    it('refuses what the API refuses, naming the flag or the field', async () => {
      await expect(cli('queues', 'set', 'q-cli', '--max-running', 'many')).rejects.toThrow(/--max-running must be a whole number/);
      await expect(cli('queues', 'set', 'q-cli', '--rate', 'fast')).rejects.toThrow(/--rate must be starts per window/);
      await expect(cli('queues', 'set', 'q-cli')).rejects.toThrow(/needs --max-running or --rate/);
      await expect(cli('queues', 'set', 'q-cli', '--rate', '10/soon')).rejects.toThrow(/rate\.per/);
      await expect(cli('queues', 'set', 'q-cli', '--max-running', '0')).rejects.toThrow(/maxRunning must be an integer from 1 to 100000/);
      await expect(cli('queues', 'set', 'bad name', '--max-running', '1')).rejects.toThrow(/name must be 1 to 64/);
    });
  });
});
