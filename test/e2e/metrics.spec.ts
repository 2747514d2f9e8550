/**
 * GET /metrics on every process: fires, lateness, verdicts and runs by state as a Prometheus
 * server would read them, each app reporting from its own registry, and a scrape that still
 * answers when a gauge's source does not.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { Registry } from 'prom-client';
import { RUN_STATES } from '@kairos/domain';
import { DatabaseClock, type Db } from '@kairos/ledger';
import type { RunsQueues } from '@kairos/queue';
import { KairosMetrics, type StartedKairos } from '@kairos/process';
import { api, startInProcess, useKairos, waitFor } from '../support/kairos.js';

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const SAMPLE_LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+-?\d+)?$/;
const LABEL_PAIR = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

/** Parses the Prometheus text exposition format into samples (comments and blank lines skipped). */
function parseExposition(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = SAMPLE_LINE.exec(line);
    if (!match) throw new Error(`not a Prometheus sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const [, key, value] of (match[2] ?? '').matchAll(LABEL_PAIR)) labels[key!] = value!;
    samples.push({ name: match[1]!, labels, value: Number(match[3]) });
  }
  return samples;
}

/** The value of the sample named `name` whose labels are exactly `labels`, or undefined. */
function valueOf(samples: Sample[], name: string, labels: Record<string, string> = {}): number | undefined {
  const wanted = Object.entries(labels);
  const found = samples.find(
    (s) => s.name === name && Object.keys(s.labels).length === wanted.length && wanted.every(([k, v]) => s.labels[k] === v),
  );
  return found?.value;
}

async function scrape(baseUrl: string): Promise<{ contentType: string | null; samples: Sample[] }> {
  const response = await fetch(`${baseUrl}/metrics`);
  expect(response.status).toBe(200);
  return { contentType: response.headers.get('content-type'), samples: parseExposition(await response.text()) };
}

describe('Prometheus metrics', () => {
  let workerOnly: StartedKairos | undefined;

  const { t, kairos } = useKairos();

  afterAll(async () => {
    await workerOnly?.app.close();
  });

  it('reports fires, lateness, verdicts, runs by state, queue depth and leadership', async () => {
    const client = api(kairos.url);
    const schedule = await client.post('/v1/schedules', { name: 'metrics', every: '1s', target: { type: 'handler', name: 'noop' } });
    expect(schedule.status).toBe(201);
    const failing = await client.post('/v1/runs', { target: { type: 'handler', name: 'fail' }, payload: { retryable: false } });
    expect(failing.status).toBe(201);

    const count = async (sql: string): Promise<number> => (await t.db.query(sql)).rows[0].n;
    await waitFor(
      async () => ((await count(`SELECT count(*)::int AS n FROM ticks WHERE outcome = 'triggered'`)) >= 3 ? true : undefined),
      'three slots to fire',
    );
    await client.post(`/v1/schedules/${schedule.body.id}/pause`);
    await waitFor(
      async () => ((await count(`SELECT count(*)::int AS n FROM runs WHERE state IN ('queued', 'running')`)) === 0 ? true : undefined),
      'the runs to finish',
    );
    const succeeded = await count(`SELECT count(*)::int AS n FROM runs WHERE state = 'succeeded'`);
    const triggered = await count(`SELECT count(*)::int AS n FROM ticks WHERE outcome = 'triggered'`);
    // The pause withdrew a run made ahead (lookahead), if there was one, and deleted its tick after it was counted.
    const withdrawn = await count(`SELECT count(*)::int AS n FROM runs WHERE reason_code = 'SCHEDULE_PAUSED'`);
    // Slots are missed only in a gap without a leader, which a starved machine can open by
    // keeping the leader from renewing its 2 s lease in time; the counter must agree with the ledger.
    const missed = await count(`SELECT count(*)::int AS n FROM ticks WHERE outcome = 'missed'`);
    expect(succeeded).toBeGreaterThanOrEqual(2);

    // A final verdict is counted once its write-behind batch resolved, a moment after the commit;
    // its job leaves Redis when BullMQ completes it, which races that write.
    const queueStates = ['waiting', 'active', 'delayed', 'failed', 'prioritized'];
    const { contentType, samples } = await waitFor(async () => {
      const scraped = await scrape(kairos.url);
      const counted = valueOf(scraped.samples, 'kairos_run_verdicts_total', { state: 'succeeded', reason_code: 'SUCCEEDED' });
      const queued = queueStates.map((state) => valueOf(scraped.samples, 'kairos_queue_jobs', { state }));
      return counted === succeeded && queued.every((n) => n === 0) ? scraped : undefined;
    }, 'the succeeded verdicts to be counted and their jobs to leave Redis');

    expect(contentType).toMatch(/^text\/plain; version=0\.0\.4; charset=utf-8$/);
    expect(valueOf(samples, 'kairos_slots_fired_total', { outcome: 'triggered' })).toBe(triggered + withdrawn);
    expect(triggered).toBeGreaterThanOrEqual(2);
    expect(valueOf(samples, 'kairos_slots_fired_total', { outcome: 'missed' })).toBe(missed);

    const lateness = valueOf(samples, 'kairos_fire_lateness_seconds_count');
    expect(lateness).toBeGreaterThanOrEqual(2);
    expect(lateness).toBe(succeeded);
    expect(valueOf(samples, 'kairos_fire_lateness_seconds_bucket', { le: '+Inf' })).toBe(lateness);
    expect(valueOf(samples, 'kairos_fire_lateness_seconds_bucket', { le: '60' })).toBe(lateness);

    expect(valueOf(samples, 'kairos_run_verdicts_total', { state: 'dead', reason_code: 'HANDLER_NON_RETRYABLE' })).toBe(1);
    expect(valueOf(samples, 'kairos_lease_losses_total')).toBe(0);

    for (const state of RUN_STATES) {
      const inDb = await count(`SELECT count(*)::int AS n FROM runs WHERE state = '${state}'`);
      expect(valueOf(samples, 'kairos_runs', { state }), `kairos_runs{state="${state}"}`).toBe(inDb);
    }
    expect(valueOf(samples, 'kairos_runs', { state: 'succeeded' })).toBe(succeeded);
    expect(valueOf(samples, 'kairos_runs', { state: 'dead' })).toBe(1);

    // Every run has ended and finished jobs leave Redis: the queue is empty in every state.
    for (const state of queueStates) {
      expect(valueOf(samples, 'kairos_queue_jobs', { state }), `kairos_queue_jobs{state="${state}"}`).toBe(0);
    }
    expect(valueOf(samples, 'kairos_leader')).toBe(1);
    // The only scheduler owns every tick partition.
    expect(valueOf(samples, 'kairos_owned_partitions')).toBe(16);
    // The test's host and its database share one clock: the measured offset is a few ms at most.
    expect(Math.abs(valueOf(samples, 'kairos_clock_offset_seconds')!)).toBeLessThan(0.05);

    // prom-client's process metrics, under the kairos_ prefix only.
    expect(valueOf(samples, 'kairos_process_cpu_user_seconds_total')).toBeGreaterThan(0);
    expect(samples.some((s) => s.name.startsWith('process_') || s.name.startsWith('nodejs_'))).toBe(false);
  });

  it('serves /metrics on a worker-only process, from its own registry and without kairos_leader', async () => {
    workerOnly = await startInProcess(t.env(), ['worker']);
    const { samples } = await scrape(workerOnly.url);
    const { samples: allRoles } = await scrape(kairos.url);

    // kairos_leader exists only where the scheduler role runs: count() of it is the number of schedulers.
    expect(samples.some((s) => s.name === 'kairos_leader')).toBe(false);
    expect(samples.some((s) => s.name === 'kairos_owned_partitions')).toBe(false);
    // Its own counters: the fires and verdicts of the other app in this process are not here.
    expect(valueOf(samples, 'kairos_slots_fired_total', { outcome: 'triggered' })).toBe(0);
    expect(samples.some((s) => s.name === 'kairos_run_verdicts_total')).toBe(false);
    expect(valueOf(samples, 'kairos_fire_lateness_seconds_count')).toBe(0);
    // The ledger and the queue are shared, so what is read from them at scrape time agrees.
    for (const state of RUN_STATES) {
      expect(valueOf(samples, 'kairos_runs', { state })).toBe(valueOf(allRoles, 'kairos_runs', { state }));
    }
    expect(valueOf(samples, 'kairos_queue_jobs', { state: 'waiting' })).toBe(valueOf(allRoles, 'kairos_queue_jobs', { state: 'waiting' }));
  });
});

describe('a scrape whose sources do not answer', () => {
  it('leaves out the runs and queue gauges and still reports everything else', async () => {
    const registry = new Registry();
    const hungDb = { query: () => new Promise(() => undefined) } as unknown as Db;
    const deadQueues = { jobCounts: () => Promise.reject(new Error('Connection is closed.')) } as unknown as RunsQueues;
    const metrics = new KairosMetrics(registry, hungDb, deadQueues, new DatabaseClock(hungDb));
    metrics.leaseLost();

    const startedAt = Date.now();
    const samples = parseExposition(await registry.metrics());
    expect(Date.now() - startedAt).toBeLessThan(5_000);
    expect(samples.some((s) => s.name === 'kairos_runs')).toBe(false);
    expect(samples.some((s) => s.name === 'kairos_queue_jobs')).toBe(false);
    expect(valueOf(samples, 'kairos_lease_losses_total')).toBe(1);
  });
});
