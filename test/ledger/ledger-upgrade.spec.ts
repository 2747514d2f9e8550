/**
 * The newest migration on a ledger in use. Runs in every state are made by the ledger as the
 * migrations before the newest left it (through its own statements and worker functions): queued
 * now and later, running on a worker that is gone, succeeded, dead, cancelled, asleep and waiting
 * for a signal, while a subscription listens to their outcomes. After the newest migration every
 * run reads back identically, its story too; Kairos started on the migrated ledger finishes each
 * active run once, each outcome told once; and fsck finds nothing.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import pg from 'pg';
import { newId } from '@kairos/domain';
import { RunRepository, defaultMigrationsDir, fsck, inTransaction, manualRun, migrate, readMigrations, type NewRun } from '@kairos/ledger';
import type { StartedKairos } from '@kairos/process';
import { deleteKeysWithPrefix } from '@kairos/queue';
import { WorkerProtocol } from '../../packages/sdk/src/worker/worker-protocol.js';
import { FAST_TIMINGS, TEST_TRANSPORT, startInProcess, waitFor } from '../support/kairos.js';
import { REDIS_URL, createDatabase, databaseUrl, dropDatabase, uniqueName } from '../support/services.js';

describe('the newest migration on a ledger with runs in every state', () => {
  let name: string;
  let db: pg.Pool;
  let kairos: StartedKairos | undefined;
  const runs = new RunRepository();
  const protocol = new WorkerProtocol();

  beforeEach(async () => {
    name = uniqueName('kairos_upgrade');
    await createDatabase(name);
    db = new pg.Pool({ connectionString: databaseUrl(name), max: 2 });
  });

  afterEach(async () => {
    await kairos?.app.close();
    await db.end();
    await dropDatabase(name);
    if (TEST_TRANSPORT === 'redis') await deleteKeysWithPrefix(REDIS_URL, `kt-${name}`);
  });

  it('reads every run back identically, and Kairos finishes the active ones, each outcome told once', async () => {
    const all = readMigrations(defaultMigrationsDir());
    const newest = all.at(-1)!;
    const client = await db.connect();
    try {
      await migrate(client, all.slice(0, -1));
    } finally {
      client.release();
    }
    const namespaceId = (await db.query(`SELECT id FROM namespaces WHERE name = 'default'`)).rows[0].id as string;
    await db.query(
      `INSERT INTO subscriptions (id, namespace_id, url, events, format, state) VALUES ($1, $2, 'http://127.0.0.1:9/hook', '{run.succeeded,run.failed,run.dead}', 'json', 'active')`,
      [newId(), namespaceId],
    );
    const run = (dueInMs = -1_000): NewRun =>
      manualRun({
        id: newId(),
        namespaceId,
        availableAt: new Date(Date.now() + dueInMs),
        target: { type: 'handler', name: 'noop', queue: 'default' },
        payload: { made: 'before the migration' },
        retry: { maxAttempts: 1, backoff: { type: 'fixed', baseMs: 1_000, maxMs: 1_000, jitter: 0 } },
        timeoutMs: 10_000,
        idempotencyKey: null,
        actor: 'test',
      });
    const made = {
      queued: run(),
      later: run(2_000),
      running: run(),
      succeeded: run(),
      dead: run(),
      cancelled: run(60_000),
      sleeping: run(),
      waiting: run(),
    };
    await inTransaction(db, (tx) => runs.insertRuns(tx, Object.values(made)));
    // A worker of the version Kairos's own worker has: the runs it parked are pinned to it.
    const owner = 'worker-before-the-migration';
    await protocol.register(db, { id: owner, queue: 'default', handlers: ['noop'], version: 'built-in', upgrade: 'pinned', clockOffsetMs: 0 });
    const claims = await protocol.claimMany(db, [made.running, made.succeeded, made.dead, made.sleeping, made.waiting].map((r) => r.id), owner, 1_500);
    const epoch = new Map(claims.map((c) => (c.kind === 'claimed' ? [c.run.id, c.run.leaseEpoch] : ['', 0])));
    const hold = (r: NewRun) => ({ runId: r.id, epoch: epoch.get(r.id)!, owner });
    const { written } = await protocol.finishMany(db, owner, [
      { runId: made.succeeded.id, epoch: epoch.get(made.succeeded.id)!, verdict: { state: 'succeeded', result: { ok: true }, error: null, reasonCode: 'SUCCEEDED', reasonText: null, response: null } },
      { runId: made.dead.id, epoch: epoch.get(made.dead.id)!, verdict: { state: 'dead', result: null, error: { message: 'boom' }, reasonCode: 'HANDLER_ERROR', reasonText: 'boom', response: null } },
    ]);
    expect(written.size).toBe(2);
    expect(await inTransaction(db, (tx) => runs.requestCancel(tx, [made.cancelled.id], 'test', 'CANCELLED_BY_USER', 'cancelled before the migration'))).toEqual([made.cancelled.id]);
    expect(await protocol.sleepRun(db, hold(made.sleeping), 'sleep#1', new Date(Date.now() + 1_500))).toBe(true);
    expect(await protocol.awaitSignal(db, hold(made.waiting), 'go', new Date(Date.now() + 1_500))).toMatchObject({ outcome: 'parked' });

    const ids = Object.values(made).map((r) => r.id);
    const read = async () => {
      const rows = (await db.query(`SELECT id, to_jsonb(r) AS row FROM runs r WHERE id = ANY($1::uuid[]) ORDER BY id`, [ids])).rows;
      const stories = await Promise.all(ids.map((id) => runs.events(db, id)));
      const checkpoints = await runs.checkpointsOf(db, ids);
      return { rows, stories, checkpoints: Object.fromEntries(checkpoints) };
    };
    const before = await read();
    expect(before.rows.map((r) => r.row.state).sort()).toEqual(['cancelled', 'dead', 'queued', 'queued', 'running', 'sleeping', 'succeeded', 'waiting']);

    const upgrading = await db.connect();
    try {
      expect((await migrate(upgrading, all)).applied).toEqual([newest.version]);
    } finally {
      upgrading.release();
    }
    expect(await read()).toEqual(before);

    // Kairos on the migrated ledger: the queued runs start, the lost worker's run is reaped and
    // run again, the sleeper wakes, and the waiting run's wait times out; each runs `noop` to its end.
    const prefix = `kt-${name}`;
    kairos = await startInProcess({
      ...FAST_TIMINGS,
      DATABASE_URL: databaseUrl(name),
      REDIS_URL: TEST_TRANSPORT === 'redis' ? REDIS_URL : '',
      KAIROS_QUEUE_PREFIX: prefix,
      PORT: '0',
      HOST: '127.0.0.1',
      KAIROS_RATE_LIMIT: '0',
    });
    const active = [made.queued, made.later, made.running, made.sleeping, made.waiting].map((r) => r.id);
    const ended = await waitFor(
      async () => {
        const { rows } = await db.query<{ id: string; state: string }>(`SELECT id, state FROM runs WHERE id = ANY($1::uuid[])`, [active]);
        if (rows.every((r) => r.state === 'succeeded')) return rows;
        throw new Error(`still ${JSON.stringify((await db.query(`SELECT id, state, available_at, held_at, defer_reason FROM runs WHERE id = ANY($1::uuid[]) AND state <> 'succeeded'`, [active])).rows)}`);
      },
      'every active run to succeed on the migrated ledger',
      30_000,
    );
    expect(ended).toHaveLength(active.length);

    const told = (await db.query<{ topic: string; aggregate_id: string }>(`SELECT topic, aggregate_id FROM outbox WHERE aggregate_id = ANY($1::uuid[]) AND topic LIKE 'run.%'`, [ids])).rows;
    const count = (topic: string, id: string) => told.filter((e) => e.topic === topic && e.aggregate_id === id).length;
    for (const id of [...active, made.succeeded.id]) expect(count('run.succeeded', id), id).toBe(1);
    expect([count('run.dead', made.dead.id), count('run.failed', made.dead.id)]).toEqual([1, 1]);
    expect(told).toHaveLength(active.length + 3);
    expect(await fsck(db)).toEqual([]);
  }, 60_000);
});
