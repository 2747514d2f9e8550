/**
 * Retention: with a retention of a few seconds the leader prunes finished runs with their events
 * and ticks, run-less ticks and published outbox rows, keeps dead letters until they are
 * republished, and leaves a ledger fsck finds clean; it prunes events past KAIROS_EVENT_RETENTION
 * (whose ids are then no longer deduped) and keeps the fresh ones. A second test times the pruning
 * of many finished runs (KAIROS_TEST_PRUNE_RUNS, 20,000 by default); a third prunes events batch by batch.
 */
import { describe, expect, it } from 'vitest';
import { newId } from '@kairos/domain';
import { RetentionRepository, fsck } from '@kairos/ledger';
import { api, runInState, sleepUntil, useKairos, useTestEnvironment, waitFor } from '../support/kairos.js';

const RETENTION_MS = 3_000;
/** How far past the retention a row may linger: the pruner's interval plus a busy machine. */
const SLACK_MS = 2_000;

describe('retention on a running cluster', () => {
  const { t, kairos } = useKairos({
    env: {
      KAIROS_RETENTION: `${RETENTION_MS}ms`,
      KAIROS_DEAD_LETTER_RETENTION: '1h',
      KAIROS_EVENT_RETENTION: '1h',
      KAIROS_RETENTION_INTERVAL: '200ms',
      KAIROS_RETENTION_BATCH: '5',
    },
  });

  it('prunes events received before KAIROS_EVENT_RETENTION, more than a batch of them, and keeps the fresh ones; a pruned id is new again', async () => {
    const client = api(kairos.url);
    const schedule = await client.post('/v1/schedules', { name: 'on-paid', on: { event: 'order.paid' }, target: { type: 'handler', name: 'noop' } });
    expect(schedule.status).toBe(201);
    const items = [...Array.from({ length: 7 }, (_, i) => ({ name: 'order.paid', id: `old-${i}` })), { name: 'order.paid', id: 'fresh' }];
    const sent = await client.post('/v1/events/batch', { items });
    expect(sent.status).toBe(200);
    const oldRuns = (sent.body.items as { id: string; runs: string[] }[]).filter((e) => e.id.startsWith('old-')).flatMap((e) => e.runs);
    expect(oldRuns).toHaveLength(7);
    // Received two hours ago, past the event retention (the runs they started are not: they follow KAIROS_RETENTION).
    await t.db.query(`UPDATE events SET received_at = now() - interval '2 hours' WHERE id LIKE 'old-%'`);

    await waitFor(async () => ((await t.db.query(`SELECT count(*)::int AS n FROM events WHERE id LIKE 'old-%'`)).rows[0].n === 0 ? true : undefined), 'the old events to be pruned');
    expect((await t.db.query(`SELECT id FROM events`)).rows).toEqual([{ id: 'fresh' }]);
    expect((await client.get('/v1/events/old-0')).status).toBe(404);
    expect((await client.get('/v1/events')).body.items.map((e: { id: string }) => e.id)).toEqual(['fresh']);

    // Within the retention an id is deduped; past it, the same id is a new event that starts its runs again.
    expect((await client.post('/v1/events', { name: 'order.paid', id: 'fresh' })).body).toMatchObject({ id: 'fresh', deduped: true });
    const again = await client.post('/v1/events', { name: 'order.paid', id: 'old-0' });
    expect(again.status).toBe(202);
    expect(again.body).toMatchObject({ id: 'old-0', deduped: false, runs: [expect.any(String)] });
    expect(oldRuns).not.toContain(again.body.runs[0]);

    const metrics = await (await fetch(`${kairos.url}/metrics`)).text();
    expect(Number(/^kairos_pruned_rows_total\{table="events"\} (\d+)$/m.exec(metrics)?.[1])).toBe(7);
    expect(await client.delete(`/v1/schedules/${schedule.body.id}`)).toMatchObject({ status: 204 });
  });

  it('prunes runs, events, ticks and published events past the retention; fsck stays clean', async () => {
    const client = api(kairos.url);
    const startedAt = Date.now();
    const every = await client.post('/v1/schedules', { name: 'pruned', every: '1s', target: { type: 'handler', name: 'noop' }, overlap: 'allow' });
    expect(every.status).toBe(201);
    // Runs for 2.5 s every second with overlap skip: every other slot is a run-less `skipped` tick.
    const skipping = await client.post('/v1/schedules', {
      name: 'skipping',
      every: '1s',
      target: { type: 'handler', name: 'sleep' },
      payload: { ms: 1500 },
      overlap: 'skip',
    });
    expect(skipping.status).toBe(201);
    // A sensor evaluated every second (the built-in echo answers its payload): one run key, asked for every time.
    const sensor = await client.post('/v1/sensors', {
      name: 'echoing',
      every: '1s',
      target: { type: 'handler', name: 'echo' },
      payload: { runs: [{ runKey: 'once', payload: null }], cursor: 'c' },
      run: { target: { type: 'handler', name: 'noop' } },
    });
    expect(sensor.status).toBe(201);
    const deadRun = async (): Promise<string> => {
      const created = await client.post('/v1/runs', { target: { type: 'handler', name: 'fail' }, payload: { retryable: false } });
      expect(created.status).toBe(201);
      const id = created.body.id as string;
      await runInState(client, id, 'dead');
      return id;
    };
    const kept = await deadRun();
    const republished = await deadRun();
    // A multi-step run goes with its steps.
    const graph = await client.post('/v1/runs', {
      steps: [
        { name: 'first', target: { type: 'handler', name: 'echo' } },
        { name: 'second', dependsOn: ['first'], target: { type: 'handler', name: 'noop' } },
      ],
    });
    expect(graph.status).toBe(201);
    await runInState(client, graph.body.id, 'succeeded');
    const republish = await client.post(`/v1/dead-letters/${republished}/republish`);
    expect(republish.status).toBe(201);
    const copy = republish.body.id as string;

    const skippedAt = await waitFor(
      async () => {
        const { rows } = await t.db.query(`SELECT count(*)::int AS n, max(created_at) AS last FROM ticks WHERE outcome = 'skipped'`);
        return rows[0].n >= 2 ? (rows[0].last as Date).getTime() : undefined;
      },
      'skipped ticks',
    );
    // Until those run-less ticks, and the first slots' runs, are past the retention and its slack, so
    // the checks below would find them if the pruner had left them.
    await sleepUntil(skippedAt + RETENTION_MS + SLACK_MS + 500);

    const cutoff = `now() - interval '${RETENTION_MS + SLACK_MS} milliseconds'`;
    const old = async (sql: string): Promise<number> => (await t.db.query(sql)).rows[0].n;
    expect(await old(`SELECT count(*)::int AS n FROM runs WHERE state <> 'dead' AND finished_at < ${cutoff}`)).toBe(0);
    // A tick with a run goes with its run, once that finished; made ahead by the lookahead, the tick
    // is older than the run's end.
    expect(
      await old(`SELECT count(*)::int AS n FROM ticks t LEFT JOIN runs r ON r.id = t.run_id
                 WHERE t.created_at < ${cutoff} AND (t.run_id IS NULL OR r.finished_at < ${cutoff})`),
    ).toBe(0);
    expect(await old(`SELECT count(*)::int AS n FROM outbox WHERE published_at < ${cutoff}`)).toBe(0);
    expect(await old(`SELECT count(*)::int AS n FROM run_events e WHERE NOT EXISTS (SELECT 1 FROM runs r WHERE r.id = e.run_id)`)).toBe(0);
    expect((await t.db.query(`SELECT count(*)::int AS n FROM runs WHERE id = $1 OR parent_run_id = $1`, [graph.body.id])).rows[0].n).toBe(0);
    // A sensor's settled evaluations go; its run keys stay, so a key is never asked for twice.
    expect(await old(`SELECT count(*)::int AS n FROM sensor_ticks WHERE finished_at < ${cutoff}`)).toBe(0);
    expect((await t.db.query(`SELECT count(*)::int AS n FROM sensor_ticks WHERE sensor_id = $1`, [sensor.body.id])).rows[0].n).toBeGreaterThan(0);
    expect((await t.db.query(`SELECT run_key FROM sensor_run_keys WHERE sensor_id = $1`, [sensor.body.id])).rows).toEqual([{ run_key: 'once' }]);

    // Something was there to prune: the first slots of the schedule are gone, newer ones remain
    // (those made ahead for slots still to come are not counted).
    const ticks = (await t.db.query(`SELECT min(scheduled_for) AS first, count(*)::int AS n FROM ticks WHERE schedule_id = $1 AND scheduled_for <= now()`, [every.body.id])).rows[0];
    const slotsSoFar = Math.floor((Date.now() - startedAt) / 1_000);
    expect(ticks.n).toBeGreaterThan(0);
    expect(ticks.n).toBeLessThan(slotsSoFar - 1);
    expect(new Date(ticks.first).getTime()).toBeGreaterThan(startedAt + 2_000);
    const pruned = (await t.db.query(`SELECT count(*)::int AS n FROM outbox WHERE topic = 'schedule.created'`)).rows[0].n;
    expect(pruned).toBe(0);

    // The dead letter nobody republished stays; the republished one goes, and its copy forgets it.
    const dead = (await t.db.query(`SELECT id FROM runs WHERE id = ANY($1::uuid[])`, [[kept, republished]])).rows.map((r) => r.id);
    expect(dead).toEqual([kept]);
    expect((await client.get(`/v1/runs/${kept}`)).status).toBe(200);
    expect((await client.get(`/v1/runs/${republished}`)).status).toBe(404);
    const copyRow = (await t.db.query(`SELECT origin, source_run_id FROM runs WHERE id = $1`, [copy])).rows[0];
    // The copy died too (the same failing target) and is a dead letter of its own, kept.
    expect(copyRow).toEqual({ origin: 'republish', source_run_id: null });

    expect(await fsck(t.db)).toEqual([]);

    const metrics = await (await fetch(`${kairos.url}/metrics`)).text();
    const prunedRuns = Number(/^kairos_pruned_rows_total\{table="runs"\} (\d+)$/m.exec(metrics)?.[1]);
    expect(prunedRuns).toBeGreaterThan(0);
    expect(metrics).toMatch(/^kairos_ledger_rows\{table="runs"\} \d+$/m);
    expect(metrics).toMatch(/^kairos_ledger_bytes\{table="run_events"\} [1-9]\d*$/m);
    expect(metrics).toMatch(/^kairos_ledger_bytes\{table="\*"\} [1-9]\d*$/m);
  });
});

describe('pruning rate', () => {
  const t = useTestEnvironment();

  it('prunes many finished runs with their events and ticks in small batches, and only those', async () => {
    const total = Number(process.env.KAIROS_TEST_PRUNE_RUNS ?? 20_000);
    const namespace = (await t.db.query(`SELECT id FROM namespaces WHERE name = 'default'`)).rows[0].id;
    const scheduleId = newId();
    await t.db.query(
      `INSERT INTO schedules (id, namespace_id, name, kind, every_ms, target, retry, timeout_ms, spec_hash, status, paused_at)
       VALUES ($1, $2, 'bulk', 'every', 1000, '{"type":"handler","name":"noop"}', '{}', 60000, 'x', 'paused', now())`,
      [scheduleId, namespace],
    );
    // Finished an hour ago, created over the hour before that, ids in creation order as Kairos makes them.
    const base = Date.now() - 2 * 3_600_000;
    for (let offset = 0; offset < total; offset += 10_000) {
      const ids = Array.from({ length: Math.min(10_000, total - offset) }, (_, i) => newId(base + Math.floor(((offset + i) * 3_600_000) / total)));
      await t.db.query(
        `WITH created AS (
           INSERT INTO runs (id, namespace_id, schedule_id, origin, scheduled_for, available_at, state, max_attempts, target, retry,
                             timeout_ms, reason_code, started_at, finished_at)
           SELECT id, $2, $3, 'schedule', to_timestamp($4 / 1000.0) + n * interval '1 second', now(), 'succeeded', 1,
                  '{"type":"handler","name":"noop"}', '{}', 60000, 'SUCCEEDED', now() - interval '1 hour', now() - interval '1 hour'
           FROM unnest($1::uuid[]) WITH ORDINALITY AS u(id, n)
           RETURNING id, scheduled_for
         ), ticks AS (
           INSERT INTO ticks (schedule_id, scheduled_for, namespace_id, outcome, reason_code, run_id, origin, created_at)
           SELECT $3, scheduled_for, $2, 'triggered', 'TRIGGERED', id, 'schedule', now() - interval '1 hour' FROM created
         )
         INSERT INTO run_events (run_id, kind, from_state, to_state, actor, reason_code)
         SELECT c.id, e.kind, e.from_state, e.to_state, 'test', e.reason_code FROM created c
         CROSS JOIN (VALUES ('queued', NULL, 'queued', NULL), ('claimed', 'queued', 'running', NULL),
                            ('succeeded', 'running', 'succeeded', 'SUCCEEDED')) AS e(kind, from_state, to_state, reason_code)`,
        [ids, namespace, scheduleId, base + offset * 1_000],
      );
    }
    // Two runs that must survive: one finished within the retention, one still running.
    const recent = newId();
    const running = newId();
    await t.db.query(
      `INSERT INTO runs (id, namespace_id, origin, scheduled_for, available_at, state, max_attempts, target, retry, timeout_ms,
                         reason_code, finished_at, lease_owner, lease_expires_at)
       VALUES ($1, $3, 'manual', now(), now(), 'succeeded', 1, '{}', '{}', 1000, 'SUCCEEDED', now(), NULL, NULL),
              ($2, $3, 'manual', now() - interval '3 hours', now(), 'running', 1, '{}', '{}', 1000, NULL, NULL, 'w', now() + interval '1 minute')`,
      [recent, running, namespace],
    );
    await t.db.query(
      `INSERT INTO run_events (run_id, kind, to_state, actor) VALUES ($1, 'queued', 'queued', 'test'), ($2, 'queued', 'queued', 'test')`,
      [recent, running],
    );
    await t.db.query(`INSERT INTO run_events (run_id, kind, from_state, to_state, actor, reason_code) VALUES ($1, 'succeeded', 'queued', 'succeeded', 'test', 'SUCCEEDED'), ($2, 'claimed', 'queued', 'running', 'test', NULL)`, [recent, running]);
    await t.db.query('ANALYZE');

    const repository = new RetentionRepository();
    const policy = { retentionMs: 60_000, deadLetterRetentionMs: 60_000, eventRetentionMs: 60_000, batchSize: 500 };
    let cursor: string | null = null;
    let runs = 0;
    let rows = 0;
    let batches = 0;
    let slowestBatchMs = 0;
    const started = performance.now();
    for (;;) {
      const batchStarted = performance.now();
      const batch = await repository.pruneRuns(t.db, policy, cursor);
      slowestBatchMs = Math.max(slowestBatchMs, performance.now() - batchStarted);
      batches += 1;
      runs += batch.runs;
      rows += batch.runs + batch.events + batch.ticks;
      if (batch.runs < policy.batchSize) break;
      cursor = batch.lastId;
    }
    const seconds = (performance.now() - started) / 1_000;
    console.info(
      `pruned ${runs} runs (${rows} rows with their events and ticks) in ${seconds.toFixed(2)} s over ${batches} batches of ${policy.batchSize}: ` +
        `${Math.round(runs / seconds)} runs/s, ${Math.round(rows / seconds)} rows/s; slowest batch ${Math.round(slowestBatchMs)} ms`,
    );
    expect(runs).toBe(total);
    const left = (await t.db.query(`SELECT array_agg(id ORDER BY id) AS ids FROM runs`)).rows[0].ids;
    expect(left.sort()).toEqual([recent, running].sort());
    expect((await t.db.query(`SELECT count(*)::int AS n FROM ticks`)).rows[0].n).toBe(0);
    expect((await t.db.query(`SELECT count(*)::int AS n FROM run_events`)).rows[0].n).toBe(4);
    expect(await fsck(t.db)).toEqual([]);
  }, 600_000);
});

describe('event pruning', () => {
  const t = useTestEnvironment();

  it('deletes at most a batch of events received before the cutoff per call, oldest first, and only those', async () => {
    const namespace = (await t.db.query(`SELECT id FROM namespaces WHERE name = 'default'`)).rows[0].id;
    await t.db.query(
      `INSERT INTO events (namespace_id, id, name, data, received_at, sent_by)
       SELECT $1::uuid, 'old-' || n, 'order.paid', '{"n": 1}'::json, now() - interval '2 days' + n * interval '1 minute', 'test' FROM generate_series(1, 5) AS n
       UNION ALL SELECT $1::uuid, 'fresh', 'order.paid', NULL::json, now() - interval '23 hours', 'test'`,
      [namespace],
    );
    const repository = new RetentionRepository();
    const policy = { retentionMs: 60_000, deadLetterRetentionMs: 60_000, eventRetentionMs: 86_400_000, batchSize: 2 };
    const left = async () => (await t.db.query(`SELECT array_agg(id ORDER BY received_at) AS ids FROM events`)).rows[0].ids;
    expect(await repository.pruneEvents(t.db, policy)).toBe(2);
    expect(await left()).toEqual(['old-3', 'old-4', 'old-5', 'fresh']);
    expect(await repository.pruneEvents(t.db, policy)).toBe(2);
    expect(await repository.pruneEvents(t.db, policy)).toBe(1);
    expect(await repository.pruneEvents(t.db, policy)).toBe(0);
    expect(await left()).toEqual(['fresh']);
  });
});
