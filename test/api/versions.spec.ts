/**
 * Versions of the code in flight over REST, GraphQL, the SDK client and the CLI: GET /v1/versions
 * counts per queue and version the live workers (not the stopped or stale ones), the namespace's
 * runs it claimed that have not ended, and those held for it; POST /v1/runs/:id/version moves a run
 * (or lets any version take it), records the move in the run's story and releases a run waiting for
 * its version once a live worker serves the new one; a run that ended answers 409, an unknown one
 * 404, and every refusal of the body is a 400 naming `version` that changes nothing.
 */
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { KairosClient, type Version } from '@kairos/sdk';
import { runCli } from '../../apps/cli/src/cli.js';
import { issueKey, useKairos } from '../support/kairos.js';

const bill = { type: 'handler', name: 'bill', queue: 'billing' };

describe('versions of the code in flight', () => {
  const { t, kairos, client } = useKairos({ roles: ['api'] });

  beforeAll(async () => {
    // billing: two live workers of 2026.1, one of 2026.2; one of 2026.0 said goodbye, one of 2025.9 went quiet five
    // minutes ago. reports: one live worker that takes over any version (upgrade auto).
    await t.db.query(
      `INSERT INTO workers (id, queue, handlers, version, upgrade, started_at, last_seen_at, stopped_at) VALUES
         ('host:1:billing', 'billing', '{bill}', '2026.1', 'pinned', now(), now(), NULL),
         ('host:2:billing', 'billing', '{bill}', '2026.1', 'pinned', now(), now(), NULL),
         ('host:3:billing', 'billing', '{bill}', '2026.2', 'pinned', now(), now(), NULL),
         ('host:4:billing', 'billing', '{bill}', '2026.0', 'pinned', now() - interval '1 hour', now(), now()),
         ('host:5:billing', 'billing', '{bill}', '2025.9', 'pinned', now() - interval '1 hour', now() - interval '5 minutes', NULL),
         ('host:6:reports', 'reports', '{report}', '2026.1', 'auto', now(), now(), NULL)`,
    );
  });

  /** A queued run of billing due in an hour, so nothing but the test moves it. */
  const createRun = async (): Promise<string> => {
    const created = await client.post('/v1/runs', { target: bill, availableAt: new Date(Date.now() + 3_600_000).toISOString() });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    return created.body.id as string;
  };

  /** Sets a run's version and state as claims would have, held for its version when `held`. */
  const stamp = (id: string, version: string | null, state: 'queued' | 'running' | 'cancelled' = 'queued', held = false) =>
    t.db.query(
      `UPDATE runs SET version = $2, state = $3, enqueued_at = CASE WHEN $4 THEN NULL ELSE enqueued_at END,
              held_at = CASE WHEN $4 THEN now() END, defer_reason = CASE WHEN $4 THEN 'VERSION_UNAVAILABLE' END,
              lease_owner = CASE WHEN $3 = 'running' THEN 'test-worker' END,
              lease_expires_at = CASE WHEN $3 = 'running' THEN now() + interval '1 hour' END,
              finished_at = CASE WHEN $3 = 'cancelled' THEN now() END,
              reason_code = CASE WHEN $3 = 'cancelled' THEN 'CANCELLED_BY_USER' END
       WHERE id = $1`,
      [id, version, state, held],
    );

  const row = async (id: string) =>
    (await t.db.query(`SELECT version, held_at, defer_reason FROM runs WHERE id = $1`, [id])).rows[0] as { version: string | null; held_at: Date | null; defer_reason: string | null };
  const versionEvents = async (id: string) =>
    (await t.db.query(`SELECT kind, actor, detail FROM run_events WHERE run_id = $1 AND kind IN ('version_moved', 'released') ORDER BY id`, [id])).rows;

  /** Ends runs (cancelled) so the tests after see only their own. */
  const endRuns = (ids: string[]) =>
    t.db.query(
      `UPDATE runs SET state = 'cancelled', reason_code = 'CANCELLED_BY_USER', lease_owner = NULL, lease_expires_at = NULL, held_at = NULL, finished_at = now() WHERE id = ANY($1)`,
      [ids],
    );

  it('counts per queue and version the live workers, the active runs and the runs waiting for their version', async () => {
    const [running, queued, ended, waiting, unclaimed] = [await createRun(), await createRun(), await createRun(), await createRun(), await createRun()];
    await stamp(running, '2026.1', 'running');
    await stamp(queued, '2026.1');
    await stamp(ended, '2026.1', 'cancelled');
    await stamp(waiting, '2026.0', 'queued', true);

    const listed = await client.get('/v1/versions');
    expect(listed.status).toBe(200);
    expect(listed.body).toEqual({
      items: [
        // 2026.0's worker stopped: its waiting run still needs it. 2025.9's went stale and no run needs it: left out.
        { queue: 'billing', version: '2026.0', workers: 0, activeRuns: 1, pinnedWaiting: 1 },
        // The run that ended and the one no worker claimed yet count for no version.
        { queue: 'billing', version: '2026.1', workers: 2, activeRuns: 2, pinnedWaiting: 0 },
        { queue: 'billing', version: '2026.2', workers: 1, activeRuns: 0, pinnedWaiting: 0 },
        { queue: 'reports', version: '2026.1', workers: 1, activeRuns: 0, pinnedWaiting: 0 },
      ],
    });
    // The run view carries the version; one not claimed yet has none.
    expect((await client.get(`/v1/runs/${running}`)).body).toMatchObject({ version: '2026.1', state: 'running' });
    expect((await client.get(`/v1/runs/${waiting}`)).body).toMatchObject({ version: '2026.0', state: 'queued', deferReason: 'VERSION_UNAVAILABLE' });
    expect((await client.get(`/v1/runs/${unclaimed}`)).body.version).toBeNull();
    expect((await client.get('/v1/runs?limit=5')).body.items.find((r: { id: string }) => r.id === queued).version).toBe('2026.1');
    await endRuns([running, queued, waiting, unclaimed]);
  });

  it('moves a run to another version, recorded in its story, and releases it once a live worker serves that version', async () => {
    const id = await createRun();
    await stamp(id, '2026.0', 'queued', true);

    // 2026.3 has no live worker: the move is recorded, the run still waits.
    const unserved = await client.post(`/v1/runs/${id}/version`, { version: '2026.3' });
    expect(unserved.status).toBe(200);
    expect(unserved.body).toMatchObject({ id, state: 'queued', version: '2026.3', deferReason: 'VERSION_UNAVAILABLE' });
    expect((await row(id)).held_at).not.toBeNull();

    // 2026.2 has one: the run is released, due again for the relay to hand over.
    const moved = await client.post(`/v1/runs/${id}/version`, { version: '2026.2' });
    expect(moved.status).toBe(200);
    expect(moved.body).toMatchObject({ id, state: 'queued', version: '2026.2', deferReason: null });
    expect(await row(id)).toEqual({ version: '2026.2', held_at: null, defer_reason: null });
    expect(await versionEvents(id)).toEqual([
      { kind: 'version_moved', actor: 'anonymous', detail: { from: '2026.0', to: '2026.3' } },
      { kind: 'version_moved', actor: 'anonymous', detail: { from: '2026.3', to: '2026.2' } },
      { kind: 'released', actor: 'anonymous', detail: { version: '2026.2' } },
    ]);
    // The story the API tells has the moves.
    const story = (await client.get(`/v1/runs/${id}/events`)).body.items.filter((e: { kind: string }) => e.kind === 'version_moved');
    expect(story.map((e: { detail: unknown }) => e.detail)).toEqual([
      { from: '2026.0', to: '2026.3' },
      { from: '2026.3', to: '2026.2' },
    ]);

    // Null: a worker of any version may take it; the next claim stamps its own.
    const any = await client.post(`/v1/runs/${id}/version`, { version: null });
    expect(any.status).toBe(200);
    expect(any.body.version).toBeNull();
    expect((await row(id)).version).toBeNull();
    expect((await versionEvents(id)).at(-1)).toEqual({ kind: 'version_moved', actor: 'anonymous', detail: { from: '2026.2', to: null } });
    await endRuns([id]);
  });

  it('lets a move to any version release a run waiting for its version', async () => {
    const id = await createRun();
    await stamp(id, '2026.0', 'queued', true);
    expect((await client.post(`/v1/runs/${id}/version`, { version: null })).body).toMatchObject({ version: null, deferReason: null });
    expect((await row(id)).held_at).toBeNull();
    await endRuns([id]);
  });

  it('refuses a run that ended with 409 and an unknown one with 404, changing nothing', async () => {
    const id = await createRun();
    await stamp(id, '2026.1', 'cancelled');
    const ended = await client.post(`/v1/runs/${id}/version`, { version: '2026.2' });
    expect(ended.status).toBe(409);
    expect(ended.body).toEqual({ code: 'INVALID_STATE', field: null, message: `run ${id} already ended (cancelled); only a run that has not ended can move to another version` });
    expect((await row(id)).version).toBe('2026.1');
    expect(await versionEvents(id)).toEqual([]);

    const unknown = randomUUID();
    expect(await client.post(`/v1/runs/${unknown}/version`, { version: '2026.2' })).toEqual({
      status: 404,
      body: { code: 'NOT_FOUND', field: null, message: `run ${unknown} does not exist` },
    });
    expect((await client.post('/v1/runs/not-a-run/version', { version: '2026.2' })).status).toBe(404);
  });

  it.each([
    ['no version', {}, 'MISSING_FIELD', /^version is required: the version the run moves to, e\.g\. "2026\.12\.03-1", or null/],
    ['an empty version', { version: '' }, 'VALIDATION_FAILED', 'version must be 1 to 200 characters long'],
    ['a version of 201 characters', { version: 'v'.repeat(201) }, 'VALIDATION_FAILED', 'version must be 1 to 200 characters long'],
    ['a version that is no string', { version: 2026 }, 'VALIDATION_FAILED', /^version must be a string/],
    ['a version Postgres cannot store', { version: 'v\u00001' }, 'VALIDATION_FAILED', /^version /],
    ['an unknown field', { version: '2026.2', pinned: true }, 'UNKNOWN_FIELD', /^unknown field "pinned"; accepted fields here are: version$/],
  ])('refuses %s with a 400 naming the field, changing nothing', async (_what, body, code, message) => {
    const id = await createRun();
    await stamp(id, '2026.0', 'queued', true);
    const response = await client.post(`/v1/runs/${id}/version`, body);
    expect(response.status).toBe(400);
    expect(response.body).toEqual({ code, field: code === 'UNKNOWN_FIELD' ? 'pinned' : 'version', message: typeof message === 'string' ? message : expect.stringMatching(message) });
    expect(await row(id)).toMatchObject({ version: '2026.0', defer_reason: 'VERSION_UNAVAILABLE' });
    expect(await versionEvents(id)).toEqual([]);
    await endRuns([id]);
  });

  it('refuses a body that is no object, naming no field', async () => {
    const id = await createRun();
    expect((await client.post(`/v1/runs/${id}/version`, [1])).body).toEqual({ code: 'VALIDATION_FAILED', field: null, message: 'the body must be a JSON object' });
    expect(await versionEvents(id)).toEqual([]);
    await endRuns([id]);
  });

  it("keeps each namespace's runs to itself; workers serve every namespace", async () => {
    const id = await createRun();
    await stamp(id, '2026.1');
    const key = await issueKey(t, 'other-team', 'read,write');
    const other = async (method: string, path: string, body?: unknown) => {
      const response = await fetch(`${kairos.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: response.status, body: (await response.json()) as any };
    };
    expect((await other('GET', '/v1/versions')).body.items).toContainEqual({ queue: 'billing', version: '2026.1', workers: 2, activeRuns: 0, pinnedWaiting: 0 });
    expect((await client.get('/v1/versions')).body.items).toContainEqual({ queue: 'billing', version: '2026.1', workers: 2, activeRuns: 1, pinnedWaiting: 0 });
    expect((await other('POST', `/v1/runs/${id}/version`, { version: '2026.2' })).status).toBe(404);
    expect((await row(id)).version).toBe('2026.1');
    await endRuns([id]);
  });

  describe('over GraphQL', () => {
    const gql = async (query: string, variables: Record<string, unknown> = {}) => (await client.post('/graphql', { query, variables })).body;

    it('lists versions as GET /v1/versions does, and moves a run as POST does', async () => {
      const id = await createRun();
      await stamp(id, '2026.0', 'queued', true);
      const versions = await gql('{ versions { items { queue version workers activeRuns pinnedWaiting } } }');
      expect(versions.errors).toBeUndefined();
      expect(versions.data.versions).toEqual((await client.get('/v1/versions')).body);

      const moved = await gql('mutation($id: ID!, $version: String) { moveRunVersion(id: $id, version: $version) { id version deferReason } }', { id, version: '2026.1' });
      expect(moved.errors).toBeUndefined();
      expect(moved.data.moveRunVersion).toEqual({ id, version: '2026.1', deferReason: null });
      const any = await gql('mutation($id: ID!) { moveRunVersion(id: $id, version: null) { version } }', { id });
      expect(any.data.moveRunVersion).toEqual({ version: null });
      expect((await gql('query($id: ID!) { run(id: $id) { version } }', { id })).data.run).toEqual({ version: null });
      await endRuns([id]);
    });

    it('refuses what REST refuses, with the same code and field', async () => {
      const id = await createRun();
      await stamp(id, '2026.1', 'cancelled');
      for (const [query, code, field, status] of [
        [`mutation { moveRunVersion(id: "${id}") { id } }`, 'MISSING_FIELD', 'version', 400],
        [`mutation { moveRunVersion(id: "${id}", version: "") { id } }`, 'VALIDATION_FAILED', 'version', 400],
        [`mutation { moveRunVersion(id: "${id}", version: "2026.2") { id } }`, 'INVALID_STATE', null, 409],
        [`mutation { moveRunVersion(id: "${randomUUID()}", version: "2026.2") { id } }`, 'NOT_FOUND', null, 404],
      ] as const) {
        const response = await gql(query);
        expect(response.errors, query).toHaveLength(1);
        expect(response.errors[0].extensions, query).toEqual({ code, field, status });
      }
      expect((await row(id)).version).toBe('2026.1');
    });
  });

  it('is what the SDK client lists and moves', async () => {
    const sdk = new KairosClient({ baseUrl: kairos.url });
    const id = await createRun();
    await stamp(id, '2026.1');
    const versions: Version[] = await sdk.versions.list();
    expect(versions).toEqual((await client.get('/v1/versions')).body.items);
    expect(await sdk.runs.moveVersion(id, '2026.2')).toMatchObject({ id, version: '2026.2' });
    expect((await sdk.runs.moveVersion(id, null)).version).toBeNull();
    await expect(sdk.runs.moveVersion(id, '')).rejects.toMatchObject({ status: 400, code: 'VALIDATION_FAILED', field: 'version' });
    await endRuns([id]);
    await expect(sdk.runs.moveVersion(id, '2026.2')).rejects.toMatchObject({ status: 409, code: 'INVALID_STATE' });
  });

  describe('from the CLI', () => {
    const cli = async (...argv: string[]) => {
      const lines: string[] = [];
      const code = await runCli(argv, { line: (l) => lines.push(l) }, { KAIROS_URL: kairos.url });
      return { code, out: lines.join('\n') };
    };

    it('lists the versions as a table or JSON', async () => {
      const id = await createRun();
      await stamp(id, '2026.0', 'queued', true);
      const table = await cli('versions');
      expect(table.code).toBe(0);
      expect(table.out.split('\n')).toEqual([
        expect.stringMatching(/^QUEUE\s+VERSION\s+WORKERS\s+ACTIVE RUNS\s+WAITING$/),
        expect.stringMatching(/^billing\s+2026\.0\s+0\s+1\s+1$/),
        expect.stringMatching(/^billing\s+2026\.1\s+2\s+0\s+0$/),
        expect.stringMatching(/^billing\s+2026\.2\s+1\s+0\s+0$/),
        expect.stringMatching(/^reports\s+2026\.1\s+1\s+0\s+0$/),
      ]);
      expect(JSON.parse((await cli('versions', '--json')).out)).toEqual((await client.get('/v1/versions')).body.items);
      await endRuns([id]);
    });

    it('moves a run to a version or to any, and says when it still waits', async () => {
      const id = await createRun();
      await stamp(id, '2026.0', 'queued', true);
      expect(await cli('runs', 'move-version', id, '2026.3')).toEqual({ code: 0, out: `moved run ${id} (queued) to version 2026.3; it waits until a worker of that version runs` });
      expect(await cli('runs', 'move-version', id, '2026.1')).toEqual({ code: 0, out: `moved run ${id} (queued) to version 2026.1` });
      expect(await cli('runs', 'move-version', id, '--any')).toEqual({ code: 0, out: `moved run ${id} (queued) to any version: a worker of any version may take it next` });
      expect(JSON.parse((await cli('runs', 'move-version', id, '2026.2', '--json')).out)).toMatchObject({ id, version: '2026.2' });
      expect((await row(id)).version).toBe('2026.2');
      await endRuns([id]);
    });

    it('refuses what the API refuses, and a version and --any together or neither', async () => {
      const id = await createRun();
      await expect(cli('runs', 'move-version', id)).rejects.toThrow(/needs either a version or --any .*not neither/);
      await expect(cli('runs', 'move-version', id, '2026.1', '--any')).rejects.toThrow(/not both/);
      await expect(cli('runs', 'move-version')).rejects.toThrow(/needs a run id and a version/);
      await expect(cli('runs', 'move-version', id, 'v'.repeat(201))).rejects.toThrow(/version must be 1 to 200 characters long/);
      await expect(cli('runs', 'move-version', randomUUID(), '2026.1')).rejects.toThrow(/does not exist/);
      await expect(cli('versions', 'extra')).rejects.toThrow(/unexpected "extra"/);
      expect((await row(id)).version).toBeNull();
      await endRuns([id]);
      await expect(cli('runs', 'move-version', id, '2026.1')).rejects.toThrow(/already ended \(cancelled\)/);
    });
  });
});
