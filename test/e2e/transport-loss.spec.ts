/**
 * Postgres is the truth, the transport only carries: a run committed but never handed to the
 * transport, a run whose job it lost, and everything after a wipe of the transport (Kairos's Redis
 * keys, or every table of the Postgres transport's schema emptied) all still execute.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId, type JsonValue } from '@kairos/domain';
import { RunRepository, inTransaction, manualRun } from '@kairos/ledger';
import type { RunsQueue } from '@kairos/queue';
import type { StartedKairos } from '@kairos/process';
import { api, runsQueue, startInProcess, testEnvironment, waitFor, wipeTransport, TEST_TRANSPORT, type TestEnvironment } from '../support/kairos.js';

/** A due time no test reaches: the run's job stays delayed in the transport until the test makes the run due. */
const FAR_AHEAD = '2999-01-01T00:00:00Z';

describe(`losing the transport (${TEST_TRANSPORT}) loses nothing`, () => {
  let t: TestEnvironment;
  let kairos: StartedKairos;
  let queue: RunsQueue;

  beforeAll(async () => {
    t = await testEnvironment();
    kairos = await startInProcess(t.env());
    queue = await runsQueue(t);
  });

  afterAll(async () => {
    await queue?.close();
    await kairos?.app.close();
    await t?.cleanup();
  });

  const stateOf = async (id: string): Promise<string> => (await t.db.query('SELECT state FROM runs WHERE id = $1', [id])).rows[0].state;
  /** Makes a queued run due now, in the ledger only, as if its time had come. */
  const fallDue = async (id: string): Promise<void> => {
    await t.db.query(`UPDATE runs SET available_at = now() WHERE id = $1 AND state = 'queued'`, [id]);
  };
  const succeeded = (id: string) => waitFor(async () => ((await stateOf(id)) === 'succeeded' ? true : undefined), `run ${id} to succeed`, 20_000);

  /** A run written straight to the ledger, as a writer that crashed before dispatching would leave it. */
  async function committedRun(payload: JsonValue, availableAt = new Date()): Promise<string> {
    const namespaceId = (await t.db.query(`SELECT id FROM namespaces WHERE name = 'default'`)).rows[0].id;
    const id = newId();
    await inTransaction(t.db, (tx) =>
      new RunRepository().insertRuns(tx, [
        manualRun({
          id,
          namespaceId,
          availableAt,
          target: { type: 'handler', name: 'echo', queue: 'default' },
          payload,
          retry: { maxAttempts: 1, backoff: { type: 'fixed', baseMs: 1000, maxMs: 1000, jitter: 0 } },
          timeoutMs: 10_000,
          idempotencyKey: null,
          actor: 'test',
        }),
      ]),
    );
    return id;
  }

  it('executes a run that was committed but never enqueued (a crash between commit and enqueue)', async () => {
    // Due far ahead at first, so the reconciler cannot have repaired it yet when the test looks.
    const id = await committedRun({ committed: 'only' }, new Date(FAR_AHEAD));
    expect(await queue.getJobState(id)).toBe('unknown');
    await fallDue(id);
    await succeeded(id);
    expect((await new RunRepository().events(t.db, id)).filter((e) => e.kind === 'claimed')).toHaveLength(1);
  });

  it('executes a run whose dispatch the transport refused (left unenqueued for the relay)', async () => {
    const id = await committedRun({ refused: true });
    await t.db.query(`UPDATE runs SET enqueued_at = NULL WHERE id = $1`, [id]);
    await succeeded(id);
  });

  it('executes a run whose BullMQ job was deleted', async () => {
    const client = api(kairos.url);
    // Due far ahead, so its job is certainly still delayed when the test removes it; then due now.
    const created = await client.post('/v1/runs', { target: { type: 'handler', name: 'echo' }, payload: { lost: true }, availableAt: FAR_AHEAD });
    const id = created.body.id as string;
    await waitFor(async () => ((await queue.getJobState(id)) === 'delayed' ? true : undefined), 'the delayed job');
    expect(await queue.remove(id)).toBe(1);
    expect(await queue.getJobState(id)).toBe('unknown');
    await fallDue(id);
    await succeeded(id);
    expect((await client.get(`/v1/runs/${id}`)).body.result).toEqual({ lost: true });
  });

  it('keeps firing schedules and executes queued runs after the transport is wiped', async () => {
    const client = api(kairos.url);
    const schedule = (await client.post('/v1/schedules', { every: '1s', target: { type: 'handler', name: 'noop' } })).body;
    const delayed = (await client.post('/v1/runs', { target: { type: 'handler', name: 'noop' }, availableAt: FAR_AHEAD })).body;
    // Wipe once the schedule is firing, while the run's job still waits in the transport for its time.
    await waitFor(async () => {
      const { rows } = await t.db.query(`SELECT count(*)::int AS n FROM ticks WHERE schedule_id = $1 AND outcome = 'triggered'`, [schedule.id]);
      return rows[0].n >= 1 ? true : undefined;
    }, 'the schedule to fire');
    await waitFor(async () => ((await queue.getJobState(delayed.id)) === 'delayed' ? true : undefined), 'the delayed job');
    await wipeTransport(t);
    const wipedAt = new Date();
    expect(await queue.getJobState(delayed.id)).toBe('unknown');
    expect(await stateOf(delayed.id)).toBe('queued');
    await fallDue(delayed.id);
    await succeeded(delayed.id);
    await waitFor(async () => {
      const { rows } = await t.db.query(
        `SELECT count(*)::int AS n FROM runs WHERE schedule_id = $1 AND state = 'succeeded' AND scheduled_for > $2`,
        [schedule.id, wipedAt],
      );
      return rows[0].n >= 3 ? true : undefined;
    }, 'the schedule to keep firing after the wipe', 20_000);
  });
});
