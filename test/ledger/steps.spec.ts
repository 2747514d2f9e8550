/**
 * Multi-step runs in the ledger, driven through the worker protocol as a worker drives them: a
 * step becomes runnable in the transaction that records the last upstream verdict it waited for,
 * a step that needed a failed one is skipped, `always` steps run whatever happened upstream, the
 * graph's run ends once no step is active, a cancellation reaches every step, and running the
 * graph again keeps what succeeded. Every state of the way passes fsck.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { newId, specHash, stepStateOf, type StepSpec, type Target } from '@kairos/domain';
import { readScheduleCreate } from '@kairos/domain/wire';
import { RunRecoveryRepository, RunRepository, ScheduleRepository, fsck, inTransaction, manualRun, type NewRun, type RunRow } from '@kairos/ledger';
import { useTestEnvironment } from '../support/kairos.js';
import { WorkerProtocol, type ClaimedRun } from '../../packages/sdk/src/worker/worker-protocol.js';

const RETRY_ONCE = { maxAttempts: 1, backoff: { type: 'fixed' as const, baseMs: 1_000, maxMs: 1_000, jitter: 0 } };

function step(name: string, dependsOn: string[] = [], when: StepSpec['when'] = 'on_success'): StepSpec {
  return { name, dependsOn, when, target: { type: 'handler', name: 'noop', queue: 'default' }, retry: null, timeoutMs: null };
}

/** The example: extract; transform and audit after it; load after transform; cleanup always, after load and audit. */
const NIGHTLY_ETL: StepSpec[] = [
  step('extract'),
  step('transform', ['extract']),
  step('load', ['transform']),
  step('audit', ['extract']),
  step('cleanup', ['load', 'audit'], 'always'),
];

describe('multi-step runs in the ledger', () => {
  const t = useTestEnvironment();
  const runs = new RunRepository();
  const protocol = new WorkerProtocol();
  let namespaceId: string;

  beforeAll(async () => {
    namespaceId = (await t.db.query(`SELECT id FROM namespaces WHERE name = 'default'`)).rows[0].id as string;
  });

  function graphRun(steps: StepSpec[], overrides: Partial<NewRun> = {}): NewRun {
    const target: Target = { type: 'steps', steps };
    return {
      ...manualRun({
        id: newId(),
        namespaceId,
        availableAt: new Date(Date.now() - 1_000),
        target,
        payload: { day: 'yesterday' },
        retry: RETRY_ONCE,
        timeoutMs: 10_000,
        idempotencyKey: null,
        actor: 'test',
      }),
      ...overrides,
    };
  }

  async function create(run: NewRun) {
    return inTransaction(t.db, (tx) => runs.insertRuns(tx, [run]));
  }

  async function graph(id: string): Promise<{ run: RunRow; steps: Record<string, string> }> {
    const run = (await runs.getMany(t.db, [id]))[0]!;
    const steps = (await runs.stepsOf(t.db, [run])).get(id) ?? [];
    return { run, steps: Object.fromEntries(steps.map((s) => [s.stepName!, stepStateOf(s)])) };
  }

  async function stepRunId(graphId: string, name: string): Promise<string> {
    return (await t.db.query(`SELECT id FROM runs WHERE parent_run_id = $1 AND step_name = $2`, [graphId, name])).rows[0].id as string;
  }

  async function claim(graphId: string, name: string): Promise<ClaimedRun> {
    const [result] = await protocol.claimMany(t.db, [await stepRunId(graphId, name)], 'worker-a', 60_000);
    if (result!.kind !== 'claimed') throw new Error(`step ${name} was not claimable: ${result!.kind}`);
    return result!.run;
  }

  async function succeed(run: ClaimedRun, result: unknown): Promise<void> {
    const written = await protocol.finishMany(t.db, 'worker-a', [
      { runId: run.id, epoch: run.leaseEpoch, verdict: { state: 'succeeded', result: result as never, error: null, reasonCode: 'SUCCEEDED', reasonText: null, response: null } },
    ]);
    expect(written.written.has(run.id)).toBe(true);
  }

  async function die(run: ClaimedRun): Promise<void> {
    await protocol.finishMany(t.db, 'worker-a', [
      { runId: run.id, epoch: run.leaseEpoch, verdict: { state: 'dead', result: null, error: { message: 'boom' }, reasonCode: 'HANDLER_ERROR', reasonText: 'boom' } as never },
    ]);
  }

  async function expectHealthy(): Promise<void> {
    expect((await fsck(t.db)).filter((v) => v.check.startsWith('step') || v.check.includes('steps') || v.check === 'event-matches-state')).toEqual([]);
  }

  it('creates every step with the run, parked, and hands over only the first ones; the graph itself is never handed over', async () => {
    const run = graphRun(NIGHTLY_ETL);
    const { inserted, readySteps } = await create(run);
    expect(inserted.has(run.id)).toBe(true);
    // Due at once: the run was due a second ago.
    expect(readySteps).toMatchObject([{ id: await stepRunId(run.id, 'extract'), queue: 'default' }]);
    expect(readySteps[0]!.availableAt.getTime()).toBeGreaterThanOrEqual(run.availableAt!.getTime());
    const { run: row, steps } = await graph(run.id);
    expect(row).toMatchObject({ state: 'queued', enqueuedAt: null });
    expect(steps).toEqual({ extract: 'queued', transform: 'waiting', load: 'waiting', audit: 'waiting', cleanup: 'waiting' });
    // The graph's own run cannot be claimed.
    expect((await protocol.claimMany(t.db, [run.id], 'worker-a', 60_000))[0]!.kind).toBe('unclaimable');
    await expectHealthy();
  });

  it('releases each step in the transaction of the verdict it waited for, in order, with its upstream results as inputs', async () => {
    const run = graphRun(NIGHTLY_ETL);
    await create(run);
    const extract = await claim(run.id, 'extract');
    expect(extract).toMatchObject({ graphRunId: run.id, stepName: 'extract', inputs: {}, payload: { day: 'yesterday' } });
    expect((await graph(run.id)).run.state).toBe('running');
    await succeed(extract, { rows: 3 });

    // transform and audit are ready together: they run in parallel.
    expect((await graph(run.id)).steps).toMatchObject({ transform: 'queued', audit: 'queued', load: 'waiting', cleanup: 'waiting' });
    const ready = await protocol.takeReadySteps(t.db, [run.id]);
    expect(ready.map((r) => r.id).sort()).toEqual([await stepRunId(run.id, 'transform'), await stepRunId(run.id, 'audit')].sort());
    expect(await protocol.takeReadySteps(t.db, [run.id])).toEqual([]);

    const transform = await claim(run.id, 'transform');
    const audit = await claim(run.id, 'audit');
    expect(transform.inputs).toEqual({ extract: { rows: 3 } });
    await succeed(transform, 'transformed');
    await succeed(audit, 'audited');
    expect((await graph(run.id)).steps).toMatchObject({ load: 'queued', cleanup: 'waiting' });
    const load = await claim(run.id, 'load');
    expect(load.inputs).toEqual({ transform: 'transformed' });
    await succeed(load, 'loaded');
    const cleanup = await claim(run.id, 'cleanup');
    expect(cleanup.inputs).toEqual({ load: 'loaded', audit: 'audited' });
    await succeed(cleanup, null);

    const done = await graph(run.id);
    expect(done.run).toMatchObject({ state: 'succeeded', reasonCode: 'SUCCEEDED' });
    expect(done.run.result).toEqual({ extract: { rows: 3 }, transform: 'transformed', audit: 'audited', load: 'loaded', cleanup: null });
    await expectHealthy();
  });

  it('skips what needed a dead step with UPSTREAM_FAILED, still runs the always step, and ends the run dead', async () => {
    const run = graphRun(NIGHTLY_ETL);
    await create(run);
    await succeed(await claim(run.id, 'extract'), 1);
    await die(await claim(run.id, 'transform'));
    expect((await graph(run.id)).steps).toMatchObject({ transform: 'dead', load: 'skipped', audit: 'queued', cleanup: 'waiting' });
    const load = (await runs.getMany(t.db, [await stepRunId(run.id, 'load')]))[0]!;
    expect(load).toMatchObject({ state: 'cancelled', reasonCode: 'UPSTREAM_FAILED', reasonText: 'upstream step transform did not succeed' });

    await succeed(await claim(run.id, 'audit'), 2);
    const cleanup = await claim(run.id, 'cleanup');
    expect(cleanup.inputs).toEqual({ load: null, audit: 2 });
    await succeed(cleanup, null);
    const done = await graph(run.id);
    expect(done.run).toMatchObject({ state: 'dead', reasonCode: 'STEP_FAILED', reasonText: 'step transform ended dead (HANDLER_ERROR)' });
    expect((await t.db.query(`SELECT count(*)::int AS n FROM outbox WHERE aggregate_id = $1 AND topic = 'run.dead'`, [run.id])).rows[0].n).toBe(1);
    await expectHealthy();

    // Run again: the steps that succeeded keep their results; the rest run again, and so does every
    // step after one that runs again (cleanup succeeded, but after load).
    const again: NewRun = { ...graphRun(NIGHTLY_ETL), origin: 'retry', sourceRunId: run.id };
    const { readySteps } = await create(again);
    expect(readySteps.map((r) => r.id)).toEqual([await stepRunId(again.id, 'transform')]);
    expect((await graph(again.id)).steps).toEqual({ extract: 'succeeded', transform: 'queued', load: 'waiting', audit: 'succeeded', cleanup: 'waiting' });
    const transform = await claim(again.id, 'transform');
    expect(transform.inputs).toEqual({ extract: 1 });
    await succeed(transform, 'ok');
    await succeed(await claim(again.id, 'load'), 'ok');
    await succeed(await claim(again.id, 'cleanup'), null);
    expect((await graph(again.id)).run).toMatchObject({ state: 'succeeded' });
    await expectHealthy();
  });

  it('cancels a graph through its steps: the running one is asked to stop, the queued and waiting ones end, the run ends with the last', async () => {
    const run = graphRun(NIGHTLY_ETL);
    await create(run);
    await succeed(await claim(run.id, 'extract'), 1);
    const transform = await claim(run.id, 'transform');
    const ended = await inTransaction(t.db, (tx) => runs.requestCancel(tx, [run.id], 'test', 'CANCELLED_BY_USER', 'cancelled by the test'));
    expect(ended).toEqual([]);
    expect((await graph(run.id)).steps).toEqual({ extract: 'succeeded', transform: 'running', audit: 'cancelled', load: 'skipped', cleanup: 'skipped' });
    const renewal = await protocol.renewLeases(t.db, 'worker-a', [{ id: transform.id, epoch: transform.leaseEpoch }], 60_000);
    expect(renewal[0]!.cancelRequested).toBe(true);
    await protocol.finishMany(t.db, 'worker-a', [
      { runId: transform.id, epoch: transform.leaseEpoch, verdict: { state: 'cancelled', result: null, error: null, reasonCode: 'CANCELLED_BY_USER', reasonText: null, response: null } },
    ]);
    expect((await graph(run.id)).run).toMatchObject({ state: 'cancelled', reasonCode: 'CANCELLED_BY_USER' });
    await expectHealthy();

    // A graph none of whose steps started ends at once.
    const idle = graphRun(NIGHTLY_ETL);
    await create(idle);
    expect(await inTransaction(t.db, (tx) => runs.requestCancel(tx, [idle.id], 'test', 'CANCELLED_BY_USER', 'cancelled by the test'))).toEqual([idle.id]);
    expect((await graph(idle.id)).steps).toEqual({ extract: 'cancelled', transform: 'skipped', load: 'skipped', audit: 'skipped', cleanup: 'skipped' });
    await expectHealthy();
  });

  it('takes a step back from a dead worker as any run, and a graph parked behind its schedule starts its first steps when released', async () => {
    const run = graphRun([step('only')]);
    await create(run);
    const only = await claim(run.id, 'only');
    await t.db.query(`UPDATE runs SET lease_expires_at = now() - interval '1 hour' WHERE id = $1`, [only.id]);
    const reaped = await new RunRecoveryRepository().reapExpired(t.db, { skewMs: 0, backoffMs: 0, crashBudget: 1, limit: 100, actor: 'reaper' });
    expect(reaped.poisoned).toContain(only.id);
    expect((await graph(run.id)).run).toMatchObject({ state: 'dead', reasonCode: 'STEP_FAILED', reasonText: 'step only ended dead (POISONED)' });
    await expectHealthy();

    const nowMs = Date.now();
    const { spec } = readScheduleCreate({ every: '1h', steps: NIGHTLY_ETL.slice(0, 2).map((s) => ({ name: s.name, dependsOn: s.dependsOn, target: { type: 'handler', name: 'noop' } })) }, nowMs);
    const scheduleId = newId(nowMs);
    await inTransaction(t.db, (tx) =>
      new ScheduleRepository().create(tx, { id: scheduleId, namespaceId, name: scheduleId, spec, specHash: specHash(spec), paused: false, idempotencyKey: null, requestHash: null, nextFireAt: new Date(nowMs + 3_600_000) }),
    );
    const parked = graphRun(NIGHTLY_ETL.slice(0, 2), { scheduleId, origin: 'schedule', exclusive: true, availableAt: null, reasonCode: 'OVERLAP_BUFFERED' });
    expect((await create(parked)).readySteps).toEqual([]);
    expect((await graph(parked.id)).steps).toEqual({ extract: 'waiting', transform: 'waiting' });
    const released = await new RunRecoveryRepository().releaseParked(t.db, scheduleId, 'test');
    expect(released).toMatchObject([{ id: await stepRunId(parked.id, 'extract'), queue: 'default' }]);
    expect((await graph(parked.id)).steps).toEqual({ extract: 'queued', transform: 'waiting' });
    await expectHealthy();
  });
});
