/**
 * Worker credentials: POST /v1/worker-credentials makes a Postgres login that may call the worker
 * protocol's functions and nothing else, for its namespace and queues. Postgres itself refuses
 * every other action of such a login: reading a table, claiming a run of another namespace,
 * finishing or renewing a run of another queue, registering on another queue. A KairosWorker
 * connected with nothing but the credential (and, on Redis, its ACL user) runs its queue's runs.
 */
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { ApiKeyRepository } from '@kairos/ledger';
import { KairosWorker } from '@kairos/sdk';
import { runInState, useKairos } from '../support/kairos.js';
import { WORKER_PROTOCOL_VERSION } from '../../packages/sdk/src/worker/worker-protocol.js';

const INSUFFICIENT_PRIVILEGE = '42501';

describe('worker credentials', () => {
  const { t, client } = useKairos();
  const clients: pg.Client[] = [];

  afterAll(async () => {
    await Promise.all(clients.map((c) => c.end().catch(() => undefined)));
    // Roles belong to the Postgres cluster, not to the test database: drop what a test left.
    const { rows } = await t.db.query<{ role: string }>(`SELECT role_name AS role FROM kairos_worker.credentials`);
    for (const { role } of rows) await client.delete(`/v1/worker-credentials/${role}`);
  });

  async function connect(url: string): Promise<pg.Client> {
    const c = new pg.Client({ connectionString: url });
    c.on('error', () => undefined);
    await c.connect();
    clients.push(c);
    return c;
  }

  /** A queued, due run of `namespaceId` on `queue`, marked enqueued (so the relay leaves it be) but with no job: only the test claims it. */
  async function queuedRun(namespaceId: string, queue: string): Promise<string> {
    const { rows } = await t.db.query<{ id: string }>(
      `INSERT INTO runs (id, namespace_id, origin, scheduled_for, available_at, state, max_attempts, target, retry, timeout_ms, enqueued_at)
       VALUES (gen_random_uuid(), $1, 'manual', now(), now() - interval '1 second', 'queued', 1, $2, '{}', 60000, now()) RETURNING id`,
      [namespaceId, JSON.stringify({ type: 'handler', name: 'resize', queue })],
    );
    return rows[0]!.id;
  }

  const verdict = (id: string, epoch: number) =>
    JSON.stringify([{ id, epoch, state: 'succeeded', result: 'true', error: null, reason_code: 'SUCCEEDED', reason_text: null, response: null }]);

  it('answers the URLs a worker connects with, and refuses a body without queues', async () => {
    expect((await client.post('/v1/worker-credentials', {})).body).toMatchObject({ code: 'MISSING_FIELD', field: 'queues' });
    expect((await client.post('/v1/worker-credentials', { queues: ['bad queue'] })).body).toMatchObject({ code: 'VALIDATION_FAILED', field: 'queues[0]' });
    expect((await client.post('/v1/worker-credentials', { queues: ['media'], admin: true })).body).toMatchObject({ code: 'UNKNOWN_FIELD' });
    expect((await t.db.query(`SELECT count(*)::int AS n FROM kairos_worker.credentials`)).rows[0].n).toBe(0);

    const granted = await client.post('/v1/worker-credentials', { queues: ['media', 'media', 'thumbs'] });
    expect(granted.status).toBe(201);
    expect(granted.body).toMatchObject({ namespace: 'default', queues: ['media', 'thumbs'], protocol: { oldest: 1, newest: WORKER_PROTOCOL_VERSION } });
    expect(new URL(granted.body.databaseUrl).username).toBe(granted.body.role);
    if (t.transport.kind === 'redis') {
      expect(granted.body.redis).toMatchObject({ user: granted.body.role, applied: true });
      expect(granted.body.redis.command).toContain(`~${t.redisPrefix}:kairos-runs.media:*`);
    } else expect(granted.body.redis).toBeNull();

    const listed = await client.get('/v1/worker-credentials');
    expect(listed.body.items).toEqual([expect.objectContaining({ role: granted.body.role, queues: ['media', 'thumbs'] })]);
    expect(JSON.stringify(listed.body)).not.toContain(new URL(granted.body.databaseUrl).password);
  });

  it('lets the login call the protocol for its own runs, and Postgres refuses everything else', async () => {
    const granted = await client.post('/v1/worker-credentials', { queues: ['media'] });
    const w = await connect(granted.body.databaseUrl);
    const namespaceId = (await t.db.query<{ id: string }>(`SELECT id FROM namespaces WHERE name = 'default'`)).rows[0]!.id;
    const otherNamespaceId = await new ApiKeyRepository().ensureNamespace(t.db, 'other');
    const own = await queuedRun(namespaceId, 'media');
    const ownToo = await queuedRun(namespaceId, 'media');
    const otherQueue = await queuedRun(namespaceId, 'reports');
    const otherNamespace = await queuedRun(otherNamespaceId, 'media');

    for (const statement of [
      `SELECT * FROM runs`,
      `SELECT * FROM api_keys`,
      `SELECT signing_secret FROM namespaces`,
      `UPDATE schedules SET name = 'taken'`,
      `DELETE FROM run_events`,
      `SELECT * FROM kairos_worker.credentials`,
      `INSERT INTO kairos_worker.credentials (role_name, namespace_id, queues, created_by) VALUES (session_user, '${otherNamespaceId}', '{default}', 'x')`,
    ]) {
      await expect(w.query(statement), statement).rejects.toMatchObject({ code: INSUFFICIENT_PRIVILEGE });
    }
    expect((await w.query(`SELECT kairos_worker.protocol_version() AS v`)).rows[0].v).toBe(WORKER_PROTOCOL_VERSION);

    // Another namespace's run, alone or in a batch with its own: refused, and nothing claimed.
    await expect(w.query(`SELECT * FROM kairos_worker.claim_runs('intruder', $1::uuid[], 30000)`, [[otherNamespace]])).rejects.toMatchObject({
      code: INSUFFICIENT_PRIVILEGE,
      message: expect.stringContaining(otherNamespace),
    });
    await expect(w.query(`SELECT * FROM kairos_worker.claim_runs('intruder', $1::uuid[], 30000)`, [[ownToo, otherQueue]])).rejects.toMatchObject({
      code: INSUFFICIENT_PRIVILEGE,
    });
    const states = await t.db.query<{ id: string; state: string }>(`SELECT id, state FROM runs WHERE id = ANY($1::uuid[])`, [[ownToo, otherQueue, otherNamespace]]);
    expect(states.rows.map((r) => r.state)).toEqual(['queued', 'queued', 'queued']);

    // A run of another queue, held by the server's own worker: the login can neither finish nor renew it.
    const held = await t.db.query(`SELECT * FROM kairos_worker.claim_runs('server-worker', $1::uuid[], 30000)`, [[otherQueue]]);
    const epoch = held.rows[0].leaseEpoch as number;
    await expect(w.query(`SELECT * FROM kairos_worker.finish_runs('server-worker', $1::json)`, [verdict(otherQueue, epoch)])).rejects.toMatchObject({
      code: INSUFFICIENT_PRIVILEGE,
    });
    await expect(
      w.query(`SELECT * FROM kairos_worker.renew_leases('server-worker', $1::uuid[], $2::bigint[], 30000)`, [[otherQueue], [epoch]]),
    ).rejects.toMatchObject({ code: INSUFFICIENT_PRIVILEGE });
    await expect(w.query(`SELECT kairos_worker.register_worker('w', 'reports', '{resize}', 'x', NULL)`)).rejects.toMatchObject({ code: INSUFFICIENT_PRIVILEGE });
    expect((await t.db.query(`SELECT state, lease_owner FROM runs WHERE id = $1`, [otherQueue])).rows[0]).toEqual({ state: 'running', lease_owner: 'server-worker' });

    // Its own run: claimed, renewed and finished through the functions.
    const claimed = await w.query(`SELECT * FROM kairos_worker.claim_runs('granted-worker', $1::uuid[], 30000)`, [[own]]);
    expect(claimed.rows).toEqual([expect.objectContaining({ id: own, namespaceId, leaseEpoch: 1 })]);
    const renewed = await w.query(`SELECT * FROM kairos_worker.renew_leases('granted-worker', $1::uuid[], $2::bigint[], 30000)`, [[own], [1]]);
    expect(renewed.rows).toEqual([{ id: own, epoch: 1, cancelRequested: false, cancelRequestedBy: null }]);
    expect((await w.query(`SELECT id FROM kairos_worker.finish_runs('granted-worker', $1::json)`, [verdict(own, 1)])).rows).toEqual([{ id: own }]);
    expect((await t.db.query(`SELECT state, finished_by FROM runs WHERE id = $1`, [own])).rows[0]).toEqual({ state: 'succeeded', finished_by: 'granted-worker' });
  });

  it("runs its queue's runs in a KairosWorker that holds nothing but the credential, until it is revoked", async () => {
    const granted = await client.post('/v1/worker-credentials', { queues: ['media'] });
    const worker = new KairosWorker({
      databaseUrl: granted.body.databaseUrl,
      redisUrl: granted.body.redis?.url ?? null,
      queuePrefix: t.redisPrefix,
      queue: 'media',
      concurrency: 4,
      version: 'granted',
      handlers: { resize: async ({ payload }) => ({ resized: payload }) },
      logger: { log: () => undefined, warn: () => undefined, error: () => undefined },
    });
    await worker.start();
    try {
      const created = await client.post('/v1/runs', { target: { type: 'handler', name: 'resize', queue: 'media' }, payload: { width: 64 } });
      expect(created.status).toBe(201);
      const run = await runInState(client, created.body.id, 'succeeded');
      expect(run.result).toEqual({ resized: { width: 64 } });
      const workers = await client.get('/v1/workers');
      expect(workers.body.items).toContainEqual(expect.objectContaining({ id: worker.id, queue: 'media', handlers: ['resize'], version: 'granted' }));
    } finally {
      await worker.stop();
    }

    expect((await client.delete(`/v1/worker-credentials/${granted.body.role}`)).status).toBe(204);
    expect((await client.delete(`/v1/worker-credentials/${granted.body.role}`)).status).toBe(404);
    await expect(connect(granted.body.databaseUrl)).rejects.toThrow(/password authentication failed|does not exist|authentication/);
  });
});
