/**
 * Deploying new code while runs are in flight. A run records the version of the worker that claimed
 * it; once it stored a checkpoint it is pinned to that version. In the ledger: the claim's decision
 * for each kind of run and worker (taken, taken over by an `auto` worker, left for a live worker of
 * its version, held VERSION_UNAVAILABLE while none runs), the release when one registers, or by the
 * limits loop, or by an operator's move to another version. With SDK workers of this process: a
 * durable run whose version stopped waits, nothing of it running on the new version, and finishes
 * when its version returns, its first step run once; an `auto` worker takes it over; a run without
 * checkpoints is retried by the new version; and a rolling deploy of three workers under 500 durable
 * runs finishes every run once, each step on its run's version, holding none.
 */
import { describe, expect, it, afterEach } from 'vitest';
import { KairosWorker, type KairosHandlerFunction } from '@kairos/sdk';
import { RunRepository } from '@kairos/ledger';
import { ENDED_STATES, runInState, sleep, useKairos, waitFor } from '../support/kairos.js';

type Upgrade = 'pinned' | 'auto';

describe('versions of the code in flight, in the ledger', () => {
  const { t, client } = useKairos();
  const runs = new RunRepository();
  let queues = 0;

  /** Registers a worker through the protocol, as an SDK worker of protocol 6 does. */
  const register = async (id: string, queue: string, version: string, upgrade: Upgrade) => {
    await t.db.query(`SELECT kairos_worker.register_worker_v2($1, $2, '{t}', $3, NULL, $4)`, [id, queue, version, upgrade]);
  };

  /** A queued run due now on a queue no worker consumes, claimed before by `version` (null: never), with a stored step or not. */
  const runOn = async (queue: string, version: string | null, checkpoint: boolean): Promise<string> => {
    const created = await client.post('/v1/runs', { target: { type: 'handler', name: 't', queue } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const id = created.body.id as string;
    await t.db.query(`UPDATE runs SET version = $2, available_at = now() - interval '1 second' WHERE id = $1`, [id, version]);
    if (checkpoint) {
      await t.db.query(`INSERT INTO run_checkpoints (run_id, name, kind, state, result, lease_epoch, finished_at) VALUES ($1, 'a', 'step', 'succeeded', '1', 1, now())`, [id]);
    }
    return id;
  };

  const claim = async (owner: string, id: string) =>
    (await t.db.query(`SELECT id FROM kairos_worker.claim_runs_v2($1, ARRAY[$2]::uuid[], 30000)`, [owner, id])).rowCount;

  const row = async (id: string) =>
    (
      await t.db.query<{ state: string; version: string | null; held: boolean; deferReason: string | null; dueInMs: number }>(
        `SELECT state, version, held_at IS NOT NULL AS held, defer_reason AS "deferReason",
                (extract(epoch FROM available_at - now()) * 1000)::float8 AS "dueInMs" FROM runs WHERE id = $1`,
        [id],
      )
    ).rows[0]!;

  const versionEvents = async (id: string) =>
    (
      await t.db.query<{ kind: string; detail: Record<string, unknown> }>(
        `SELECT kind, detail FROM run_events WHERE run_id = $1 AND kind IN ('upgraded', 'held', 'released', 'version_moved') ORDER BY id`,
        [id],
      )
    ).rows;

  it.each([
    ['v1', 'pinned', 'v1', true],
    ['v1', 'pinned', 'v2', false],
    ['v1', 'pinned', null, true],
    ['v1', 'auto', 'v2', true],
    ['v1', 'auto', null, true],
  ] as const)('kairos_worker_serves: a %s worker (%s) serves a run of %s: %s', async (worker, upgrade, run, serves) => {
    const { rows } = await t.db.query(`SELECT kairos_worker_serves($1, $2, $3) AS serves`, [worker, upgrade, run]);
    expect(rows[0].serves).toBe(serves);
  });

  interface ClaimCase {
    name: string;
    /** The claiming worker; null for an owner that never registered. */
    claimer: { version: string; upgrade: Upgrade } | null;
    run: { version: string | null; checkpoint: boolean };
    /** The queue's other workers: live, stopped (said goodbye) or silent (heartbeats a minute overdue). */
    others: { version: string; upgrade: Upgrade; state: 'live' | 'stopped' | 'silent' }[];
    outcome: 'claimed' | 'left for another worker' | 'held';
    version: string | null;
    events: string[];
  }

  it.each<ClaimCase>([
    { name: "a first claim stamps the claimer's version", claimer: { version: 'v2', upgrade: 'pinned' }, run: { version: null, checkpoint: false }, others: [], outcome: 'claimed', version: 'v2', events: [] },
    {
      name: "a run without checkpoints is not pinned: it takes the claimer's version",
      claimer: { version: 'v2', upgrade: 'pinned' },
      run: { version: 'v1', checkpoint: false },
      others: [{ version: 'v1', upgrade: 'pinned', state: 'live' }],
      outcome: 'claimed',
      version: 'v2',
      events: [],
    },
    { name: "a run pinned to the claimer's version is claimed", claimer: { version: 'v1', upgrade: 'pinned' }, run: { version: 'v1', checkpoint: true }, others: [], outcome: 'claimed', version: 'v1', events: [] },
    {
      name: 'an auto worker takes a run pinned elsewhere over',
      claimer: { version: 'v2', upgrade: 'auto' },
      run: { version: 'v1', checkpoint: true },
      others: [{ version: 'v1', upgrade: 'pinned', state: 'live' }],
      outcome: 'claimed',
      version: 'v2',
      events: ['upgraded'],
    },
    {
      name: 'a run pinned elsewhere is left for a live worker of its version',
      claimer: { version: 'v2', upgrade: 'pinned' },
      run: { version: 'v1', checkpoint: true },
      others: [{ version: 'v1', upgrade: 'pinned', state: 'live' }],
      outcome: 'left for another worker',
      version: 'v1',
      events: [],
    },
    {
      name: 'a run pinned elsewhere is left for a live auto worker of its queue',
      claimer: { version: 'v2', upgrade: 'pinned' },
      run: { version: 'v1', checkpoint: true },
      others: [{ version: 'v3', upgrade: 'auto', state: 'live' }],
      outcome: 'left for another worker',
      version: 'v1',
      events: [],
    },
    {
      name: 'a run pinned to a version whose worker said goodbye is held',
      claimer: { version: 'v2', upgrade: 'pinned' },
      run: { version: 'v1', checkpoint: true },
      others: [{ version: 'v1', upgrade: 'pinned', state: 'stopped' }],
      outcome: 'held',
      version: 'v1',
      events: ['held'],
    },
    {
      name: 'a run pinned to a version whose worker fell silent is held',
      claimer: { version: 'v2', upgrade: 'pinned' },
      run: { version: 'v1', checkpoint: true },
      others: [{ version: 'v1', upgrade: 'pinned', state: 'silent' }, { version: 'v3', upgrade: 'auto', state: 'stopped' }],
      outcome: 'held',
      version: 'v1',
      events: ['held'],
    },
    { name: 'an owner that never registered claims as before', claimer: null, run: { version: 'v1', checkpoint: true }, others: [], outcome: 'claimed', version: 'v1', events: [] },
  ])('claim: $name', async (c) => {
    const queue = `table-${++queues}`;
    const owner = `claimer-${queues}`;
    // The handler must be registered on the queue for the API to take the run.
    if (c.claimer) await register(owner, queue, c.claimer.version, c.claimer.upgrade);
    else await register(`registrar-${queues}`, queue, 'v0', 'pinned');
    for (const [i, other] of c.others.entries()) {
      const id = `other-${queues}-${i}`;
      await register(id, queue, other.version, other.upgrade);
      if (other.state === 'stopped') await t.db.query(`SELECT kairos_worker.stop_worker($1)`, [id]);
      if (other.state === 'silent') await t.db.query(`UPDATE workers SET last_seen_at = now() - interval '61 seconds' WHERE id = $1`, [id]);
    }
    const id = await runOn(queue, c.run.version, c.run.checkpoint);

    expect(await claim(owner, id)).toBe(c.outcome === 'claimed' ? 1 : 0);
    const after = await row(id);
    expect(after.version).toBe(c.version);
    expect((await versionEvents(id)).map((e) => e.kind)).toEqual(c.events);
    if (c.outcome === 'claimed') expect(after.state).toBe('running');
    if (c.outcome === 'left for another worker') {
      expect(after).toMatchObject({ state: 'queued', held: false, deferReason: null });
      // Due again shortly: its job comes back to the queue's workers.
      expect(after.dueInMs).toBeGreaterThan(100);
      expect(after.dueInMs).toBeLessThanOrEqual(250);
    }
    if (c.outcome === 'held') {
      expect(after).toMatchObject({ state: 'queued', held: true, deferReason: 'VERSION_UNAVAILABLE' });
      expect((await versionEvents(id))[0]!.detail).toEqual({ deferReason: 'VERSION_UNAVAILABLE', version: 'v1' });
      // Its worker ends the job: a held run is not due until released.
      expect((await t.db.query(`SELECT "dueInMs" FROM kairos_worker.run_snapshot($1)`, [id])).rows[0].dueInMs).toBeNull();
    }
    if (c.events.includes('upgraded')) expect((await versionEvents(id))[0]!.detail).toEqual({ from: 'v1', to: 'v2' });
  });

  /** A run of a fresh queue held for v1 by a v2 claimer, v1's worker having said goodbye. */
  const heldRun = async () => {
    const queue = `held-${++queues}`;
    await register(`v2-${queues}`, queue, 'v2', 'pinned');
    await register(`v1-${queues}`, queue, 'v1', 'pinned');
    await t.db.query(`SELECT kairos_worker.stop_worker($1)`, [`v1-${queues}`]);
    const id = await runOn(queue, 'v1', true);
    expect(await claim(`v2-${queues}`, id)).toBe(0);
    expect(await row(id)).toMatchObject({ held: true, deferReason: 'VERSION_UNAVAILABLE' });
    return { id, queue, n: queues };
  };

  it.each([
    ['a worker of its version registers', 'v1', 'pinned'],
    ['an auto worker of its queue registers', 'v7', 'auto'],
  ] as const)('releases a held run when %s', async (_, version, upgrade) => {
    const { id, queue, n } = await heldRun();
    await register(`returning-${n}`, queue, version, upgrade);
    expect(await row(id)).toMatchObject({ held: false, deferReason: null, version: 'v1' });
    expect((await versionEvents(id)).map((e) => [e.kind, e.detail])).toEqual([
      ['held', { deferReason: 'VERSION_UNAVAILABLE', version: 'v1' }],
      ['released', { version: 'v1' }],
    ]);
    // The relay hands it over again: enqueued within a few passes.
    await waitFor(async () => ((await t.db.query(`SELECT enqueued_at FROM runs WHERE id = $1`, [id])).rows[0].enqueued_at ? true : undefined), 'the relay to hand the run over');
  });

  it('keeps a run held while a worker of another version registers pinned', async () => {
    const { id, queue, n } = await heldRun();
    await register(`another-${n}`, queue, 'v3', 'pinned');
    expect(await row(id)).toMatchObject({ held: true, deferReason: 'VERSION_UNAVAILABLE' });
  });

  it('releases a held run by the limits loop when its version came back without registering (a registration racing the hold)', async () => {
    const { id, n } = await heldRun();
    await t.db.query(`UPDATE workers SET stopped_at = NULL, last_seen_at = now() WHERE id = $1`, [`v1-${n}`]);
    await waitFor(async () => ((await row(id)).held ? undefined : true), 'the limits loop to release the run', 10_000);
    expect((await versionEvents(id)).map((e) => e.kind)).toEqual(['held', 'released']);
  });

  it('moves a run to another version: recorded, and released when a live worker serves the new one; refused for an ended run', async () => {
    const { id, n } = await heldRun();
    // v3 has no worker: the run stays held.
    expect(await runs.moveVersion(t.db, await namespaceOf(id), id, 'v3', 'api:test')).toEqual({ kind: 'moved', from: 'v1', to: 'v3', released: false });
    expect(await row(id)).toMatchObject({ held: true, version: 'v3' });
    expect(await runs.moveVersion(t.db, await namespaceOf(id), id, 'v2', 'api:test')).toEqual({ kind: 'moved', from: 'v3', to: 'v2', released: true });
    expect(await row(id)).toMatchObject({ held: false, deferReason: null, version: 'v2' });
    expect((await versionEvents(id)).map((e) => [e.kind, e.detail])).toEqual([
      ['held', { deferReason: 'VERSION_UNAVAILABLE', version: 'v1' }],
      ['version_moved', { from: 'v1', to: 'v3' }],
      ['version_moved', { from: 'v3', to: 'v2' }],
      ['released', { version: 'v2' }],
    ]);
    // The claimer of v2 takes it now; to any version (null), the next claim stamps its own.
    expect(await claim(`v2-${n}`, id)).toBe(1);
    expect(await runs.moveVersion(t.db, await namespaceOf(id), id, null, 'api:test')).toEqual({ kind: 'moved', from: 'v2', to: null, released: false });
    await t.db.query(`UPDATE runs SET state = 'succeeded', finished_at = now(), reason_code = 'OK', lease_owner = NULL WHERE id = $1`, [id]);
    expect(await runs.moveVersion(t.db, await namespaceOf(id), id, 'v9', 'api:test')).toEqual({ kind: 'ended', state: 'succeeded' });
    expect(await row(id)).toMatchObject({ version: null });
    expect(await runs.moveVersion(t.db, await namespaceOf(id), '01900000-0000-7000-8000-000000000000', 'v9', 'api:test')).toEqual({ kind: 'not_found' });
    expect(await runs.moveVersion(t.db, '01900000-0000-7000-8000-000000000000', id, 'v9', 'api:test')).toEqual({ kind: 'not_found' });
    expect(await runs.moveVersion(t.db, await namespaceOf(id), 'not-a-uuid', 'v9', 'api:test')).toEqual({ kind: 'not_found' });
  });

  it('counts a stopped worker out at once, and its heartbeat does not bring it back; registering again does', async () => {
    await register('goodbye', 'goodbyes', 'v1', 'pinned');
    const live = async () =>
      (await t.db.query(`SELECT kairos_worker_live(last_seen_at, stopped_at) AS live, upgrade FROM workers WHERE id = 'goodbye'`)).rows[0];
    expect(await live()).toEqual({ live: true, upgrade: 'pinned' });
    await t.db.query(`SELECT kairos_worker.stop_worker('goodbye')`);
    await t.db.query(`SELECT kairos_worker.touch_worker('goodbye', NULL)`);
    expect((await live()).live).toBe(false);
    await register('goodbye', 'goodbyes', 'v1', 'auto');
    expect(await live()).toEqual({ live: true, upgrade: 'auto' });
    // Protocol 1's registration leaves runs of other versions to their own.
    await t.db.query(`SELECT kairos_worker.register_worker('goodbye', 'goodbyes', '{t}', 'v1', NULL)`);
    expect(await live()).toEqual({ live: true, upgrade: 'pinned' });
  });

  it('serves protocol versions 1 to 6', async () => {
    expect((await t.db.query(`SELECT * FROM kairos_worker.protocol_versions()`)).rows[0]).toEqual({ oldest: 1, newest: 6 });
  });

  const namespaceOf = async (id: string) => (await t.db.query(`SELECT namespace_id FROM runs WHERE id = $1`, [id])).rows[0].namespace_id as string;
});

describe('deploying new code while durable runs are in flight, with SDK workers', () => {
  const { t, client } = useKairos();
  const running: KairosWorker[] = [];
  /** Every execution of a step's body, as `<run>/<step>` → the versions that ran it, in order. */
  const executions = new Map<string, string[]>();
  const errors: string[] = [];

  const executed = (runId: string, step: string, version: string) => {
    const key = `${runId}/${step}`;
    executions.set(key, [...(executions.get(key) ?? []), version]);
  };

  /** A step, a sleep, a step: each step records which version ran it. */
  const handlers = (version: string): Record<string, KairosHandlerFunction> => ({
    durable: async (ctx) => {
      const a = await ctx.step('a', () => {
        executed(ctx.runId, 'a', version);
        return version;
      });
      await ctx.sleep((ctx.payload as { sleep: string }).sleep);
      const b = await ctx.step('b', () => {
        executed(ctx.runId, 'b', version);
        return version;
      });
      return { a, b };
    },
    flaky: async (ctx) => {
      executed(ctx.runId, `attempt-${ctx.attempt}`, version);
      if (ctx.attempt === 1) throw new Error('the first attempt fails');
      return version;
    },
  });

  const start = async (queue: string, version: string, upgrade: Upgrade = 'pinned', concurrency = 16): Promise<KairosWorker> => {
    const env = t.env();
    const worker = new KairosWorker({
      databaseUrl: env.DATABASE_URL!,
      redisUrl: env.REDIS_URL || null,
      queuePrefix: env.KAIROS_QUEUE_PREFIX!,
      queue,
      version,
      upgrade,
      concurrency,
      leaseTtlMs: 3_000,
      shutdownGraceMs: 3_000,
      handlers: handlers(version),
      logger: { log: () => undefined, warn: () => undefined, error: (m) => errors.push(`${version}: ${m}`) },
    });
    await worker.start();
    running.push(worker);
    return worker;
  };

  const stop = async (worker: KairosWorker) => {
    await worker.stop();
    running.splice(running.indexOf(worker), 1);
  };

  afterEach(async () => {
    await Promise.all(running.splice(0).map((w) => w.stop()));
    expect(errors).toEqual([]);
  });

  const durable = async (queue: string, sleepFor = '1s') => {
    const created = await client.post('/v1/runs', { target: { type: 'handler', name: 'durable', queue }, payload: { sleep: sleepFor } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    return created.body.id as string;
  };

  const dbRow = async (id: string) =>
    (await t.db.query(`SELECT state, version, held_at IS NOT NULL AS held, defer_reason AS "deferReason" FROM runs WHERE id = $1`, [id])).rows[0];
  const eventKinds = async (id: string) => ((await client.get(`/v1/runs/${id}/events`)).body.items as { kind: string }[]).map((e) => e.kind);

  it('keeps a pinned run waiting while its version is away, runs nothing of it on the new version, and finishes it when its version returns', async () => {
    const v1 = await start('pinned', 'v1');
    const id = await durable('pinned');
    await runInState(client, id, 'sleeping', 15_000);
    await stop(v1);
    await start('pinned', 'v2');
    // The sleep ends; v2 is handed the run, and holds it for v1: queued, its sleep over.
    await waitFor(async () => ((await dbRow(id)).held ? true : undefined), 'the run to be held for v1', 15_000);
    const waiting = (await client.get(`/v1/runs/${id}`)).body;
    expect(waiting).toMatchObject({ state: 'queued', deferReason: 'VERSION_UNAVAILABLE', version: 'v1' });
    await sleep(1_000);
    expect(await dbRow(id)).toMatchObject({ state: 'queued', held: true, deferReason: 'VERSION_UNAVAILABLE', version: 'v1' });
    expect(executions.get(`${id}/b`)).toBeUndefined();

    await start('pinned', 'v1');
    const done = await runInState(client, id, ENDED_STATES, 15_000);
    expect(done).toMatchObject({ state: 'succeeded', result: { a: 'v1', b: 'v1' }, version: 'v1' });
    expect(executions.get(`${id}/a`)).toEqual(['v1']);
    expect(executions.get(`${id}/b`)).toEqual(['v1']);
    const kinds = await eventKinds(id);
    expect(kinds.filter((k) => k === 'held' || k === 'released')).toEqual(['held', 'released']);
  }, 60_000);

  it('lets an auto worker take a pinned run over, pinning it to its own version', async () => {
    const v1 = await start('upgrading', 'v1');
    const id = await durable('upgrading');
    await runInState(client, id, 'sleeping', 15_000);
    await stop(v1);
    await start('upgrading', 'v2', 'auto');
    const done = await runInState(client, id, ENDED_STATES, 15_000);
    expect(done).toMatchObject({ state: 'succeeded', result: { a: 'v1', b: 'v2' }, version: 'v2' });
    expect(executions.get(`${id}/a`)).toEqual(['v1']);
    expect(executions.get(`${id}/b`)).toEqual(['v2']);
    const events = (await client.get(`/v1/runs/${id}/events`)).body.items as { kind: string; detail: Record<string, unknown> }[];
    expect(events.filter((e) => e.kind === 'upgraded').map((e) => e.detail)).toEqual([{ from: 'v1', to: 'v2' }]);
    expect(events.map((e) => e.kind)).not.toContain('held');
  }, 60_000);

  it('does not pin a run without checkpoints: a worker of the new version retries it', async () => {
    const v1 = await start('plain', 'v1');
    const created = await client.post('/v1/runs', {
      target: { type: 'handler', name: 'flaky', queue: 'plain' },
      retry: { maxAttempts: 3, backoff: { type: 'fixed', base: '1s' } },
    });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    await waitFor(async () => (executions.get(`${id}/attempt-1`) ? true : undefined), 'the first attempt');
    await stop(v1);
    await start('plain', 'v2');
    const done = await runInState(client, id, ENDED_STATES, 15_000);
    expect(done).toMatchObject({ state: 'succeeded', result: 'v2', attempt: 2, version: 'v2' });
    expect(executions.get(`${id}/attempt-1`)).toEqual(['v1']);
    expect(executions.get(`${id}/attempt-2`)).toEqual(['v2']);
    expect(await eventKinds(id)).not.toContain('held');
  }, 60_000);

  it("rolls three v1 workers over to v2 under 500 durable runs: every run once, each step on its run's version, none held", async () => {
    const queue = 'rolling';
    const v1 = [await start(queue, 'v1', 'pinned', 64), await start(queue, 'v1', 'pinned', 64), await start(queue, 'v1', 'pinned', 64)];
    const ids: string[] = [];
    const wave = async () => {
      const items = Array.from({ length: 100 }, () => ({ target: { type: 'handler', name: 'durable', queue }, payload: { sleep: '700ms' } }));
      const { status, body } = await client.post('/v1/runs/batch', { items });
      expect(status).toBe(200);
      ids.push(...(body.items as { id: string }[]).map((r) => r.id));
    };
    await wave();
    for (const old of v1.slice(0, 2)) {
      await start(queue, 'v2', 'pinned', 64);
      await stop(old);
      await wave();
    }
    await start(queue, 'v2', 'pinned', 64);
    await wave();
    await wave();
    // An operator stops the last v1 worker once no run needs v1.
    await waitFor(
      async () => ((await t.db.query(`SELECT count(*)::int AS n FROM runs WHERE version = 'v1' AND state IN ('queued', 'running', 'sleeping', 'waiting')`)).rows[0].n === 0 ? true : undefined),
      'the v1 runs to end',
      30_000,
      200,
    );
    await stop(v1[2]!);
    await waitFor(
      async () => ((await t.db.query(`SELECT count(*)::int AS n FROM runs WHERE id = ANY($1::uuid[]) AND state = 'succeeded'`, [ids])).rows[0].n === ids.length ? true : undefined),
      'every run to succeed',
      30_000,
      200,
    );
    expect(ids).toHaveLength(500);
    const { rows } = await t.db.query<{ id: string; version: string; result: { a: string; b: string } }>(`SELECT id, version, result FROM runs WHERE id = ANY($1::uuid[])`, [ids]);
    const byVersion = { v1: 0, v2: 0 } as Record<string, number>;
    for (const run of rows) {
      // Each step ran once, both on the run's version.
      expect(executions.get(`${run.id}/a`)).toEqual([run.version]);
      expect(executions.get(`${run.id}/b`)).toEqual([run.version]);
      expect(run.result).toEqual({ a: run.version, b: run.version });
      byVersion[run.version] = (byVersion[run.version] ?? 0) + 1;
    }
    expect(byVersion.v1).toBeGreaterThan(0);
    expect(byVersion.v2).toBeGreaterThan(0);
    expect(byVersion.v1! + byVersion.v2!).toBe(500);
    // A live worker of v1 ran throughout, so no run waited for its version.
    expect((await t.db.query(`SELECT count(*)::int AS n FROM run_events WHERE run_id = ANY($1::uuid[]) AND kind = 'held'`, [ids])).rows[0].n).toBe(0);
  }, 90_000);
});
