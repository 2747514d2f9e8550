/**
 * `npm run bench`: Kairos against raw BullMQ on this machine, in one run, on each transport (Redis,
 * and BullMQ's PostgreSQL backend in the bench database), same worker concurrency. Two figures each:
 *   throughput  durable runs per second: ledger insert, dispatch, BullMQ, claim, noop, fenced verdict
 *               (raw BullMQ: add, process noop, complete)
 *   lateness    actual start minus slot, p50/p99/max, for 2,000 one-shot timers spread over 10 s
 *               (raw BullMQ: 2,000 delayed jobs, processing start minus due time), and each start's
 *               distance from its slot for 50 every-second schedules over 20 s
 *   herd        B of N pending schedules due at one instant, on Redis (see herd.ts)
 *   batch       10,000 one-shot timers created with ten POST /v1/schedules/batch calls, beside
 *               1,000 created one request at a time, and an apply of 1,000 cron schedules
 *   protocol    a worker's claims and verdicts through the kairos_worker functions, beside the
 *               same statements sent directly (see protocol.ts)
 *   steps       steps per second of three-step chains (noop -> noop -> noop), beside single noop
 *               runs per second, the same number of calls each, in alternating rounds
 *   wake        durable functions: 1,000 runs each sleeping 2 s (ctx.sleep) on one SDK worker of
 *               concurrency 8; the lateness of each wake (its resuming claim minus its wake instant)
 *   engines     durable throughput on a Redis Cluster and through PgBouncer, beside one Redis and
 *               Postgres itself (KAIROS_BENCH_ENGINES, see enginesScenario)
 *   failover    the leader killed with -9 ten times under load with the roles apart, on one Redis and on a
 *               Redis Cluster behind PgBouncer: time to a new leader, missed slots, runs left (see failover.ts)
 *   events      1,000 events in one POST /v1/events/batch, each matching one schedule, beside 1,000 runs
 *               of one POST /v1/runs/batch (accepted, all started), and one event matched by 100
 *               schedules (its request's latency), against the API from the build (see events.ts)
 *   flow        the same events with and without a throttle and a rate limit (the event path's cost), and
 *               1,000 events gathered into 10 runs by a batch of maxSize 100, timeout 1s (see flow.ts)
 * Throughput runs in each machine shape of KAIROS_BENCH_SHAPES (`shared,production`: see inShape).
 * and the ratios Kairos/BullMQ, then Postgres/Redis. Throughput is also measured for a user's worker
 * (the SDK's KairosWorker on a queue of its own, beside a scheduler), to show it runs as fast as the
 * built-in one. Each phase gets a fresh database and Redis prefix. KAIROS_BENCH_TRANSPORTS
 * (`redis,postgres`) picks the transports; `npm run bench -- herd` (or `throughput`, `lateness`)
 * runs only the scenarios named.
 */
import type { Job, Queue, Worker } from 'bullmq';
import os from 'node:os';
import { Registry } from 'prom-client';
import { newId, specHash, type Target } from '@kairos/domain';
import { readScheduleCreate } from '@kairos/domain/wire';
import { RunRepository, ScheduleRepository, dispatchItemOf, inTransaction, manualRun } from '@kairos/ledger';
import { TRANSPORT_SCHEMA, loadConfig, type TransportConfig } from '@kairos/config';
import { openTransport, type RunsProcessor, type Transport } from '@kairos/queue';
import { startKairos, type StartedKairos } from '@kairos/process';
import { KairosWorker } from '@kairos/sdk';
import { SchedulerModule } from '../apps/scheduler/src/scheduler.module.js';
import { WorkerModule } from '../apps/worker/src/worker.module.js';
import { eventsScenario } from './events.js';
import { failoverScenario } from './failover.js';
import { flowScenario } from './flow.js';
import { herdScenario } from './herd.js';
import { protocolScenario } from './protocol.js';
import { REDIS_URL, cpuPerRun, cpuSpent, fmt, inShape, machineShapes, median, medianCpu, percentile, printTable, sandbox, sleep, startBuilt, until, type CpuSpent, type MachineShape, type Sandbox } from './sandbox.js';

const RUNS = Number(process.env.KAIROS_BENCH_RUNS ?? 20_000);
/** Throughput is measured in this many alternating rounds (BullMQ, Kairos, BullMQ, ...); medians are reported. */
const ROUNDS = Number(process.env.KAIROS_BENCH_ROUNDS ?? 3);
const TIMERS = Number(process.env.KAIROS_BENCH_TIMERS ?? 2_000);
const SPREAD_MS = 10_000;
/**
 * Jobs in flight per worker, the same on both sides: Kairos's default worker concurrency. Kairos's
 * worker batches the claims and verdicts of the jobs in flight into one statement each, so it
 * needs enough of them to fill its batches; raw BullMQ runs as fast at 32 as at 128 on this machine.
 */
const CONCURRENCY = Number(process.env.KAIROS_BENCH_CONCURRENCY ?? loadConfig({}, ['worker']).worker.concurrency);
type TransportKind = TransportConfig['kind'];
const TRANSPORTS = (process.env.KAIROS_BENCH_TRANSPORTS ?? 'redis,postgres').split(',').map((t) => t.trim()) as TransportKind[];
for (const t of TRANSPORTS) if (t !== 'redis' && t !== 'postgres') throw new Error(`KAIROS_BENCH_TRANSPORTS: "${t}" is neither redis nor postgres`);
const RETRY = { maxAttempts: 1, backoff: { type: 'fixed' as const, baseMs: 1_000, maxMs: 1_000, jitter: 0 } };

function transportOf(kind: TransportKind, box: Sandbox): TransportConfig {
  return kind === 'redis' ? { kind, url: REDIS_URL } : { kind, url: box.url, schema: TRANSPORT_SCHEMA };
}

/** Raw BullMQ on the transport, through the factory Kairos uses, with BullMQ's default lock settings. */
async function rawBullMQ<T>(kind: TransportKind, box: Sandbox, processor: (job: Job<T>) => Promise<void>): Promise<{ transport: Transport; queue: Queue<T>; worker: Worker<T> }> {
  const transport = await openTransport(transportOf(kind, box), box.prefix);
  const queue = transport.queue('bench') as unknown as Queue<T>;
  const worker = transport.worker('bench', processor as unknown as RunsProcessor, {
    concurrency: CONCURRENCY,
    maxStalledCount: 1,
    lockDuration: 30_000,
    stalledInterval: 30_000,
  }) as unknown as Worker<T>;
  await worker.waitUntilReady();
  return { transport, queue, worker };
}

function kairos(kind: TransportKind, box: Sandbox, roles: ('scheduler' | 'worker')[] = ['scheduler', 'worker'], env: Record<string, string> = {}): Promise<StartedKairos> {
  return startKairos(
    { name: 'bench', defaultRoles: roles, modules: { scheduler: SchedulerModule, worker: WorkerModule } },
    {
      DATABASE_URL: box.url,
      REDIS_URL: kind === 'redis' ? REDIS_URL : '',
      KAIROS_QUEUE_PREFIX: box.prefix,
      KAIROS_WORKER_CONCURRENCY: String(CONCURRENCY),
      DATABASE_POOL_SIZE: String(Math.min(40, CONCURRENCY + 8)),
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      ...env,
    },
  );
}

/** A throughput phase's rate and the CPU it spent per run. */
interface Throughput {
  perSecond: number;
  cpu: CpuSpent;
}

async function rawThroughput(kind: TransportKind): Promise<Throughput> {
  const box = await sandbox(`raw_tp_${kind}`, undefined, kind);
  let done = 0;
  const { transport, queue, worker } = await rawBullMQ<{ n: number }>(kind, box, async () => undefined);
  worker.on('completed', () => done++);
  const cpu = cpuSpent();
  const started = performance.now();
  for (let i = 0; i < RUNS; i += 500) {
    await queue.addBulk(Array.from({ length: Math.min(500, RUNS - i) }, (_, k) => ({ name: 'noop', data: { n: i + k }, opts: { removeOnComplete: true } })));
  }
  await until(async () => done >= RUNS, 300_000, 'raw BullMQ jobs');
  const elapsed = performance.now() - started;
  const cpuPerJob = cpuPerRun(cpu, RUNS);
  await worker.close();
  await queue.close();
  await transport.close();
  await box.drop();
  return { perSecond: (RUNS / elapsed) * 1000, cpu: cpuPerJob };
}

/**
 * Durable runs per second through the built-in worker, or (`userWorker`) through the SDK's
 * KairosWorker serving a queue of its own next to a scheduler-only process.
 */
async function kairosThroughput(kind: TransportKind, userWorker = false, engine: (box: Sandbox) => Record<string, string> = () => ({})): Promise<Throughput> {
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
  const runs = new RunRepository();
  const namespaceId = (await box.db.query(`SELECT id FROM namespaces WHERE name = 'default'`)).rows[0].id as string;
  const cpu = cpuSpent();
  const started = performance.now();
  for (let i = 0; i < RUNS; i += 500) {
    const now = new Date();
    const batch = Array.from({ length: Math.min(500, RUNS - i) }, () =>
      manualRun({
        id: newId(),
        namespaceId,
        availableAt: now,
        target: { type: 'handler', name: 'noop', queue: userWorker ? 'bench' : 'default' },
        payload: null,
        retry: RETRY,
        timeoutMs: 60_000,
        idempotencyKey: null,
        actor: 'bench',
      }),
    );
    await inTransaction(box.db, (tx) => runs.insertRuns(tx, batch));
    await dispatcher.dispatch(batch.flatMap((r) => dispatchItemOf(r) ?? []));
  }
  // Watch the workers' verdict counts, which count verdicts after they commit, as the raw side
  // counts completions in memory: polling the runs table would load the database being measured.
  const verdicts = app.app.get(Registry).getSingleMetric('kairos_run_verdicts_total')!;
  const succeeded = async () =>
    userWorker ? sdkSucceeded : ((await verdicts.get()).values.find((v) => v.labels.state === 'succeeded')?.value ?? 0);
  await until(async () => (await succeeded()) >= RUNS, 300_000, 'Kairos runs');
  const elapsed = performance.now() - started;
  const cpuPerDurableRun = cpuPerRun(cpu, RUNS);
  const durable = (await box.db.query(`SELECT count(*)::int AS n FROM runs WHERE state = 'succeeded'`)).rows[0].n as number;
  if (durable !== RUNS) throw new Error(`bench: ${RUNS} verdicts counted but ${durable} runs succeeded in the ledger`);
  await worker?.stop();
  await app.app.close();
  await box.drop();
  return { perSecond: (RUNS / elapsed) * 1000, cpu: cpuPerDurableRun };
}

async function rawLateness(kind: TransportKind): Promise<number[]> {
  const box = await sandbox(`raw_late_${kind}`, undefined, kind);
  const lateness: number[] = [];
  const { transport, queue, worker } = await rawBullMQ<{ due: number }>(kind, box, async (job) => void lateness.push(Date.now() - job.data.due));
  const t0 = Date.now() + 3_000;
  const jobs = Array.from({ length: TIMERS }, (_, i) => t0 + Math.floor((i * SPREAD_MS) / TIMERS));
  await queue.addBulk(jobs.map((due) => ({ name: 'timer', data: { due }, opts: { delay: due - Date.now(), removeOnComplete: true } })));
  await until(async () => lateness.length >= TIMERS, SPREAD_MS + 60_000, 'raw BullMQ timers');
  await worker.close();
  await queue.close();
  await transport.close();
  await box.drop();
  return lateness.sort((a, b) => a - b);
}

async function kairosLateness(kind: TransportKind): Promise<number[]> {
  const box = await sandbox(`kairos_late_${kind}`, undefined, kind);
  const app = await kairos(kind, box);
  const schedules = new ScheduleRepository();
  const namespaceId = (await box.db.query(`SELECT id FROM namespaces WHERE name = 'default'`)).rows[0].id as string;
  // Head start for writing the timers one by one; 2,000 took over 4.5 s on a slow day of this machine.
  const t0 = Date.now() + 10_000;
  await inTransaction(box.db, async (tx) => {
    for (let i = 0; i < TIMERS; i++) {
      const at = t0 + Math.floor((i * SPREAD_MS) / TIMERS);
      // The same reader as POST /v1/schedules, without the HTTP round trip per timer.
      const { spec } = readScheduleCreate(
        { name: `timer-${i}`, at: new Date(at).toISOString(), target: { type: 'handler', name: 'noop' }, overlap: 'allow', retry: { maxAttempts: 1 } },
        Date.now(),
      );
      await schedules.create(tx, { id: newId(), namespaceId, name: spec.name!, spec, specHash: specHash(spec), paused: false, idempotencyKey: null, requestHash: null, nextFireAt: new Date(at) });
    }
  });
  if (Date.now() > t0 - 500) throw new Error('bench: creating the timers took longer than the head start; lower KAIROS_BENCH_TIMERS');
  await until(
    async () => (await box.db.query(`SELECT count(*)::int AS n FROM runs WHERE state = 'succeeded'`)).rows[0].n >= TIMERS,
    SPREAD_MS + 60_000,
    'Kairos timers',
  );
  const { rows } = await box.db.query<{ ms: number }>(
    `SELECT (extract(epoch FROM started_at - scheduled_for) * 1000)::float8 AS ms FROM runs ORDER BY 1`,
  );
  await app.app.close();
  await box.drop();
  return rows.map((r) => r.ms);
}

/** Every-second schedules, and how long each measures: enough slots for a p99 of their starts. */
const EVERY_SECOND_SCHEDULES = Number(process.env.KAIROS_BENCH_EVERY_SECOND ?? 50);
const EVERY_SECOND_MS = 20_000;

/**
 * EVERY_SECOND_SCHEDULES schedules firing every second for EVERY_SECOND_MS: each start's distance
 * from its slot (started_at minus scheduled_for), sorted. The first two seconds are left out: the
 * schedules' first slots are written as they are created, not made ahead.
 */
async function kairosEverySecond(kind: TransportKind): Promise<number[]> {
  const box = await sandbox(`kairos_every_second_${kind}`, undefined, kind);
  const app = await kairos(kind, box);
  const schedules = new ScheduleRepository();
  const namespaceId = (await box.db.query(`SELECT id FROM namespaces WHERE name = 'default'`)).rows[0].id as string;
  const from = Math.ceil((Date.now() + 2_000) / 1_000) * 1_000;
  await inTransaction(box.db, async (tx) => {
    for (let i = 0; i < EVERY_SECOND_SCHEDULES; i++) {
      const { spec } = readScheduleCreate({ name: `every-second-${i}`, every: '1s', target: { type: 'handler', name: 'noop' }, overlap: 'allow' }, Date.now());
      await schedules.create(tx, { id: newId(), namespaceId, name: spec.name!, spec, specHash: specHash(spec), paused: false, idempotencyKey: null, requestHash: null, nextFireAt: new Date(from) });
    }
  });
  await sleep(EVERY_SECOND_MS + 1_000);
  const { rows } = await box.db.query<{ ms: number }>(
    `SELECT (extract(epoch FROM started_at - scheduled_for) * 1000)::float8 AS ms FROM runs
     WHERE scheduled_for >= $1 AND scheduled_for < $2 AND started_at IS NOT NULL ORDER BY 1`,
    [new Date(from + 2_000), new Date(from + EVERY_SECOND_MS)],
  );
  await app.app.close();
  await box.drop();
  return rows.map((r) => r.ms);
}

interface Figures {
  rawTps: number[];
  kairosTps: number[];
  sdkTps: number[];
  /** CPU per run of each throughput round, same order. */
  rawCpu: CpuSpent[];
  kairosCpu: CpuSpent[];
  sdkCpu: CpuSpent[];
  rawLate: number[];
  kairosLate: number[];
}

const ratio = (a: number, b: number): string => fmt(a / Math.max(1, b), 2);

/**
 * Where the CPU of a throughput phase went, per run, as medians over the rounds: this process
 * (producer and workers, every thread), the Postgres and the Redis server. Runs per second on a
 * machine the three share is bounded by their sum; the ratio of sums is the one to read.
 */
function cpuRows(f: Figures): string[][] {
  const us = (v: number | null): string => (v === null ? 'not local' : fmt(v));
  const total = (c: CpuSpent): number => c.node + (c.postgres ?? 0) + (c.redis ?? 0);
  const rawTotal = median(f.rawCpu.map(total));
  const row = (label: string, cpus: CpuSpent[]): string[] => {
    const m = medianCpu(cpus);
    const sum = median(cpus.map(total));
    return [label, us(m.node), us(m.postgres), us(m.redis), fmt(sum), fmt(sum / rawTotal, 2)];
  };
  return [
    ['CPU per run (µs, median of rounds)', 'this process', 'Postgres', 'Redis', 'sum', 'sum / BullMQ'],
    row('raw BullMQ', f.rawCpu),
    row('Kairos', f.kairosCpu),
    row('Kairos, a user worker (SDK)', f.sdkCpu),
  ];
}

/**
 * Throughput (alternating rounds) in each machine shape and lateness of the timers (shared shape),
 * next to raw BullMQ, on each transport.
 */
async function steadyScenarios(which: Set<string>): Promise<void> {
  const shapes = which.has('throughput') ? machineShapes() : ['shared' as const];
  const key = (shape: MachineShape, kind: TransportKind): string => `${shape}/${kind}`;
  const empty = (): Figures => ({ rawTps: [], kairosTps: [], sdkTps: [], rawCpu: [], kairosCpu: [], sdkCpu: [], rawLate: [], kairosLate: [] });
  const figures = new Map<string, Figures>(shapes.flatMap((shape) => TRANSPORTS.map((kind) => [key(shape, kind), empty()] as const)));
  const record = (tps: number[], cpu: CpuSpent[], measured: Throughput): void => {
    tps.push(measured.perSecond);
    cpu.push(measured.cpu);
  };
  // Alternate the sides, the transports and the shapes so that a noisy moment of the machine does not land on one only.
  for (let round = 0; round < (which.has('throughput') ? ROUNDS : 0); round++) {
    for (const shape of shapes) {
      await inShape(shape, async () => {
        for (const kind of TRANSPORTS) {
          const f = figures.get(key(shape, kind))!;
          record(f.rawTps, f.rawCpu, await rawThroughput(kind));
          record(f.kairosTps, f.kairosCpu, await kairosThroughput(kind));
          record(f.sdkTps, f.sdkCpu, await kairosThroughput(kind, true));
        }
      });
    }
  }
  const everySecond = new Map<TransportKind, number[]>();
  for (const kind of which.has('lateness') ? TRANSPORTS : []) {
    const f = figures.get(key('shared', kind))!;
    f.rawLate = await rawLateness(kind);
    f.kairosLate = await kairosLateness(kind);
    everySecond.set(kind, await kairosEverySecond(kind));
  }
  const rows = (f: Omit<Figures, 'rawCpu' | 'kairosCpu' | 'sdkCpu'>, columns: [string, string, string]): string[][] => {
    const out = [['', ...columns]];
    if (f.rawTps.length > 0) {
      out.push(
        [`throughput (runs/s, ${RUNS} noop runs, median of ${ROUNDS})`, fmt(median(f.rawTps)), fmt(median(f.kairosTps)), fmt(median(f.kairosTps.map((k, i) => k / f.rawTps[i]!)), 2)],
        ['throughput, a user worker (SDK KairosWorker, own queue)', fmt(median(f.rawTps)), fmt(median(f.sdkTps)), fmt(median(f.sdkTps.map((k, i) => k / f.rawTps[i]!)), 2)],
      );
    }
    if (f.rawLate.length > 0) {
      const [r50, r99, k50, k99] = [percentile(f.rawLate, 50), percentile(f.rawLate, 99), percentile(f.kairosLate, 50), percentile(f.kairosLate, 99)];
      const [rMax, kMax] = [f.rawLate.at(-1)!, f.kairosLate.at(-1)!];
      out.push(
        [`lateness p50 (ms, ${TIMERS} timers / ${SPREAD_MS / 1000} s)`, fmt(r50, 1), fmt(k50, 1), ratio(k50, r50)],
        ['lateness p99 (ms)', fmt(r99, 1), fmt(k99, 1), ratio(k99, r99)],
        ['lateness max (ms)', fmt(rMax, 1), fmt(kMax, 1), ratio(kMax, rMax)],
      );
    }
    return out;
  };
  for (const shape of shapes) {
    for (const kind of TRANSPORTS) {
      const f = figures.get(key(shape, kind))!;
      process.stdout.write(`\n${kind} transport, ${SHAPE_LABELS[shape]}\n`);
      printTable(rows(f, ['raw BullMQ', 'Kairos', 'Kairos / BullMQ']));
      if (f.rawTps.length > 0) {
        process.stdout.write(
          `throughput rounds: BullMQ ${f.rawTps.map((v) => fmt(v)).join(', ')}; Kairos ${f.kairosTps.map((v) => fmt(v)).join(', ')}; user worker ${f.sdkTps.map((v) => fmt(v)).join(', ')}\n`,
        );
        printTable(cpuRows(f));
      }
    }
    if (TRANSPORTS.length === 2) {
      // Kairos on each transport, side by side: the "raw" column of this table is Kairos on Redis.
      const r = figures.get(key(shape, 'redis'))!;
      const p = figures.get(key(shape, 'postgres'))!;
      process.stdout.write(`\nKairos on the Postgres transport against Kairos on Redis, ${SHAPE_LABELS[shape]}\n`);
      printTable(rows({ rawTps: r.kairosTps, kairosTps: p.kairosTps, sdkTps: p.sdkTps, rawLate: r.kairosLate, kairosLate: p.kairosLate }, ['Redis', 'Postgres', 'Postgres / Redis']));
    }
  }
  if (everySecond.size > 0) {
    process.stdout.write(`\nevery-second schedules: ${EVERY_SECOND_SCHEDULES} schedules for ${EVERY_SECOND_MS / 1000} s, each start's distance from its slot (ms)\n`);
    printTable([
      ['', 'slots', 'p50', 'p99', 'max'],
      ...[...everySecond].map(([kind, ms]) => [`${kind} transport`, String(ms.length), fmt(percentile(ms, 50), 1), fmt(percentile(ms, 99), 1), fmt(ms.at(-1) ?? NaN, 1)]),
    ]);
  }
  process.stdout.write(
    `concurrency ${CONCURRENCY}, node ${process.version}, load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}, ` +
      'targets: throughput >= 0.6x BullMQ shared and >= 0.7x in the production shape, CPU per run <= 1.6x BullMQ, ' +
      'timer lateness p50 <= 5 ms, p99 <= 15 ms, max <= 50 ms, every-second starts p99 <= 15 ms\n',
  );
}

const SHAPE_LABELS: Record<MachineShape, string> = {
  shared: 'shared shape (Node, Postgres and Redis on both cores)',
  production: 'production shape (Postgres and Redis on core 0, Node on core 1)',
};

/**
 * Bulk creation through the API: BATCHES × 1,000 one-shot timers with POST /v1/schedules/batch,
 * against 1,000 timers with POST /v1/schedules one at a time (under the default rate limit, a
 * refused request waits its Retry-After), against the API from the build in a process of its own.
 */
async function batchScenario(): Promise<void> {
  const BATCHES = 10;
  const timer = (i: number) => ({ in: `${10 + (i % 50)}m`, target: { type: 'handler', name: 'echo' }, payload: { i }, idempotencyKey: `timer-${i}` });
  const post = async (base: string, path: string, body: unknown): Promise<Response> =>
    fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const box = await sandbox('batch');
  // The API from the build, in a process of its own, as users run it.
  const api = startBuilt('api', 'api', box, { KAIROS_AUTH: 'optional' });
  const app = { url: await api.ready };
  try {
    const started = performance.now();
    for (let b = 0; b < BATCHES; b++) {
      const response = await post(app.url, '/v1/schedules/batch', { items: Array.from({ length: 1_000 }, (_, i) => timer(b * 1_000 + i)) });
      const { items } = (await response.json()) as { items: { id?: string }[] };
      if (response.status !== 200 || items.some((item) => item.id === undefined)) throw new Error(`bench: batch ${b} answered ${response.status}`);
    }
    const batchMs = performance.now() - started;
    const singleStarted = performance.now();
    let waited = 0;
    for (let i = 0; i < 1_000; ) {
      const response = await post(app.url, '/v1/schedules', timer(BATCHES * 1_000 + i));
      if (response.status === 429) {
        const ms = Number(response.headers.get('retry-after') ?? '1') * 1000;
        waited += ms;
        await sleep(ms);
        continue;
      }
      if (response.status !== 201) throw new Error(`bench: a single create answered ${response.status}`);
      await response.arrayBuffer();
      i++;
    }
    const singleMs = performance.now() - singleStarted;
    // Schedules as code: 1,000 cron schedules of one source, applied, then applied again unchanged.
    const declaration = {
      source: 'bench',
      schedules: Array.from({ length: 1_000 }, (_, i) => ({ name: `declared-${i}`, cron: `${i % 60} ${i % 24} * * *`, timezone: 'Europe/Berlin', target: { type: 'handler', name: 'echo' }, payload: { i } })),
    };
    const applies: number[] = [];
    for (let round = 0; round < 2; round++) {
      const started = performance.now();
      const response = await post(app.url, '/v1/apply', declaration);
      if (response.status !== 200) throw new Error(`bench: apply answered ${response.status}: ${await response.text()}`);
      await response.arrayBuffer();
      applies.push(performance.now() - started);
    }
    printTable([
      ['bulk creation (one-shot timers through the API)', 'timers', 'seconds', 'timers/s'],
      [`POST /v1/schedules/batch, ${BATCHES} calls of 1,000`, String(BATCHES * 1_000), fmt(batchMs / 1000, 2), fmt((BATCHES * 1_000 * 1000) / batchMs)],
      [`POST /v1/schedules, one at a time (${fmt(waited / 1000)} s of it waiting out the rate limit)`, '1000', fmt(singleMs / 1000, 2), fmt((1_000 * 1000) / singleMs)],
      ['POST /v1/apply, 1,000 cron schedules of one source (all created)', '1000', fmt(applies[0]! / 1000, 2), fmt((1_000 * 1000) / applies[0]!)],
      ['POST /v1/apply again, unchanged (a no-op)', '1000', fmt(applies[1]! / 1000, 2), fmt((1_000 * 1000) / applies[1]!)],
    ]);
    process.stdout.write(`target: ${BATCHES * 1_000} timers in ten batch calls in under 2 s; an apply of 1,000 schedules within 5 s\n`);
  } finally {
    api.process.kill('SIGTERM');
    await api.exited;
    await box.drop();
  }
}

/** Calls per side and round of the steps scenario: as many single runs, or a third as many three-step chains. */
const STEP_CALLS = Number(process.env.KAIROS_BENCH_STEP_CALLS ?? 6_000);

/**
 * Multi-step runs against single runs, on one Kairos (scheduler and built-in worker) per transport:
 * STEP_CALLS noop runs, then STEP_CALLS / 3 chains of three noop steps, created 500 calls at a time
 * as the throughput phase creates runs, in alternating rounds. Each step is a run of its own plus
 * the graph's bookkeeping (its release in the verdict's transaction, the hand-over of the next step).
 */
async function stepsScenario(): Promise<void> {
  const rows: string[][] = [['', 'single runs/s', 'steps/s', 'chains/s', 'steps / single']];
  for (const kind of TRANSPORTS) {
    const box = await sandbox(`steps_${kind}`, undefined, kind);
    const app = await kairos(kind, box);
    const { RunDispatcher } = await import('@kairos/process');
    const dispatcher = app.app.get(RunDispatcher);
    const runs = new RunRepository();
    const namespaceId = (await box.db.query(`SELECT id FROM namespaces WHERE name = 'default'`)).rows[0].id as string;
    const verdicts = app.app.get(Registry).getSingleMetric('kairos_run_verdicts_total')!;
    const succeeded = async () => (await verdicts.get()).values.find((v) => v.labels.state === 'succeeded')?.value ?? 0;
    const noop = { type: 'handler' as const, name: 'noop', queue: 'default' };
    const chain: Target = {
      type: 'steps',
      steps: ['first', 'second', 'third'].map((name, i, all) => ({ name, dependsOn: i === 0 ? [] : [all[i - 1]!], when: 'on_success' as const, target: noop, retry: null, timeoutMs: null })),
    };
    /** Creates `count` runs of `target`, each worth `calls` verdicts, and answers calls per second once every verdict is in. */
    const phase = async (target: Target, count: number, calls: number): Promise<number> => {
      const before = await succeeded();
      const started = performance.now();
      for (let i = 0; i < count; i += 500) {
        const now = new Date();
        const batch = Array.from({ length: Math.min(500, count - i) }, () =>
          manualRun({ id: newId(), namespaceId, availableAt: now, target, payload: null, retry: RETRY, timeoutMs: 60_000, idempotencyKey: null, actor: 'bench' }),
        );
        const { dispatch } = await inTransaction(box.db, (tx) => runs.insertRuns(tx, batch));
        await dispatcher.dispatch(dispatch);
      }
      await until(async () => (await succeeded()) - before >= count * calls, 300_000, 'the runs to succeed');
      return ((count * calls) / (performance.now() - started)) * 1000;
    };
    const single: number[] = [];
    const stepped: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const sides = [() => phase(noop, STEP_CALLS, 1).then((v) => single.push(v)), () => phase(chain, Math.floor(STEP_CALLS / 3), 3).then((v) => stepped.push(v))];
      for (const side of round % 2 === 0 ? sides : sides.reverse()) await side();
    }
    const graphs = (await box.db.query(`SELECT count(*)::int AS n FROM runs WHERE target->>'type' = 'steps' AND state = 'succeeded'`)).rows[0].n as number;
    if (graphs !== ROUNDS * Math.floor(STEP_CALLS / 3)) throw new Error(`bench: ${graphs} chains succeeded in the ledger, not ${ROUNDS * Math.floor(STEP_CALLS / 3)}`);
    rows.push([`${kind} transport, median of ${ROUNDS}`, fmt(median(single)), fmt(median(stepped)), fmt(median(stepped) / 3), fmt(median(stepped.map((v, i) => v / single[i]!)), 2)]);
    await app.app.close();
    await box.drop();
  }
  process.stdout.write(`
multi-step runs: three-step chains beside single runs, ${STEP_CALLS} calls a side and round
`);
  printTable(rows);
}

/** Runs a side and round of the limits scenario. */
const LIMIT_RUNS = Number(process.env.KAIROS_BENCH_LIMIT_RUNS ?? 6_000);

/**
 * The cost of concurrency keys on the run path: noop runs without a key beside runs that each
 * hold a key of their own (limit 1, never held back: the claim's locks and counts, and the release
 * a verdict triggers, with nothing to wait for), and runs sharing 16 keys of limit 4 (held back and
 * released all along), sides alternating from round to round, on each transport. Each rate is
 * runs per second from the first insert to the last verdict.
 */
/** Puts `count` noop runs through the built-in worker (each with the concurrency key `keyOf` gives) and answers the runs a second. */
async function noopRunsPerSecond(box: Sandbox, app: StartedKairos, count: number, keyOf: ((i: number) => { key: string; limit: number }) | null = null): Promise<number> {
  const { RunDispatcher } = await import('@kairos/process');
  const dispatcher = app.app.get(RunDispatcher);
  const runs = new RunRepository();
  const namespaceId = (await box.db.query(`SELECT id FROM namespaces WHERE name = 'default'`)).rows[0].id as string;
  const verdicts = app.app.get(Registry).getSingleMetric('kairos_run_verdicts_total')!;
  const succeeded = async () => (await verdicts.get()).values.find((v) => v.labels.state === 'succeeded')?.value ?? 0;
  const noop = { type: 'handler' as const, name: 'noop', queue: 'default' };
  const before = await succeeded();
  const started = performance.now();
  for (let i = 0; i < count; i += 500) {
    const now = new Date();
    const batch = Array.from({ length: Math.min(500, count - i) }, (_, j) =>
      manualRun({ id: newId(), namespaceId, availableAt: now, target: noop, payload: null, retry: RETRY, timeoutMs: 60_000, idempotencyKey: null, actor: 'bench', concurrency: keyOf?.(i + j) ?? null }),
    );
    const { dispatch } = await inTransaction(box.db, (tx) => runs.insertRuns(tx, batch));
    await dispatcher.dispatch(dispatch);
  }
  await until(async () => (await succeeded()) - before >= count, 300_000, 'the runs to succeed');
  return (count / (performance.now() - started)) * 1000;
}

/** A table row of rates measured in rounds: the baseline's median, then each side's median and the median of its per-round ratio to the baseline. */
function sidesRow(kind: TransportKind, baseline: number[], ...sides: number[][]): string[] {
  return [`${kind} transport, median of ${ROUNDS}`, fmt(median(baseline)), ...sides.flatMap((side) => [fmt(median(side)), fmt(median(side.map((v, i) => v / baseline[i]!)), 2)])];
}

async function limitsScenario(): Promise<void> {
  const rows: string[][] = [['', 'no key runs/s', 'own key runs/s', 'own / none', '16 keys of 4 runs/s', 'shared / none']];
  for (const kind of TRANSPORTS) {
    const box = await sandbox(`limits_${kind}`, undefined, kind);
    const app = await kairos(kind, box);
    const none: number[] = [];
    const own: number[] = [];
    const shared: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const sides = [
        () => noopRunsPerSecond(box, app, LIMIT_RUNS).then((v) => none.push(v)),
        () => noopRunsPerSecond(box, app, LIMIT_RUNS, (i) => ({ key: `own-${round}-${i}`, limit: 1 })).then((v) => own.push(v)),
        () => noopRunsPerSecond(box, app, LIMIT_RUNS, (i) => ({ key: `shared-${i % 16}`, limit: 4 })).then((v) => shared.push(v)),
      ];
      for (const side of round % 2 === 0 ? sides : sides.reverse()) await side();
    }
    const over = (await box.db.query(`SELECT count(*)::int AS n FROM runs WHERE held_at IS NOT NULL OR state <> 'succeeded'`)).rows[0].n as number;
    if (over !== 0) throw new Error(`bench: ${over} runs did not succeed`);
    rows.push(sidesRow(kind, none, own, shared));
    await app.app.close();
    await box.drop();
  }
  process.stdout.write(`
concurrency keys: ${LIMIT_RUNS} noop runs a side and round, without a key, each with its own, and sharing 16 keys of limit 4
`);
  printTable(rows);
}

/**
 * What subscriptions cost the run path: noop runs with the runs' outcome trigger disabled (the run
 * path before subscriptions), with it on while nobody listens, and with a subscription listening
 * to run.succeeded (an outbox event per run, fanned out and delivered to a local receiver).
 */
async function alertsScenario(): Promise<void> {
  const { createServer } = await import('node:http');
  let received = 0;
  const receiver = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      received += 1;
      res.end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const hook = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hook`;
  const rows: string[][] = [['', 'no trigger runs/s', 'nobody listens runs/s', 'nobody / no trigger', 'run.succeeded listened runs/s', 'listened / no trigger']];
  for (const kind of TRANSPORTS) {
    const box = await sandbox(`alerts_${kind}`, undefined, kind);
    const app = await kairos(kind, box, ['scheduler', 'worker'], { KAIROS_HTTP_ALLOWLIST: '127.0.0.1' });
    const namespaceId = (await box.db.query(`SELECT id FROM namespaces WHERE name = 'default'`)).rows[0].id as string;
    const trigger = (on: boolean) => box.db.query(`ALTER TABLE runs ${on ? 'ENABLE' : 'DISABLE'} TRIGGER runs_outcome_event`);
    const listen = async (on: boolean) => {
      await box.db.query(`DELETE FROM subscriptions`);
      if (on) {
        await box.db.query(`INSERT INTO subscriptions (id, namespace_id, url, events, format, state) VALUES ($1, $2, $3, '{run.succeeded}', 'json', 'active')`, [newId(), namespaceId, hook]);
      }
    };
    const off: number[] = [];
    const quiet: number[] = [];
    const listened: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const sides = [
        async () => {
          await trigger(false);
          await listen(false);
          off.push(await noopRunsPerSecond(box, app, LIMIT_RUNS));
          await trigger(true);
        },
        async () => {
          await listen(false);
          quiet.push(await noopRunsPerSecond(box, app, LIMIT_RUNS));
        },
        async () => {
          await listen(true);
          const before = received;
          listened.push(await noopRunsPerSecond(box, app, LIMIT_RUNS));
          // The side ends when its events were delivered too, so their cost never lands on the next side.
          await until(async () => received - before >= LIMIT_RUNS, 300_000, 'the run.succeeded deliveries');
          await listen(false);
        },
      ];
      for (const side of round % 2 === 0 ? sides : sides.reverse()) await side();
    }
    rows.push(sidesRow(kind, off, quiet, listened));
    await app.app.close();
    await box.drop();
  }
  receiver.close();
  process.stdout.write(`
subscriptions: ${LIMIT_RUNS} noop runs a side and round; the listened side's runs/s counts the runs, its deliveries finish before the next side
`);
  printTable(rows);
}

/** Sleeping runs of the wake scenario, each sleeping WAKE_SLEEP_MS. */
const WAKE_RUNS = Number(process.env.KAIROS_BENCH_WAKE_RUNS ?? 1_000);
const WAKE_SLEEP_MS = 2_000;

/**
 * Durable functions' timers: WAKE_RUNS runs of a handler that sleeps WAKE_SLEEP_MS (ctx.sleep) on
 * an SDK worker of concurrency 8 beside a scheduler, on each transport. A sleeping run holds no
 * worker slot, so all sleep at once; each wake is measured from the ledger: the claim that resumed
 * the run against the wake instant its `slept` event recorded.
 */
async function wakeScenario(): Promise<void> {
  const rows: string[][] = [['', 'runs', 'all done (s)', 'wake lateness p50 (ms)', 'p99', 'max']];
  for (const kind of TRANSPORTS) {
    const box = await sandbox(`wake_${kind}`, undefined, kind);
    const app = await kairos(kind, box, ['scheduler']);
    let done = 0;
    const worker = new KairosWorker({
      databaseUrl: box.url,
      redisUrl: kind === 'redis' ? REDIS_URL : null,
      queuePrefix: box.prefix,
      queue: 'bench',
      concurrency: 8,
      handlers: { nap: async (ctx) => void (await ctx.sleep(WAKE_SLEEP_MS)) },
      logger: { log: () => undefined, warn: (m) => console.warn(m), error: (m) => console.error(m) },
      observer: { verdict: (state) => void (state === 'succeeded' && done++) },
    });
    await worker.start();
    const { RunDispatcher } = await import('@kairos/process');
    const dispatcher = app.app.get(RunDispatcher);
    const namespaceId = (await box.db.query(`SELECT id FROM namespaces WHERE name = 'default'`)).rows[0].id as string;
    const started = performance.now();
    const now = new Date();
    const batch = Array.from({ length: WAKE_RUNS }, () =>
      manualRun({ id: newId(), namespaceId, availableAt: now, target: { type: 'handler', name: 'nap', queue: 'bench' }, payload: null, retry: RETRY, timeoutMs: 60_000, idempotencyKey: null, actor: 'bench' }),
    );
    await inTransaction(box.db, (tx) => new RunRepository().insertRuns(tx, batch));
    await dispatcher.dispatch(batch.flatMap((r) => dispatchItemOf(r) ?? []));
    await until(async () => done >= WAKE_RUNS, 300_000, 'the sleeping runs to finish');
    const elapsed = performance.now() - started;
    const { rows: late } = await box.db.query<{ ms: number }>(
      `SELECT extract(epoch FROM (SELECT min(c.at) FROM run_events c WHERE c.run_id = s.run_id AND c.kind = 'claimed' AND c.id > s.id)
                              - (s.detail->>'wakeAt')::timestamptz) * 1000 AS ms
       FROM run_events s WHERE s.kind = 'slept'`,
    );
    const lateness = late.map((r) => Number(r.ms)).sort((a, b) => a - b);
    rows.push([`${kind} transport`, String(lateness.length), fmt(elapsed / 1000, 1), fmt(percentile(lateness, 50), 1), fmt(percentile(lateness, 99), 1), fmt(lateness.at(-1)!, 1)]);
    await worker.stop();
    await app.app.close();
    await box.drop();
  }
  process.stdout.write(`\ndurable functions: ${WAKE_RUNS} runs sleeping ${WAKE_SLEEP_MS / 1000} s each on one worker of concurrency 8\n`);
  printTable(rows);
  process.stdout.write('target: wake lateness p99 <= 150 ms; held worker slots would take ' + fmt((WAKE_RUNS * WAKE_SLEEP_MS) / 8 / 1000) + ' s\n');
}

/**
 * The production engines (KAIROS_BENCH_ENGINES, `cluster,pgbouncer`): Kairos's durable throughput on
 * a Redis Cluster (three masters, a replica each) and with DATABASE_URL on PgBouncer in transaction
 * mode (DATABASE_DIRECT_URL on Postgres), each beside Kairos on one Redis and Postgres itself, in
 * alternating rounds, the engines made on loopback as the engine tests make them.
 */
async function enginesScenario(): Promise<void> {
  const { startPgBouncer, startRedisCluster } = await import('../test/support/engines.js');
  const engines = (process.env.KAIROS_BENCH_ENGINES ?? 'cluster,pgbouncer').split(',').map((e) => e.trim());
  for (const e of engines) if (e !== 'cluster' && e !== 'pgbouncer') throw new Error(`KAIROS_BENCH_ENGINES: "${e}" is neither cluster nor pgbouncer`);
  const cluster = engines.includes('cluster') ? await startRedisCluster() : null;
  const pooler = engines.includes('pgbouncer') ? await startPgBouncer() : null;
  const on: Record<string, (box: Sandbox) => Record<string, string>> = {
    cluster: () => ({ REDIS_URL: '', REDIS_CLUSTER_NODES: cluster!.nodesVariable }),
    pgbouncer: (box) => ({ DATABASE_URL: pooler!.url(box.name), DATABASE_DIRECT_URL: box.url }),
  };
  const direct: number[] = [];
  const measured = new Map(engines.map((e) => [e, [] as number[]]));
  try {
    for (let round = 0; round < ROUNDS; round++) {
      direct.push((await kairosThroughput('redis')).perSecond);
      for (const e of engines) measured.get(e)!.push((await kairosThroughput('redis', false, on[e])).perSecond);
    }
  } finally {
    await cluster?.stop();
    await pooler?.stop();
  }
  const label: Record<string, string> = { cluster: 'Redis Cluster', pgbouncer: 'PgBouncer (transaction mode)' };
  process.stdout.write(`
production engines: durable runs per second (${RUNS} noop runs), beside one Redis and Postgres itself
`);
  printTable([
    ['', 'direct', ...engines.flatMap((e) => [label[e]!, `${e} / direct`])],
    ['Kairos (scheduler + built-in worker)', fmt(median(direct)), ...engines.flatMap((e) => [fmt(median(measured.get(e)!)), fmt(median(measured.get(e)!.map((v, i) => v / direct[i]!)), 2)])],
  ]);
  process.stdout.write(`rounds: direct ${direct.map((v) => fmt(v)).join(', ')}; ${engines.map((e) => `${e} ${measured.get(e)!.map((v) => fmt(v)).join(', ')}`).join('; ')}
`);
}

const SCENARIOS = ['throughput', 'lateness', 'batch', 'herd', 'protocol', 'steps', 'wake', 'limits', 'alerts', 'engines', 'failover', 'events', 'flow'];
const asked = process.argv.slice(2);
const unknown = asked.filter((a) => !SCENARIOS.includes(a));
if (unknown.length > 0) {
  process.stderr.write(`bench: unknown scenario ${unknown.join(', ')}; choose from ${SCENARIOS.join(', ')} (none: all)\n`);
  process.exit(2);
}
const which = new Set(asked.length > 0 ? asked : SCENARIOS);
if (which.has('throughput') || which.has('lateness')) await steadyScenarios(which);
if (which.has('batch')) await batchScenario();
if (which.has('herd')) await herdScenario();
if (which.has('protocol')) await protocolScenario();
if (which.has('steps')) await stepsScenario();
if (which.has('wake')) await wakeScenario();
if (which.has('limits')) await limitsScenario();
if (which.has('alerts')) await alertsScenario();
if (which.has('engines')) await enginesScenario();
if (which.has('failover')) await failoverScenario();
if (which.has('events')) await eventsScenario();
if (which.has('flow')) await flowScenario();

process.exit(0);
