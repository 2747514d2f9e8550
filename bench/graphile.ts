/**
 * graphile-worker, a job queue on Postgres alone, as a second anchor beside raw BullMQ: its
 * throughput and its herd, in this process, with the batching options of its own performance page
 * (https://worker.graphile.org/docs/performance): 24 jobs at once, a local queue of 500 jobs
 * fetched and locked in one query, and completions and failures batched (delay 0).
 */
import { EventEmitter } from 'node:events';
import pg from 'pg';
import { Logger, makeWorkerUtils, run, runMigrations, type Runner, type RunnerOptions, type TaskList, type WorkerEvents, type WorkerUtils } from 'graphile-worker';
import type { Herd } from './herd.js';
import { RUNS, type Throughput } from './kairos.js';
import { cpuPerRun, cpuSpent, percentile, sandbox, sleep, until, type Sandbox } from './sandbox.js';

export const GRAPHILE_CONCURRENCY = 24;
/** How often graphile-worker looks for jobs that came due: its default `pollInterval`, set here since the herd is timed by it. */
const POLL_MS = 2_000;

/** Its info lines (connected, looking for jobs, ...) would fill the tables' output; its errors still show. */
const logger = new Logger(() => (level, message) => void (level === 'error' && console.error(`graphile-worker: ${message}`)));

interface Started {
  runner: Runner;
  utils: WorkerUtils;
  /**
   * The runner's and the producer's connections, ours to end: graphile-worker ends a pool it made
   * without waiting, once it no longer handles its errors, so the sandbox's drop would crash the bench.
   */
  pool: pg.Pool;
}

/**
 * Migrates the sandbox to graphile-worker's schema (before any timing), then starts its runner and
 * returns once it listens for new jobs: a job added before that waits for the next poll (2 s).
 */
async function start(box: Sandbox, taskList: TaskList): Promise<Started> {
  // The performance page's 25 connections for the runner (its LISTEN one included), one more for the producer.
  const pool = new pg.Pool({ connectionString: box.url, max: GRAPHILE_CONCURRENCY + 2 });
  // Handlers of its own, as graphile-worker asks of a pool it is given (a client's error is raised again by its next query).
  pool.on('error', () => undefined);
  pool.on('connect', (client) => client.on('error', () => undefined));
  const events: WorkerEvents = new EventEmitter();
  const listening = new Promise<void>((resolve) => events.once('pool:listen:success', () => resolve()));
  const options: RunnerOptions = {
    taskList,
    noHandleSignals: true,
    pgPool: pool,
    preset: {
      worker: {
        concurrentJobs: GRAPHILE_CONCURRENCY,
        localQueue: { size: 500 },
        completeJobBatchDelay: 0,
        failJobBatchDelay: 0,
        pollInterval: POLL_MS,
        logger,
        events,
      },
    },
  };
  await runMigrations(options);
  const runner = await run(options);
  await listening;
  const utils = await makeWorkerUtils({ pgPool: pool, logger });
  return { runner, utils, pool };
}

async function stop(box: Sandbox, { runner, utils, pool }: Started): Promise<void> {
  await utils.release();
  await runner.stop();
  await pool.end();
  await box.drop();
}

/** Jobs per second: RUNS noop jobs added with addJobs in batches of 500, as raw BullMQ adds them, until all are complete. */
export async function graphileThroughput(): Promise<Throughput> {
  const box = await sandbox('graphile_tp', undefined, 'postgres');
  const started = await start(box, { noop: () => undefined });
  const { runner, utils } = started;
  let done = 0;
  runner.events.on('job:success', () => done++);
  const cpu = cpuSpent();
  const from = performance.now();
  for (let i = 0; i < RUNS; i += 500) {
    await utils.addJobs(Array.from({ length: Math.min(500, RUNS - i) }, (_, k) => ({ identifier: 'noop', payload: { n: i + k } })));
  }
  await until(async () => done >= RUNS, 300_000, 'graphile-worker jobs');
  // job:success is emitted before the batch deleting the completed jobs commits: the phase ends
  // once the jobs table is empty, as Kairos's ends once its verdicts are committed.
  await until(async () => (await box.db.query(`SELECT NOT EXISTS (SELECT 1 FROM graphile_worker._private_jobs) AS empty`)).rows[0].empty, 60_000, 'graphile-worker completions', 10);
  const elapsed = performance.now() - from;
  const cpuPerJob = cpuPerRun(cpu, RUNS);
  await stop(box, started);
  return { perSecond: (RUNS / elapsed) * 1000, cpu: cpuPerJob };
}

/**
 * The herd: `b` jobs with one runAt T0, added before it in batches of 1,000 as raw BullMQ adds its
 * delayed jobs. graphile-worker finds jobs that come due by polling; each batch's notification makes
 * the pool look at once and restarts its poll timer. The last batch is added half a poll before T0,
 * so the herd is found about POLL_MS / 2 after T0: the mean wait of a deployment, whose polls fall
 * at any moment around T0. Left to the 10 s head start (5 polls), it would be the time the adds took.
 */
export async function graphileHerd(b: number): Promise<Herd> {
  const box = await sandbox('herd_graphile', undefined, 'postgres');
  const late: number[] = [];
  let t0 = 0;
  const started = await start(box, { herd: () => void late.push(Date.now() - t0) });
  t0 = Date.now() + 10_000;
  const add = (from: number) => started.utils.addJobs(Array.from({ length: Math.min(1_000, b - from) }, () => ({ identifier: 'herd', payload: {}, runAt: new Date(t0) })));
  const last = Math.floor((b - 1) / 1_000) * 1_000;
  for (let i = 0; i < last; i += 1_000) await add(i);
  if (Date.now() > t0 - POLL_MS / 2) throw new Error('bench: adding the graphile-worker herd took longer than its head start');
  await sleep(t0 - POLL_MS / 2 - Date.now());
  await add(last);
  const insertedBeforeMs = t0 - Date.now();
  await sleep(Math.max(0, t0 - Date.now()));
  const cpuAtT0 = cpuSpent();
  await until(async () => late.length >= b, 300_000, 'the graphile-worker herd', 100);
  const cpu = cpuPerRun(cpuAtT0, b);
  await stop(box, started);
  late.sort((x, y) => x - y);
  const allStartedMs = late.at(-1)!;
  return { allStartedMs, p50: percentile(late, 50), p99: percentile(late, 99), runsPerSecond: b / Math.max(0.001, allStartedMs / 1000), madeAhead: 1, insertedBeforeMs, lastWrittenMs: 0, rss: [], cpu };
}
