/**
 * The steady scenarios, Kairos beside raw BullMQ on each transport: throughput (durable runs per
 * second, the built-in worker and a user's SDK worker, with the CPU each run cost) in alternating
 * rounds in each machine shape, also beside graphile-worker (Postgres only: one phase per round,
 * the anchor of both transports), and the lateness of one-shot timers and of every-second schedules.
 */
import type { Job, Queue, Worker } from 'bullmq';
import os from 'node:os';
import { newId, specHash } from '@kairos/domain';
import { readScheduleCreate } from '@kairos/domain/wire';
import { ScheduleRepository, inTransaction } from '@kairos/ledger';
import { openTransport, type RunsProcessor, type Transport } from '@kairos/queue';
import { apartBuilt, kairosApartThroughput, type ApartThroughput } from './apart.js';
import { GRAPHILE_CONCURRENCY, graphileThroughput } from './graphile.js';
import { CONCURRENCY, ROUNDS, RUNS, TRANSPORTS, kairos, kairosThroughput, transportOf, type Throughput, type TransportKind } from './kairos.js';
import { cpuPerRun, cpuSpent, fmt, inShape, machineShapes, median, medianCpu, percentile, printTable, sandbox, sleep, until, type CpuSpent, type MachineShape, type Sandbox } from './sandbox.js';

const TIMERS = Number(process.env.KAIROS_BENCH_TIMERS ?? 2_000);
const SPREAD_MS = 10_000;

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
  /** graphile-worker's rounds, the same in each transport's figures of a shape. */
  graphileTps: number[];
  kairosTps: number[];
  sdkTps: number[];
  /** The roles apart (see apart.ts): empty when there is no build to start them from. */
  apartTps: number[];
  /** CPU per run of each throughput round, same order. */
  rawCpu: CpuSpent[];
  graphileCpu: CpuSpent[];
  kairosCpu: CpuSpent[];
  sdkCpu: CpuSpent[];
  apartCpu: CpuSpent[];
  /** Node's CPU per run of each process with the roles apart, each round. */
  apartRoles: Pick<ApartThroughput, 'scheduler' | 'worker'>[];
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
  const graphileTotal = median(f.graphileCpu.map(total));
  const row = (label: string, cpus: CpuSpent[]): string[] => {
    const m = medianCpu(cpus);
    const sum = median(cpus.map(total));
    return [label, us(m.node), us(m.postgres), us(m.redis), fmt(sum), fmt(sum / rawTotal, 2), fmt(sum / graphileTotal, 2)];
  };
  return [
    ['CPU per run (µs, median of rounds)', 'this process', 'Postgres', 'Redis', 'sum', 'sum / BullMQ', 'sum / graphile'],
    row('raw BullMQ', f.rawCpu),
    row('graphile-worker', f.graphileCpu),
    row('Kairos', f.kairosCpu),
    row('Kairos, a user worker (SDK)', f.sdkCpu),
    ...(f.apartCpu.length === 0
      ? []
      : [
          row('Kairos, roles apart (both processes)', f.apartCpu),
          ['  scheduler process (with the producer)', fmt(median(f.apartRoles.map((r) => r.scheduler))), '', '', '', '', ''],
          ['  worker process', fmt(median(f.apartRoles.map((r) => r.worker))), '', '', '', '', ''],
        ]),
  ];
}

/**
 * Throughput (alternating rounds) in each machine shape and lateness of the timers (shared shape),
 * next to raw BullMQ, on each transport.
 */
export async function steadyScenarios(which: Set<string>): Promise<void> {
  const shapes = which.has('throughput') ? machineShapes() : ['shared' as const];
  const key = (shape: MachineShape, kind: TransportKind): string => `${shape}/${kind}`;
  const empty = (): Figures => ({ rawTps: [], graphileTps: [], kairosTps: [], sdkTps: [], apartTps: [], rawCpu: [], graphileCpu: [], kairosCpu: [], sdkCpu: [], apartCpu: [], apartRoles: [], rawLate: [], kairosLate: [] });
  const figures = new Map<string, Figures>(shapes.flatMap((shape) => TRANSPORTS.map((kind) => [key(shape, kind), empty()] as const)));
  const record = (tps: number[], cpu: CpuSpent[], measured: Throughput): void => {
    tps.push(measured.perSecond);
    cpu.push(measured.cpu);
  };
  const apart = which.has('throughput') && apartBuilt();
  if (which.has('throughput') && !apart) process.stdout.write('throughput with the roles apart: not measured (it starts them from the build: run `npm run build` first)\n');
  // Alternate the sides, the transports and the shapes so that a noisy moment of the machine does not land on one only.
  for (let round = 0; round < (which.has('throughput') ? ROUNDS : 0); round++) {
    for (const shape of shapes) {
      await inShape(shape, async () => {
        // Postgres only, so one phase a round, each transport's anchor.
        const graphile = await graphileThroughput();
        for (const kind of TRANSPORTS) {
          const f = figures.get(key(shape, kind))!;
          record(f.graphileTps, f.graphileCpu, graphile);
        }
        for (const kind of TRANSPORTS) {
          const f = figures.get(key(shape, kind))!;
          record(f.rawTps, f.rawCpu, await rawThroughput(kind));
          record(f.kairosTps, f.kairosCpu, await kairosThroughput(kind));
          record(f.sdkTps, f.sdkCpu, await kairosThroughput(kind, true));
          if (apart) {
            const measured = await kairosApartThroughput(kind);
            record(f.apartTps, f.apartCpu, measured);
            f.apartRoles.push({ scheduler: measured.scheduler, worker: measured.worker });
          }
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
  /**
   * The table of one transport (the Kairos columns beside the raw ones), with graphile-worker's
   * throughput and Kairos's ratio to it when `graphileTps` is given (its lateness is not measured).
   */
  const rows = (f: Omit<Figures, 'rawCpu' | 'graphileTps' | 'graphileCpu' | 'kairosCpu' | 'sdkCpu' | 'apartCpu' | 'apartRoles'>, columns: [string, string, string], graphileTps: number[] | null): string[][] => {
    const [raw, side, vsRaw] = columns;
    const out = [graphileTps ? ['', raw, 'graphile-worker', side, vsRaw, `${side} / graphile`] : ['', ...columns]];
    /** A throughput row: the median of the rounds' rates and of each round's ratios to the anchors of that round. */
    const throughput = (label: string, tps: number[]): string[] => {
      const vs = (anchor: number[]): string => fmt(median(tps.map((k, i) => k / anchor[i]!)), 2);
      return graphileTps
        ? [label, fmt(median(f.rawTps)), fmt(median(graphileTps)), fmt(median(tps)), vs(f.rawTps), vs(graphileTps)]
        : [label, fmt(median(f.rawTps)), fmt(median(tps)), vs(f.rawTps)];
    };
    const lateness = (label: string, r: number, k: number): string[] =>
      graphileTps ? [label, fmt(r, 1), '-', fmt(k, 1), ratio(k, r), '-'] : [label, fmt(r, 1), fmt(k, 1), ratio(k, r)];
    if (f.rawTps.length > 0) {
      out.push(
        throughput(`throughput (runs/s, ${RUNS} noop runs, median of ${ROUNDS})`, f.kairosTps),
        throughput('throughput, a user worker (SDK KairosWorker, own queue)', f.sdkTps),
      );
      if (f.apartTps.length > 0) out.push(throughput('throughput, roles apart (scheduler and worker processes, from dist/)', f.apartTps));
    }
    if (f.rawLate.length > 0) {
      const [r50, r99, k50, k99] = [percentile(f.rawLate, 50), percentile(f.rawLate, 99), percentile(f.kairosLate, 50), percentile(f.kairosLate, 99)];
      out.push(
        lateness(`lateness p50 (ms, ${TIMERS} timers / ${SPREAD_MS / 1000} s)`, r50, k50),
        lateness('lateness p99 (ms)', r99, k99),
        lateness('lateness max (ms)', f.rawLate.at(-1)!, f.kairosLate.at(-1)!),
      );
    }
    return out;
  };
  for (const shape of shapes) {
    for (const kind of TRANSPORTS) {
      const f = figures.get(key(shape, kind))!;
      process.stdout.write(`\n${kind} transport, ${SHAPE_LABELS[shape]}\n`);
      printTable(rows(f, ['raw BullMQ', 'Kairos', 'Kairos / BullMQ'], f.graphileTps.length > 0 ? f.graphileTps : null));
      if (f.rawTps.length > 0) {
        const list = (tps: number[]): string => tps.map((v) => fmt(v)).join(', ');
        process.stdout.write(
          `throughput rounds: BullMQ ${list(f.rawTps)}; graphile-worker ${list(f.graphileTps)}; Kairos ${list(f.kairosTps)}; user worker ${list(f.sdkTps)}${f.apartTps.length > 0 ? `; roles apart ${list(f.apartTps)}` : ''}\n`,
        );
        printTable(cpuRows(f));
      }
    }
    if (TRANSPORTS.length === 2) {
      // Kairos on each transport, side by side: the "raw" column of this table is Kairos on Redis.
      const r = figures.get(key(shape, 'redis'))!;
      const p = figures.get(key(shape, 'postgres'))!;
      process.stdout.write(`\nKairos on the Postgres transport against Kairos on Redis, ${SHAPE_LABELS[shape]}\n`);
      printTable(rows({ rawTps: r.kairosTps, kairosTps: p.kairosTps, sdkTps: p.sdkTps, apartTps: p.apartTps, rawLate: r.kairosLate, kairosLate: p.kairosLate }, ['Redis', 'Postgres', 'Postgres / Redis'], null));
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
    `concurrency ${CONCURRENCY} (graphile-worker ${GRAPHILE_CONCURRENCY}, local queue 500, completions batched), node ${process.version}, load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}, ` +
      'targets: throughput >= 0.6x BullMQ shared and >= 0.7x in the production shape, CPU per run <= 1.6x BullMQ, ' +
      'timer lateness p50 <= 5 ms, p99 <= 15 ms, max <= 50 ms, every-second starts p99 <= 15 ms\n',
  );
}

const SHAPE_LABELS: Record<MachineShape, string> = {
  shared: 'shared shape (Node, Postgres and Redis on both cores)',
  production: 'production shape (Postgres and Redis on core 0, Node on core 1)',
};
