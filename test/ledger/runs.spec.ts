/**
 * The run repositories speak in domain results, never in Postgres errors: a repeated idempotency
 * key is `deduped`, a claim blocked by a running exclusive run of its schedule is `blocked`. And the
 * slot writer keeps a run only when its slot's tick was written. And the batch statements store
 * JSON exactly as given, whatever its strings hold. And a run's checkpoints read back in the order
 * they were stored, even those begun in one millisecond. And a batch's verdicts write the outcome
 * events subscriptions read as the trigger of every other path writes them, and none while nobody
 * listens.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { newId, specHash } from '@kairos/domain';
import { readScheduleCreate } from '@kairos/domain/wire';
import { RunRepository, ScheduleRepository, SlotWriter, inTransaction, manualRun, materializeSlots, type NewRun, type ScheduleRow } from '@kairos/ledger';
import { useTestEnvironment } from '../support/kairos.js';
import { WorkerProtocol } from '../../packages/sdk/src/worker/worker-protocol.js';

describe('the run repositories', () => {
  let namespaceId: string;
  const runs = new RunRepository();
  const leases = new WorkerProtocol();
  const schedules = new ScheduleRepository();
  const slots = new SlotWriter(schedules, runs);

  const t = useTestEnvironment();

  beforeAll(async () => {
    namespaceId = (await t.db.query(`SELECT id FROM namespaces WHERE name = 'default'`)).rows[0].id as string;
  });

  async function schedule(): Promise<ScheduleRow> {
    const nowMs = Date.now();
    const { spec } = readScheduleCreate({ every: '1h', target: { type: 'handler', name: 'noop' } }, nowMs);
    const id = newId(nowMs);
    const { row } = await inTransaction(t.db, (tx) =>
      schedules.create(tx, { id, namespaceId, name: id, spec, specHash: specHash(spec), paused: false, idempotencyKey: null, requestHash: null, nextFireAt: new Date(nowMs + 3_600_000) }),
    );
    return row;
  }

  function adHoc(overrides: Partial<NewRun> = {}): NewRun {
    const run = manualRun({
      id: newId(),
      namespaceId,
      availableAt: new Date(Date.now() - 1_000),
      target: { type: 'handler', name: 'noop', queue: 'default' },
      payload: null,
      retry: { maxAttempts: 1, backoff: { type: 'fixed', baseMs: 1_000, maxMs: 1_000, jitter: 0 } },
      timeoutMs: 10_000,
      idempotencyKey: null,
      actor: 'test',
    });
    return { ...run, ...overrides };
  }

  it('creates a run once per idempotency key: the repeat returns the first run, deduped, in another call or the same', async () => {
    const first = adHoc({ idempotencyKey: 'once', requestHash: 'first' });
    const [created] = (await runs.createMany(t.db, [first])).created;
    expect(created!.deduped).toBe(false);
    expect(created!.row).toMatchObject({ id: first.id, state: 'queued', idempotencyKey: 'once' });

    const again = (await runs.createMany(t.db, [adHoc({ idempotencyKey: 'once', payload: { other: true } })])).created;
    expect(again).toEqual([{ row: created!.row, deduped: true, requestHash: 'first' }]);
    expect((await t.db.query(`SELECT count(*)::int AS n FROM runs WHERE idempotency_key = 'once'`)).rows[0].n).toBe(1);

    const [a, plain, b] = (await runs.createMany(t.db, [adHoc({ idempotencyKey: 'twice', requestHash: 'a' }), adHoc(), adHoc({ idempotencyKey: 'twice', requestHash: 'b' })])).created;
    expect([a!.deduped, plain!.deduped, b!.deduped]).toEqual([false, false, true]);
    expect(b).toEqual({ row: a!.row, deduped: true, requestHash: 'a' });
  });

  it('answers each claim of a batch: claimed, blocked behind a running exclusive run, or unclaimable', async () => {
    const row = await schedule();
    const exclusive = (slotMs: number): NewRun =>
      adHoc({ scheduleId: row.id, origin: 'schedule', exclusive: true, scheduledFor: new Date(slotMs) });
    const older = exclusive(Date.now() - 2_000);
    const newer = exclusive(Date.now() - 1_000);
    const later = adHoc({ availableAt: new Date(Date.now() + 3_600_000) });
    await inTransaction(t.db, (tx) => runs.insertRuns(tx, [older, newer, later]));

    const results = await leases.claimMany(t.db, [older.id, newer.id, later.id], 'worker-a', 60_000);
    expect(results.map((r) => r.kind)).toEqual(['claimed', 'blocked', 'unclaimable']);
    expect(results[0]).toMatchObject({ kind: 'claimed', run: { id: older.id, leaseEpoch: 1, scheduleId: row.id } });
    const states = (await t.db.query(`SELECT id, state FROM runs WHERE id = ANY($1::uuid[])`, [[older.id, newer.id, later.id]])).rows;
    expect(Object.fromEntries(states.map((s) => [s.id, s.state]))).toEqual({ [older.id]: 'running', [newer.id]: 'queued', [later.id]: 'queued' });
  });

  it('writes a slot once: a second write of the same ticks keeps no run and counts them as already ticked', async () => {
    const row = await schedule();
    const slotMs = Date.now() - 60_000;
    const make = () =>
      materializeSlots({
        row,
        slots: [{ slotMs, fire: true, availableAtMs: slotMs, catchup: false }],
        active: [],
        tickOrigin: 'backfill',
        runOrigin: 'backfill',
        overlap: 'allow',
        actor: 'test',
        remainingRuns: null,
      });
    const first = await inTransaction(t.db, (tx) => slots.write(tx, [make()]));
    expect({ ticks: first.ticks.length, runs: first.runs.length, alreadyTicked: first.alreadyTicked }).toEqual({ ticks: 1, runs: 1, alreadyTicked: 0 });
    expect(first.dispatch).toEqual([{ id: first.runs[0]!.id, availableAt: new Date(slotMs), queue: 'default', priority: 3 }]);

    const second = await inTransaction(t.db, (tx) => slots.write(tx, [make()]));
    expect(second).toEqual({ ticks: [], runs: [], alreadyTicked: 1, dispatch: [] });
    expect((await t.db.query(`SELECT count(*)::int AS n FROM runs WHERE schedule_id = $1`, [row.id])).rows[0].n).toBe(1);
  });

  it('writes every run that records no tick (a trigger)', async () => {
    const row = await schedule();
    const nowMs = Date.now();
    const made = materializeSlots({
      row,
      slots: [{ slotMs: nowMs, fire: true, availableAtMs: nowMs, catchup: false }],
      active: [],
      tickOrigin: null,
      runOrigin: 'manual',
      overlap: 'allow',
      actor: 'test',
      remainingRuns: null,
    });
    const written = await inTransaction(t.db, (tx) => slots.write(tx, [made]));
    expect({ ticks: written.ticks.length, runs: written.runs.map((r) => r.id), alreadyTicked: written.alreadyTicked }).toEqual({
      ticks: 0,
      runs: made.runs.map((r) => r.id),
      alreadyTicked: 0,
    });
  });
  it('stores payloads and results with NUL and unpaired surrogates exactly, and replaces them where Postgres cannot hold them', async () => {
    const odd = 'a\u0000b\ud800c\udfffd';
    const replaced = 'a\ufffdb\ufffdc\ufffdd';
    const run = adHoc({ payload: { odd, list: [odd] } });
    await inTransaction(t.db, (tx) => runs.insertRuns(tx, [run]));
    const [claim] = await leases.claimMany(t.db, [run.id], 'worker-a', 60_000);
    expect(claim).toMatchObject({ kind: 'claimed', run: { payload: { odd, list: [odd] } } });
    const epoch = (claim as Extract<typeof claim, { kind: 'claimed' }>).run.leaseEpoch;

    const verdict = { state: 'failed' as const, result: { odd }, error: { message: odd }, reasonCode: 'HANDLER_ERROR' as const, reasonText: odd, response: { body: odd } };
    expect((await leases.finishMany(t.db, 'worker-a', [{ runId: run.id, epoch, verdict }])).written).toEqual(new Set([run.id]));
    const row = (await t.db.query(`SELECT payload, result, error, reason_text FROM runs WHERE id = $1`, [run.id])).rows[0];
    expect(row).toEqual({ payload: { odd, list: [odd] }, result: { odd }, error: { message: replaced }, reason_text: replaced });
    const event = (await runs.events(t.db, run.id)).at(-1)!;
    expect(event).toMatchObject({ kind: 'failed', detail: { reasonText: replaced, error: { message: replaced }, response: { body: replaced } } });
  });
  it('reads checkpoints begun in one millisecond in the order they were stored, whatever their names, a park last', async () => {
    const run = adHoc();
    await inTransaction(t.db, (tx) => runs.insertRuns(tx, [run]));
    const at = '2026-12-05T10:00:00.123Z';
    // Stored out of name order: z, then a patch marker, then b; then a sleep begun in the same millisecond, still parked.
    await t.db.query(
      `INSERT INTO run_checkpoints (run_id, name, kind, state, result, lease_epoch, started_at, finished_at, wake_at) VALUES
         ($1, 'z', 'step', 'succeeded', 'null', 1, $2, $2::timestamptz + interval '1 microsecond', NULL),
         ($1, 'patch:audit', 'step', 'succeeded', 'false', 1, $2, $2::timestamptz + interval '2 microseconds', NULL),
         ($1, 'b', 'step', 'succeeded', 'null', 1, $2, $2::timestamptz + interval '3 microseconds', NULL),
         ($1, 'sleep#1', 'sleep', 'sleeping', NULL, 1, $2, NULL, $2::timestamptz + interval '1 hour')`,
      [run.id, at],
    );
    const read = (await runs.checkpointsOf(t.db, [run.id])).get(run.id)!;
    expect(read.map((c) => c.name)).toEqual(['z', 'patch:audit', 'b', 'sleep#1']);
  });
  it('writes the outcome events of a batch of verdicts as the trigger of other paths does, after the run.dead events, and none nobody listens to', async () => {
    const boom = { message: 'boom' };
    const claimAll = async (made: NewRun[]) => {
      await inTransaction(t.db, (tx) => runs.insertRuns(tx, made));
      const claims = await leases.claimMany(t.db, made.map((r) => r.id), 'worker-o', 60_000);
      return claims.map((c) => (c as Extract<typeof c, { kind: 'claimed' }>).run.leaseEpoch);
    };
    const finish = async (made: NewRun[], epochs: number[]) =>
      leases.finishMany(
        t.db,
        'worker-o',
        made.map((r, i) => ({
          runId: r.id,
          epoch: epochs[i]!,
          verdict: i === 0
            ? { state: 'succeeded' as const, result: null, error: null, reasonCode: 'SUCCEEDED' as const, reasonText: null, response: null }
            : { state: 'dead' as const, result: null, error: boom, reasonCode: 'HANDLER_ERROR' as const, reasonText: 'boom', response: null },
        })),
      );
    const outbox = async (ids: string[]) =>
      (await t.db.query<{ topic: string; aggregate_id: string; payload: Record<string, unknown> }>(
        `SELECT topic, aggregate_id, payload FROM outbox WHERE aggregate_id = ANY($1::uuid[]) ORDER BY id`,
        [ids],
      )).rows;

    // Nobody listens: the dead-letter event alone.
    const quiet = [adHoc(), adHoc()];
    await finish(quiet, await claimAll(quiet));
    expect((await outbox(quiet.map((r) => r.id))).map((e) => [e.topic, e.aggregate_id])).toEqual([['run.dead', quiet[1]!.id]]);

    await t.db.query(
      `INSERT INTO subscriptions (id, namespace_id, url, events, format, state) VALUES ($1, $2, 'http://127.0.0.1:9/hook', '{run.succeeded,run.failed}', 'json', 'active')`,
      [newId(), namespaceId],
    );
    try {
      const heard = [adHoc(), adHoc()];
      await finish(heard, await claimAll(heard));
      const [succeeded, dead] = heard.map((r) => r.id);
      const scheduledFor = (id: string) => t.db.query(`SELECT to_jsonb(scheduled_for) AS at FROM runs WHERE id = $1`, [id]).then((q) => q.rows[0].at as string);
      const common = async (id: string) => ({ runId: id, scheduleId: null, sensorId: null, attempt: 1, maxAttempts: 1, scheduledFor: await scheduledFor(id) });
      const [first, ...outcomes] = await outbox([succeeded!, dead!]);
      expect(first).toEqual({ topic: 'run.dead', aggregate_id: dead, payload: { runId: dead, scheduleId: null, reasonCode: 'HANDLER_ERROR', reasonText: 'boom' } });
      expect(outcomes).toHaveLength(2);
      expect(outcomes).toEqual(
        expect.arrayContaining([
          { topic: 'run.succeeded', aggregate_id: succeeded, payload: await common(succeeded!) },
          { topic: 'run.failed', aggregate_id: dead, payload: { ...(await common(dead!)), willRetry: false, reasonCode: 'HANDLER_ERROR', reasonText: 'boom', nextAttemptAt: null } },
        ]),
      );

      // A run ended dead by another path (as the reaper ends a poisoned run) is told by the trigger, in the same words.
      const other = adHoc();
      await claimAll([other]);
      await t.db.query(
        `UPDATE runs SET state = 'dead', reason_code = 'HANDLER_ERROR', reason_text = 'boom', error = '{"message":"boom"}', finished_at = now(), lease_owner = NULL, lease_expires_at = NULL WHERE id = $1`,
        [other.id],
      );
      expect((await outbox([other.id])).map((e) => e.payload)).toEqual([{ ...(await common(other.id)), willRetry: false, reasonCode: 'HANDLER_ERROR', reasonText: 'boom', nextAttemptAt: null }]);
    } finally {
      await t.db.query(`DELETE FROM subscriptions WHERE namespace_id = $1`, [namespaceId]);
    }
  });
});
