/**
 * A run's story is the same whichever way its transitions are stored: the happy path (created,
 * claimed, finished) on the run row, every other transition as a run_events row. Each scenario
 * drives the repositories through one path a run can take and reads its events back as explain,
 * the API and the runEvents feed read them; the expected lists are the ones the ledger gave when
 * every transition was a run_events row. Instants are replaced by "<instant>" and ids by their
 * order; the order itself is checked on the raw ids.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { attemptsOf, newId, specHash } from '@kairos/domain';
import { readScheduleCreate } from '@kairos/domain/wire';
import { RunRecoveryRepository, RunRepository, ScheduleRepository, fsck, inTransaction, manualRun, type NewRun, type RunEventRow } from '@kairos/ledger';
import { useTestEnvironment } from '../support/kairos.js';
import { WorkerProtocol } from '../../packages/sdk/src/worker/worker-protocol.js';

const INSTANT = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:?\d\d)$/;

/** An event as explain prints it, without what differs between two runs of one scenario. */
function story(events: readonly RunEventRow[]): unknown[] {
  const ids = events.map((e) => Number(e.id));
  expect(ids, 'events in the order they were written, each id once').toEqual([...new Set(ids)].sort((a, b) => a - b));
  for (let i = 1; i < events.length; i++) expect(events[i]!.at.getTime()).toBeGreaterThanOrEqual(events[i - 1]!.at.getTime());
  const anonymise = (value: unknown): unknown => {
    if (value instanceof Date || (typeof value === 'string' && INSTANT.test(value))) return '<instant>';
    if (Array.isArray(value)) return value.map(anonymise);
    if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, anonymise(v)]));
    return value;
  };
  return events.map(({ kind, fromState, toState, leaseEpoch, actor, reasonCode, detail }) =>
    [kind, `${fromState ?? '-'}→${toState ?? '-'}`, `epoch ${leaseEpoch}`, actor, reasonCode ?? '-', JSON.stringify(anonymise(detail))].join(' '),
  );
}

describe("a run's story", () => {
  let namespaceId: string;
  const runs = new RunRepository();
  const leases = new WorkerProtocol();
  const recovery = new RunRecoveryRepository();
  const schedules = new ScheduleRepository();
  const TTL = 30_000;

  const t = useTestEnvironment();

  beforeAll(async () => {
    namespaceId = (await t.db.query(`SELECT id FROM namespaces WHERE name = 'default'`)).rows[0].id as string;
  });

  async function created(overrides: Partial<NewRun> = {}): Promise<string> {
    const run: NewRun = {
      ...manualRun({
        id: newId(),
        namespaceId,
        availableAt: new Date(Date.now() - 1_000),
        target: { type: 'handler', name: 'noop', queue: 'default' },
        payload: { n: 1 },
        retry: { maxAttempts: 3, backoff: { type: 'fixed', baseMs: 1_000, maxMs: 1_000, jitter: 0 } },
        timeoutMs: 10_000,
        idempotencyKey: null,
        actor: 'key:admin',
      }),
      ...overrides,
    };
    await inTransaction(t.db, (tx) => runs.insertRuns(tx, [run]));
    return run.id;
  }

  async function claim(id: string, owner = 'worker-a'): Promise<number> {
    const [result] = await leases.claimMany(t.db, [id], owner, TTL);
    expect(result!.kind).toBe('claimed');
    return result?.kind === 'claimed' ? result.run.leaseEpoch : -1;
  }

  async function succeed(id: string, epoch: number, owner = 'worker-a', response: Record<string, unknown> | null = null): Promise<void> {
    const written = await leases.finishMany(t.db, owner, [
      { runId: id, epoch, verdict: { state: 'succeeded', result: { ok: true }, error: null, reasonCode: 'SUCCEEDED', reasonText: null, response } },
    ]);
    expect(written.written.has(id)).toBe(true);
  }

  async function requeue(id: string, epoch: number, owner = 'worker-a'): Promise<void> {
    const requeued = await leases.requeueMany(t.db, owner, [
      { runId: id, epoch, retry: { delayMs: 0, error: { message: 'boom' }, reasonCode: 'HANDLER_ERROR', reasonText: 'boom', response: null } },
    ]);
    expect(requeued.has(id)).toBe(true);
  }

  const eventsOf = async (id: string): Promise<RunEventRow[]> => runs.events(t.db, id);

  const eventRows = async (id: string): Promise<string[]> =>
    (await t.db.query(`SELECT kind FROM run_events WHERE run_id = $1 ORDER BY id`, [id])).rows.map((r) => r.kind as string);

  it('created, claimed, succeeded: the whole happy path on the run row, no event row', async () => {
    const id = await created();
    await succeed(id, await claim(id));
    expect(story(await eventsOf(id))).toEqual([
      'queued -→queued epoch 0 key:admin - {"origin":"manual","scheduledFor":"<instant>"}',
      'claimed queued→running epoch 1 worker-a - {"attempt":1,"leaseExpiresAt":"<instant>"}',
      'succeeded running→succeeded epoch 1 worker-a SUCCEEDED {}',
    ]);
    expect(await eventRows(id)).toEqual([]);
    expect(await fsck(t.db)).toEqual([]);
  });

  it('reads a run written before the happy path moved to the row as it was written', async () => {
    const id = newId();
    await t.db.query(
      `INSERT INTO runs (id, namespace_id, origin, scheduled_for, available_at, state, exclusive, max_attempts, target, retry, timeout_ms,
                         lease_epoch, started_at, finished_at, reason_code)
       VALUES ($1, $2, 'manual', now(), now(), 'succeeded', false, 1, '{"type":"handler","name":"noop","queue":"default"}',
               '{"maxAttempts":1,"backoff":{"type":"fixed","baseMs":1000,"maxMs":1000,"jitter":0}}', 1000, 1, now(), now(), 'SUCCEEDED')`,
      [id, namespaceId],
    );
    await t.db.query(
      `INSERT INTO run_events (run_id, kind, from_state, to_state, lease_epoch, actor, reason_code, detail) VALUES
         ($1, 'queued', NULL, 'queued', 0, 'key:old', NULL, '{"origin":"manual","scheduledFor":"2026-01-01T00:00:00Z"}'),
         ($1, 'claimed', 'queued', 'running', 1, 'worker-old', NULL, '{"attempt":1,"leaseExpiresAt":"2026-01-01T00:00:30+00:00"}'),
         ($1, 'succeeded', 'running', 'succeeded', 1, 'worker-old', 'SUCCEEDED', '{}')`,
      [id],
    );
    expect(story(await eventsOf(id))).toEqual([
      'queued -→queued epoch 0 key:old - {"origin":"manual","scheduledFor":"<instant>"}',
      'claimed queued→running epoch 1 worker-old - {"attempt":1,"leaseExpiresAt":"<instant>"}',
      'succeeded running→succeeded epoch 1 worker-old SUCCEEDED {}',
    ]);
    expect((await fsck(t.db)).filter((v) => v.subject === `run ${id}`)).toEqual([]);
  });

  it('an HTTP target that failed for good keeps its response and error in the verdict', async () => {
    const id = await created({ maxAttempts: 1 });
    const epoch = await claim(id);
    await leases.finishMany(t.db, 'worker-a', [
      {
        runId: id,
        epoch,
        verdict: { state: 'dead', result: null, error: { message: 'HTTP 500' }, reasonCode: 'HTTP_5XX', reasonText: 'HTTP 500', response: { status: 500, body: 'no' } },
      },
    ]);
    expect(story(await eventsOf(id))).toEqual([
      'queued -→queued epoch 0 key:admin - {"origin":"manual","scheduledFor":"<instant>"}',
      'claimed queued→running epoch 1 worker-a - {"attempt":1,"leaseExpiresAt":"<instant>"}',
      'dead running→dead epoch 1 worker-a HTTP_5XX {"error":{"message":"HTTP 500"},"response":{"body":"no","status":500},"reasonText":"HTTP 500"}',
    ]);
    expect((await t.db.query(`SELECT count(*)::int AS n FROM outbox WHERE aggregate_id = $1 AND topic = 'run.dead'`, [id])).rows[0].n).toBe(1);
  });

  it('a retried attempt, then success on another worker', async () => {
    const id = await created();
    await requeue(id, await claim(id));
    await succeed(id, await claim(id, 'worker-b'), 'worker-b');
    const events = await eventsOf(id);
    expect(story(events)).toEqual([
      'queued -→queued epoch 0 key:admin - {"origin":"manual","scheduledFor":"<instant>"}',
      'claimed queued→running epoch 1 worker-a - {"attempt":1,"leaseExpiresAt":"<instant>"}',
      'retry_scheduled running→queued epoch 1 worker-a HANDLER_ERROR {"error":{"message":"boom"},"delayMs":0,"reasonText":"boom","availableAt":"<instant>","nextAttempt":2}',
      'claimed queued→running epoch 2 worker-b - {"attempt":2,"leaseExpiresAt":"<instant>"}',
      'succeeded running→succeeded epoch 2 worker-b SUCCEEDED {}',
    ]);
    expect(attemptsOf(events).map((a) => [a.attempt, a.leaseEpoch, a.worker, a.outcome])).toEqual([
      [1, 1, 'worker-a', 'failed'],
      [2, 2, 'worker-b', 'succeeded'],
    ]);
  });

  it('cancelled while queued, and while running', async () => {
    const queued = await created();
    await inTransaction(t.db, (tx) => runs.requestCancel(tx, [queued], 'key:admin', 'CANCELLED_BY_USER', 'not needed'));
    expect(story(await eventsOf(queued))).toEqual([
      'queued -→queued epoch 0 key:admin - {"origin":"manual","scheduledFor":"<instant>"}',
      'cancel_requested -→- epoch 0 key:admin CANCELLED_BY_USER {"reasonText":"not needed"}',
      'cancelled queued→cancelled epoch 0 key:admin CANCELLED_BY_USER {}',
    ]);

    const running = await created();
    const epoch = await claim(running);
    await inTransaction(t.db, (tx) => runs.requestCancel(tx, [running], 'key:admin', 'CANCELLED_BY_USER', 'stop it'));
    await leases.finishMany(t.db, 'worker-a', [
      { runId: running, epoch, verdict: { state: 'cancelled', result: null, error: null, reasonCode: 'CANCELLED_BY_USER', reasonText: 'stop it', response: null } },
    ]);
    expect(story(await eventsOf(running))).toEqual([
      'queued -→queued epoch 0 key:admin - {"origin":"manual","scheduledFor":"<instant>"}',
      'claimed queued→running epoch 1 worker-a - {"attempt":1,"leaseExpiresAt":"<instant>"}',
      'cancel_requested -→- epoch 1 key:admin CANCELLED_BY_USER {"reasonText":"stop it"}',
      'cancelled running→cancelled epoch 1 worker-a CANCELLED_BY_USER {"reasonText":"stop it"}',
    ]);
  });

  it('drained at a clean stop, handed back by a worker without the handler, then finished', async () => {
    const id = await created();
    expect(await leases.drain(t.db, id, await claim(id), 'worker-a')).toBe(true);
    const handed = await leases.handBack(t.db, {
      runId: id,
      epoch: await claim(id, 'worker-b'),
      owner: 'worker-b',
      delayMs: 0,
      maxDelayMs: 0,
      reasonCode: 'HANDLER_NOT_REGISTERED',
      reasonText: 'no handler noop here',
    });
    expect(handed).not.toBeNull();
    await succeed(id, await claim(id, 'worker-c'), 'worker-c');
    const events = await eventsOf(id);
    expect(story(events)).toEqual([
      'queued -→queued epoch 0 key:admin - {"origin":"manual","scheduledFor":"<instant>"}',
      'claimed queued→running epoch 1 worker-a - {"attempt":1,"leaseExpiresAt":"<instant>"}',
      'drained running→queued epoch 2 worker-a - {"why":"worker shutting down"}',
      'claimed queued→running epoch 3 worker-b - {"attempt":1,"leaseExpiresAt":"<instant>"}',
      'handed_back running→queued epoch 4 worker-b HANDLER_NOT_REGISTERED {"reasonText":"no handler noop here","availableAt":"<instant>"}',
      'claimed queued→running epoch 5 worker-c - {"attempt":1,"leaseExpiresAt":"<instant>"}',
      'succeeded running→succeeded epoch 5 worker-c SUCCEEDED {}',
    ]);
    expect(attemptsOf(events).map((a) => [a.leaseEpoch, a.outcome])).toEqual([
      [1, 'drained'],
      [3, 'handed_back'],
      [5, 'succeeded'],
    ]);
  });

  it('reaped after its worker died, its late verdict refused, then poisoned', async () => {
    const id = await created();
    const first = await claim(id);
    await t.db.query(`UPDATE runs SET lease_expires_at = now() - interval '1 minute' WHERE id = $1`, [id]);
    const reap = { skewMs: 0, backoffMs: 0, crashBudget: 2, limit: 100, actor: 'reaper:test' };
    expect((await recovery.reapExpired(t.db, reap)).requeued.map((r) => r.id)).toContain(id);
    // The dead worker's verdict arrives late: refused, and recorded as such.
    expect((await leases.finishMany(t.db, 'worker-a', [{ runId: id, epoch: first, verdict: { state: 'succeeded', result: null, error: null, reasonCode: 'SUCCEEDED', reasonText: null, response: null } }])).written.size).toBe(0);
    await leases.recordLeaseLost(t.db, id, first, 'worker-a', { attempted: 'succeeded' });
    await claim(id, 'worker-b');
    await t.db.query(`UPDATE runs SET lease_expires_at = now() - interval '1 minute' WHERE id = $1`, [id]);
    expect((await recovery.reapExpired(t.db, reap)).poisoned).toContain(id);
    const events = await eventsOf(id);
    expect(story(events)).toEqual([
      'queued -→queued epoch 0 key:admin - {"origin":"manual","scheduledFor":"<instant>"}',
      'claimed queued→running epoch 1 worker-a - {"attempt":1,"leaseExpiresAt":"<instant>"}',
      'reaped running→queued epoch 2 reaper:test LEASE_EXPIRED {"crashCount":1}',
      'lease_lost -→- epoch 1 worker-a LEASE_LOST {"attempted":"succeeded"}',
      'claimed queued→running epoch 3 worker-b - {"attempt":1,"leaseExpiresAt":"<instant>"}',
      'poisoned running→dead epoch 4 reaper:test POISONED {"crashCount":2}',
    ]);
    expect(attemptsOf(events).map((a) => [a.leaseEpoch, a.outcome])).toEqual([
      [1, 'lost'],
      [3, 'lost'],
    ]);
  });

  it('parked behind a running run of its schedule, released, then run; and a retry of a dead run', async () => {
    const nowMs = Date.now();
    const { spec } = readScheduleCreate({ every: '1h', overlap: 'buffer_one', target: { type: 'handler', name: 'noop' } }, nowMs);
    const scheduleId = newId(nowMs);
    await inTransaction(t.db, (tx) =>
      schedules.create(tx, { id: scheduleId, namespaceId, name: scheduleId, spec, specHash: specHash(spec), paused: false, idempotencyKey: null, requestHash: null, nextFireAt: new Date(nowMs + 3_600_000) }),
    );
    const first = await created({ scheduleId, origin: 'schedule', exclusive: true, actor: 'scheduler:test' });
    const firstEpoch = await claim(first);
    const parked = await created({
      scheduleId,
      origin: 'schedule',
      exclusive: true,
      availableAt: null,
      deferReason: 'waiting for the previous run',
      actor: 'scheduler:test',
      reasonCode: 'OVERLAP_BUFFERED',
    });
    await succeed(first, firstEpoch);
    expect((await recovery.releaseParked(t.db, scheduleId, 'worker-a')).map((r) => r.id)).toEqual([parked]);
    await succeed(parked, await claim(parked, 'worker-b'), 'worker-b');
    expect(story(await eventsOf(parked))).toEqual([
      'queued -→queued epoch 0 scheduler:test OVERLAP_BUFFERED {"origin":"schedule","scheduledFor":"<instant>"}',
      'released queued→queued epoch 0 worker-a - {}',
      'claimed queued→running epoch 1 worker-b - {"attempt":1,"leaseExpiresAt":"<instant>"}',
      'succeeded running→succeeded epoch 1 worker-b SUCCEEDED {}',
    ]);

    const retry = await created({ origin: 'retry', sourceRunId: parked, detail: { sourceRunId: parked } });
    expect(story(await eventsOf(retry))).toEqual([
      `queued -→queued epoch 0 key:admin - {"origin":"retry","sourceRunId":"${parked}","scheduledFor":"<instant>"}`,
    ]);
  });

  it('reads from a given event on, as the runEvents feed follows a run', async () => {
    const id = await created();
    const epoch = await claim(id);
    const [queued, claimed] = await eventsOf(id);
    expect((await runs.events(t.db, id, Number(queued!.id))).map((e) => e.kind)).toEqual(['claimed']);
    await succeed(id, epoch);
    expect((await runs.events(t.db, id, Number(claimed!.id))).map((e) => e.kind)).toEqual(['succeeded']);
  });
});
