/**
 * What the scenarios that start Kairos in this process share: the runs and rounds of a throughput
 * phase, the worker concurrency both sides use, the transports measured, a Kairos of the scheduler
 * and the built-in worker on a sandbox, and the durable throughput of the built-in worker or of a
 * user's SDK worker.
 */
import { Registry } from 'prom-client';
import { newId } from '@kairos/domain';
import { RunRepository, dispatchItemOf, inTransaction, manualRun } from '@kairos/ledger';
import { TRANSPORT_SCHEMA, loadConfig, type TransportConfig } from '@kairos/config';
import { startKairos, type StartedKairos } from '@kairos/process';
import { KairosWorker } from '@kairos/sdk';
import { SchedulerModule } from '../apps/scheduler/src/scheduler.module.js';
import { WorkerModule } from '../apps/worker/src/worker.module.js';
import { produceRuns } from './producer.js';
import { REDIS_URL, cpuPerRun, cpuSpent, sandbox, until, type CpuSpent, type Sandbox } from './sandbox.js';

export const RUNS = Number(process.env.KAIROS_BENCH_RUNS ?? 20_000);
/** Throughput is measured in this many alternating rounds (BullMQ, Kairos, BullMQ, ...); medians are reported. */
export const ROUNDS = Number(process.env.KAIROS_BENCH_ROUNDS ?? 3);

/**
 * Jobs in flight per worker, the same on both sides: Kairos's default worker concurrency. Kairos's
 * worker batches the claims and verdicts of the jobs in flight into one statement each, so it
 * needs enough of them to fill its batches; raw BullMQ runs as fast at 32 as at 128 on this machine.
 */
export const CONCURRENCY = Number(process.env.KAIROS_BENCH_CONCURRENCY ?? loadConfig({}, ['worker']).worker.concurrency);
export type TransportKind = TransportConfig['kind'];
export const TRANSPORTS = (process.env.KAIROS_BENCH_TRANSPORTS ?? 'redis,postgres').split(',').map((t) => t.trim()) as TransportKind[];
for (const t of TRANSPORTS) if (t !== 'redis' && t !== 'postgres') throw new Error(`KAIROS_BENCH_TRANSPORTS: "${t}" is neither redis nor postgres`);
export { RETRY } from './producer.js';

export function transportOf(kind: TransportKind, box: Sandbox): TransportConfig {
  return kind === 'redis' ? { kind, url: REDIS_URL } : { kind, url: box.url, schema: TRANSPORT_SCHEMA };
}

/** The environment the bench gives Kairos on a sandbox, in this process or in a child (see apart.ts). */
export function kairosEnv(kind: TransportKind, box: Sandbox): Record<string, string> {
  return {
    DATABASE_URL: box.url,
    REDIS_URL: kind === 'redis' ? REDIS_URL : '',
    KAIROS_QUEUE_PREFIX: box.prefix,
    KAIROS_WORKER_CONCURRENCY: String(CONCURRENCY),
    DATABASE_POOL_SIZE: String(Math.min(40, CONCURRENCY + 8)),
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    // The runs a transport job carries, when the bench's own environment sets it: `KAIROS_DISPATCH_BATCH=1 npm run bench -- throughput` measures every run alone.
    ...(process.env.KAIROS_DISPATCH_BATCH !== undefined && { KAIROS_DISPATCH_BATCH: process.env.KAIROS_DISPATCH_BATCH }),
  };
}

export function kairos(kind: TransportKind, box: Sandbox, roles: ('scheduler' | 'worker')[] = ['scheduler', 'worker'], env: Record<string, string> = {}): Promise<StartedKairos> {
  return startKairos({ name: 'bench', defaultRoles: roles, modules: { scheduler: SchedulerModule, worker: WorkerModule } }, { ...kairosEnv(kind, box), ...env });
}

/** A throughput phase's rate and the CPU it spent per run. */
export interface Throughput {
  perSecond: number;
  cpu: CpuSpent;
}

/** What a scenario reads around a throughput phase besides its rate and CPU (an engine's counters, say). */
export interface ThroughputProbe {
  /** Once Kairos is up, before the first run is made (the phase is timed from after it). */
  before(box: Sandbox): Promise<void>;
  /** Once every run has its verdict, while Kairos still runs. */
  after(box: Sandbox): Promise<void>;
  /** Once Kairos has stopped, before its database is dropped. */
  stopped(box: Sandbox): Promise<void>;
}

/**
 * Durable runs per second through the built-in worker, or (`userWorker`) through the SDK's
 * KairosWorker serving a queue of its own next to a scheduler-only process. `engine` adds to
 * Kairos's environment; `probe` is called around the phase.
 */
export async function kairosThroughput(
  kind: TransportKind,
  userWorker = false,
  engine: (box: Sandbox) => Record<string, string> = () => ({}),
  probe?: ThroughputProbe,
): Promise<Throughput> {
  const box = await sandbox(`${userWorker ? 'sdk_tp' : 'kairos_tp'}_${kind}`, undefined, kind);
  const app = await kairos(kind, box, userWorker ? ['scheduler'] : ['scheduler', 'worker'], engine(box));
  let sdkSucceeded = 0;
  const worker = userWorker
    ? new KairosWorker({
        databaseUrl: box.url,
        redisUrl: kind === 'redis' ? REDIS_URL : null,
        queuePrefix: box.prefix,
        queue: 'bench',
        concurrency: CONCURRENCY,
        handlers: { noop: () => undefined },
        logger: { log: () => undefined, warn: (m) => console.warn(m), error: (m) => console.error(m) },
        observer: { verdict: (state) => void (state === 'succeeded' && sdkSucceeded++) },
      })
    : null;
  await worker?.start();
  const { RunDispatcher } = await import('@kairos/process');
  const dispatcher = app.app.get(RunDispatcher);
  await probe?.before(box);
  const cpu = cpuSpent();
  const started = performance.now();
  await produceRuns({ newId, manualRun, dispatchItemOf, inTransaction, runs: new RunRepository() }, box.db, dispatcher, RUNS, userWorker ? 'bench' : 'default');
  // Watch the workers' verdict counts, which count verdicts after they commit, as the raw side
  // counts completions in memory: polling the runs table would load the database being measured.
  const verdicts = app.app.get(Registry).getSingleMetric('kairos_run_verdicts_total')!;
  const succeeded = async () =>
    userWorker ? sdkSucceeded : ((await verdicts.get()).values.find((v) => v.labels.state === 'succeeded')?.value ?? 0);
  await until(async () => (await succeeded()) >= RUNS, 300_000, 'Kairos runs');
  const elapsed = performance.now() - started;
  const cpuPerDurableRun = cpuPerRun(cpu, RUNS);
  await probe?.after(box);
  const durable = (await box.db.query(`SELECT count(*)::int AS n FROM runs WHERE state = 'succeeded'`)).rows[0].n as number;
  if (durable !== RUNS) throw new Error(`bench: ${RUNS} verdicts counted but ${durable} runs succeeded in the ledger`);
  await worker?.stop();
  await app.app.close();
  await probe?.stopped(box);
  await box.drop();
  return { perSecond: (RUNS / elapsed) * 1000, cpu: cpuPerDurableRun };
}
