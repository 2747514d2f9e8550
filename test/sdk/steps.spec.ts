/**
 * Multi-step runs end to end, on user workers built from the packed @kairos/sdk beside the
 * built-in worker: the nightly ETL graph (extract; transform and audit after it; load, an
 * HTTP step, after transform; cleanup always, last) runs in order with its parallel branch and its
 * inputs; a failing step is retried, then dead, what needed it skipped and the always step run, and
 * running the graph again re-runs only what did not succeed; a worker killed with kill -9 mid-step
 * loses nothing and doubles nothing; the transport wiped mid-graph loses no step.
 */
import { createServer, type Server } from 'node:http';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { StartedKairos } from '@kairos/process';
import { api, runInState, startInProcess, useTestEnvironment, waitFor, wipeTransport } from '../support/kairos.js';
import { userProject, userWorkers, type UserProject } from './packed-sdk.js';

/** Each execution appends a line: `start|end <step> <tag> <pid>`; the tag is the run's payload.tag. */
const WORKER_SCRIPT = `
import { appendFileSync, existsSync } from 'node:fs';
import { KairosWorker } from '@kairos/sdk';

const log = (what, step, payload) => appendFileSync('executions.log', what + ' ' + step + ' ' + payload.tag + ' ' + process.pid + '\\n');
const sleep = (ms, signal) => new Promise((resolve, reject) => {
  const timer = setTimeout(resolve, ms);
  signal.addEventListener('abort', () => { clearTimeout(timer); reject(signal.reason); }, { once: true });
});

const worker = new KairosWorker({
  queue: 'etl',
  concurrency: 4,
  handlers: {
    extract: async ({ payload, stepName, inputs }) => {
      log('end', stepName, payload);
      return { rows: 3, day: payload.day, inputs };
    },
    transform: async ({ payload, stepName, inputs, signal, attempt }) => {
      log('start', stepName, payload);
      await sleep(payload.transformMs ?? 0, signal);
      if (existsSync('fail-transform')) throw new Error('transform failed at attempt ' + attempt);
      log('end', stepName, payload);
      return { stepName, from: inputs.extract.rows };
    },
    cleanup: async ({ payload, stepName, inputs }) => {
      log('end', stepName, payload);
      return { saw: Object.keys(inputs).sort() };
    },
  },
});
await worker.start();
console.log('ready ' + worker.id);
`;

type Step = { name: string; state: string; attempt: number; result: unknown; reasonCode: string | null; startedAt: string | null; finishedAt: string | null; runId: string };

describe('multi-step runs on user workers', () => {
  const t = useTestEnvironment();
  let control: StartedKairos;
  let client: ReturnType<typeof api>;
  let project: UserProject;
  let warehouse: Server;
  let warehouseUrl: string;
  const loads: { step: string; inputs: unknown; payload: { tag: string } }[] = [];
  const workers = userWorkers(t, () => project, { KAIROS_RUN_LEASE_TTL: '2s', KAIROS_SHUTDOWN_GRACE: '1s' });
  const startWorker = workers.start;

  beforeAll(async () => {
    warehouse = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        loads.push(JSON.parse(body));
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"loaded":true}');
      });
    });
    await new Promise<void>((r) => warehouse.listen(0, '127.0.0.1', r));
    warehouseUrl = `http://127.0.0.1:${(warehouse.address() as { port: number }).port}/load`;
    [project, control] = await Promise.all([
      userProject({ 'worker.mjs': WORKER_SCRIPT }),
      startInProcess(t.env({ KAIROS_RUN_LEASE_TTL: '2s', KAIROS_HTTP_ALLOWLIST: '127.0.0.1' })),
    ]);
    client = api(control.url);
  }, 300_000);

  afterEach(async () => {
    await workers.killAll();
    await rm(join(project.dir, 'fail-transform'), { force: true });
  });

  afterAll(async () => {
    await control?.app.close();
    await project?.remove();
    await new Promise((r) => warehouse?.close(r));
  });

  const etl = (name: string) => ({ type: 'handler', name, queue: 'etl' });
  /** The example, with load an HTTP step to the test's warehouse. */
  const nightlyEtl = () => [
    { name: 'extract', target: etl('extract') },
    { name: 'transform', dependsOn: ['extract'], target: etl('transform'), retry: { maxAttempts: 2, backoff: { type: 'fixed', base: '200ms' } }, timeout: '10m' },
    { name: 'load', dependsOn: ['transform'], target: { type: 'http', url: warehouseUrl } },
    { name: 'audit', dependsOn: ['extract'], target: { type: 'handler', name: 'echo' } },
    { name: 'cleanup', dependsOn: ['load', 'audit'], when: 'always', target: etl('cleanup') },
  ];
  const startGraph = async (tag: string, extra: Record<string, unknown> = {}) => {
    const created = await client.post('/v1/runs', { steps: nightlyEtl(), payload: { day: 'yesterday', tag, ...extra }, retry: { maxAttempts: 1 } });
    expect(created.status).toBe(201);
    return created.body as { id: string; steps: Step[]; target: null };
  };
  const stepsOf = (run: { steps: Step[] }) => Object.fromEntries(run.steps.map((s) => [s.name, s]));
  const ms = (instant: string | null) => new Date(instant!).getTime();
  /** How many times each step logged `what` for this tag. */
  async function executions(tag: string, what: 'start' | 'end'): Promise<Record<string, number>> {
    const log = await readFile(join(project.dir, 'executions.log'), 'utf8').catch(() => '');
    const counts: Record<string, number> = {};
    for (const [kind, step, lineTag] of log.split('\n').map((l) => l.split(' '))) {
      if (kind === what && lineTag === tag) counts[step!] = (counts[step!] ?? 0) + 1;
    }
    return counts;
  }
  const stepRunStart = (runId: string, step: string) =>
    waitFor(async () => {
      const { rows } = await t.db.query(`SELECT lease_owner FROM runs WHERE parent_run_id = $1 AND step_name = $2 AND state = 'running'`, [runId, step]);
      return rows[0]?.lease_owner as string | undefined;
    }, `step ${step} to start`);

  it('runs the five steps in order, audit beside transform, each with the results of its upstream steps as inputs, cleanup last', async () => {
    await startWorker();
    const created = await startGraph('order', { transformMs: 1_500 });
    expect(created.target).toBeNull();
    expect(created.steps.map((s) => s.name)).toEqual(['extract', 'transform', 'load', 'audit', 'cleanup']);

    const done = await runInState(client, created.id, ['succeeded', 'dead', 'cancelled'], 45_000);
    expect(done).toMatchObject({ state: 'succeeded', reasonCode: 'SUCCEEDED' });
    const steps = stepsOf(done);
    expect(Object.values(steps).map((s) => s.state)).toEqual(['succeeded', 'succeeded', 'succeeded', 'succeeded', 'succeeded']);
    // Order: each step started after every step it depends on had finished.
    expect(ms(steps.transform!.startedAt)).toBeGreaterThanOrEqual(ms(steps.extract!.finishedAt));
    expect(ms(steps.audit!.startedAt)).toBeGreaterThanOrEqual(ms(steps.extract!.finishedAt));
    expect(ms(steps.load!.startedAt)).toBeGreaterThanOrEqual(ms(steps.transform!.finishedAt));
    expect(ms(steps.cleanup!.startedAt)).toBeGreaterThanOrEqual(Math.max(ms(steps.load!.finishedAt), ms(steps.audit!.finishedAt)));
    // audit ran while transform (1.5 s) was running.
    expect(ms(steps.audit!.finishedAt)).toBeLessThan(ms(steps.transform!.finishedAt));

    expect(steps.extract!.result).toEqual({ rows: 3, day: 'yesterday', inputs: {} });
    expect(steps.transform!.result).toEqual({ stepName: 'transform', from: 3 });
    expect(steps.audit!.result).toEqual({ day: 'yesterday', tag: 'order', transformMs: 1_500 });
    expect(steps.cleanup!.result).toEqual({ saw: ['audit', 'load'] });
    // The HTTP step's body carries its name and inputs.
    const load = loads.find((l) => l.payload.tag === 'order')!;
    expect(load).toMatchObject({ step: 'load', inputs: { transform: { stepName: 'transform', from: 3 } } });
    expect(done.result).toMatchObject({ extract: steps.extract!.result, cleanup: { saw: ['audit', 'load'] } });
    // A step's own story is a run's.
    const story = (await client.get(`/v1/runs/${steps.transform!.runId}/events`)).body.items.map((e: { kind: string }) => e.kind);
    expect(story).toEqual(['queued', 'released', 'claimed', 'succeeded']);
    expect((await client.get(`/v1/runs/${steps.transform!.runId}`)).body).toMatchObject({ parentRunId: created.id, stepName: 'transform' });
    // Step runs are not listed as runs of their own.
    const listed = (await client.get('/v1/runs?limit=100')).body.items.map((r: { id: string }) => r.id);
    expect(listed).toContain(created.id);
    expect(listed).not.toContain(steps.transform!.runId);
    // GraphQL tells the same.
    const gql = await client.post('/graphql', { query: `query($id: ID!) { run(id: $id) { state steps { name state dependsOn when } } }`, variables: { id: created.id } });
    expect(gql.body.data.run.steps.map((s: { name: string; state: string }) => `${s.name}:${s.state}`)).toEqual(
      ['extract', 'transform', 'load', 'audit', 'cleanup'].map((n) => `${n}:succeeded`),
    );
  }, 90_000);

  it('retries a failing step, then ends it dead, skips what needed it, runs cleanup; retry re-runs transform, load and cleanup only', async () => {
    await startWorker();
    await writeFile(join(project.dir, 'fail-transform'), '');
    const created = await startGraph('failing');
    const dead = await runInState(client, created.id, ['succeeded', 'dead', 'cancelled'], 45_000);
    expect(dead).toMatchObject({ state: 'dead', reasonCode: 'STEP_FAILED' });
    const steps = stepsOf(dead);
    expect(steps.transform).toMatchObject({ state: 'dead', attempt: 2, reasonCode: 'HANDLER_ERROR' });
    expect(steps.load).toMatchObject({ state: 'skipped', reasonCode: 'UPSTREAM_FAILED' });
    expect(steps.cleanup).toMatchObject({ state: 'succeeded', result: { saw: ['audit', 'load'] } });
    expect(steps.extract!.state).toBe('succeeded');
    expect(steps.audit!.state).toBe('succeeded');
    expect(await executions('failing', 'start')).toMatchObject({ transform: 2 });

    await rm(join(project.dir, 'fail-transform'));
    const retried = await client.post(`/v1/runs/${created.id}/retry`);
    expect(retried.status).toBe(201);
    const again = await runInState(client, retried.body.id, ['succeeded', 'dead', 'cancelled'], 45_000);
    expect(again).toMatchObject({ state: 'succeeded', origin: 'retry', sourceRunId: created.id });
    const kept = stepsOf(again);
    // extract and audit kept their results and instants; transform, load and cleanup ran again.
    expect(kept.extract).toMatchObject({ state: 'succeeded', result: steps.extract!.result, startedAt: steps.extract!.startedAt });
    expect(kept.audit).toMatchObject({ state: 'succeeded', startedAt: steps.audit!.startedAt });
    expect(kept.transform).toMatchObject({ state: 'succeeded', attempt: 1 });
    expect(ms(kept.cleanup!.startedAt)).toBeGreaterThan(ms(steps.cleanup!.finishedAt));
    expect(await executions('failing', 'end')).toEqual({ extract: 1, transform: 1, cleanup: 2 });
    expect(loads.filter((l) => l.payload.tag === 'failing')).toHaveLength(1);
  }, 90_000);

  it('takes back the middle step of a worker killed with kill -9; no succeeded step runs again', async () => {
    const first = await startWorker();
    const second = await startWorker();
    const created = await startGraph('killed', { transformMs: 4_000 });
    // Mid-step: the handler has begun (a claim alone is not yet the middle of the step).
    await waitFor(async () => ((await executions('killed', 'start')).transform === 1 ? true : undefined), 'transform to begin');
    const holder = await stepRunStart(created.id, 'transform');
    (holder === first.id ? first : second).process.kill('SIGKILL');

    const done = await runInState(client, created.id, ['succeeded', 'dead', 'cancelled'], 60_000);
    expect(done.state).toBe('succeeded');
    const transform = (await client.get(`/v1/runs/${stepsOf(done).transform!.runId}`)).body;
    expect(transform).toMatchObject({ state: 'succeeded', crashCount: 1 });
    // The audit of the window: each step executed to success once; transform was started twice.
    expect(await executions('killed', 'end')).toEqual({ extract: 1, transform: 1, cleanup: 1 });
    expect(await executions('killed', 'start')).toEqual({ transform: 2 });
    expect(loads.filter((l) => l.payload.tag === 'killed')).toHaveLength(1);
  }, 90_000);

  it('runs every remaining step when the transport is wiped while the graph is half done', async () => {
    // No user worker yet: extract waits in the transport, which is then wiped.
    const created = await startGraph('wiped', { transformMs: 2_000 });
    await wipeTransport(t);
    await startWorker();
    await stepRunStart(created.id, 'transform');
    // And again while transform runs and audit may still wait in the transport.
    await wipeTransport(t);
    const done = await runInState(client, created.id, ['succeeded', 'dead', 'cancelled'], 60_000);
    expect(done.state).toBe('succeeded');
    expect(await executions('wiped', 'end')).toEqual({ extract: 1, transform: 1, cleanup: 1 });
  }, 90_000);
});
