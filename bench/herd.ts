/**
 * The herd: N pending schedules (a third each one-shot `at`, `every` and daily crons in several
 * zones), B of them due at one instant T0 and the rest spread over the next day. Kairos runs from
 * the built `dist/` as child processes with the Node options `npm start` gives it, in the
 * `npm start` shape (all roles in one process), the same with KAIROS_START_MARGIN=0 (runs handed
 * over at their instant, as before precise starts), and with the roles apart (one scheduler and two
 * workers, then two schedulers sharing the tick's partitions and two workers), at its default
 * configuration; raw BullMQ does the same with B delayed jobs at concurrency 16, and graphile-worker
 * with B jobs of one runAt (see graphile.ts). All run in turn, KAIROS_BENCH_ROUNDS times (3), and
 * each Kairos figure is set beside both anchors. Reported, as medians over the rounds: the time from T0
 * until all B runs started, start lateness p50/p99, runs/s, how many runs were in the ledger
 * before T0, each Kairos process's RSS when ready and at its highest peak, and the tick's due-scan
 * query at size N, and the CPU spent per run from T0 until all had started. Where the machine can
 * be split, the anchors and the roles apart run again in the production shape (KAIROS_BENCH_SHAPES).
 */
import { existsSync, readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { Queue, Worker } from 'bullmq';
import pg from 'pg';
import { TICK_PARTITIONS } from '@kairos/domain';
import { ScheduleRepository, defaultMigrationsDir, inTransaction, migrate, readMigrations } from '@kairos/ledger';
import { GRAPHILE_CONCURRENCY, graphileHerd } from './graphile.js';
import { insertSchedules } from './herd-seed.js';
import { REDIS_URL, ROOT, startBuilt as start, cpuPerRun, cpuSpent, inShape, machineShapes, fmt, median, medianCpu, percentile, printTable, sandbox, sleep, until, type CpuSpent, type Sandbox } from './sandbox.js';

export const N = Number(process.env.KAIROS_BENCH_HERD_N ?? 1_000_000);
export const B = Number(process.env.KAIROS_BENCH_HERD_B ?? 20_000);
const RAW_CONCURRENCY = 16;
/** Raw BullMQ and each Kairos shape run in turn this many times; medians are reported. */
const ROUNDS = Number(process.env.KAIROS_BENCH_ROUNDS ?? 3);
/** The due-scan is measured as a scheduler owning every partition runs it. */
const ALL_PARTITIONS = Array.from({ length: TICK_PARTITIONS }, (_, p) => p);

export interface Herd {
  allStartedMs: number;
  p50: number;
  p99: number;
  runsPerSecond: number;
  /** Share of the herd's runs written to the ledger before T0. */
  madeAhead: number;
  /** How long before T0 the herd's schedules were inserted, and when (from T0) its last run was written. */
  insertedBeforeMs: number;
  lastWrittenMs: number;
  rss: { name: string; readyMb: number; peakMb: number }[];
  /** CPU spent per run from T0 until all had started: the Node processes (Kairos's or raw BullMQ's), Postgres, Redis. */
  cpu: CpuSpent;
}

/** Fills `template` (migrated) with the N - B spread schedules; returns the seconds it took. */
export async function seedTemplate(template: Sandbox): Promise<number> {
  const started = performance.now();
  const client = await template.db.connect();
  try {
    await migrate(client, readMigrations(defaultMigrationsDir()));
    const chunk = 200_000;
    for (let from = 1; from <= N - B; from += chunk) await insertSchedules(client, from, Math.min(N - B, from + chunk - 1), null);
    await client.query('VACUUM ANALYZE schedules');
  } finally {
    client.release();
  }
  return (performance.now() - started) / 1000;
}

/** The tick's due scan (claimDue, in a transaction rolled back) and its sleep query, timed at size N. */
async function dueScan(db: pg.Pool): Promise<{ claim: number[]; nextDue: number[] }> {
  const schedules = new ScheduleRepository();
  // Steady state: the slots due by now (within the lookahead) were written by an earlier pass, so
  // each scan finds only those that entered the window since, as the running tick does.
  await db.query(`UPDATE schedules SET next_fire_at = next_fire_at + interval '1 day' WHERE next_fire_at <= now() + interval '20 seconds'`);
  const claim: number[] = [];
  const nextDue: number[] = [];
  for (let i = 0; i < 200; i++) {
    await inTransaction(db, async (tx) => {
      const t0 = performance.now();
      await schedules.claimDue(tx, ALL_PARTITIONS, 2_000, 15_000);
      claim.push(performance.now() - t0);
      throw new RollBack();
    }).catch((error: unknown) => {
      if (!(error instanceof RollBack)) throw error;
    });
    const t1 = performance.now();
    await schedules.msUntilNextDue(db, ALL_PARTITIONS);
    nextDue.push(performance.now() - t1);
  }
  return { claim: claim.sort((a, b) => a - b), nextDue: nextDue.sort((a, b) => a - b) };
}

class RollBack extends Error {}

/** VmRSS (now) or VmHWM (peak) of a process, in MB. */
function memoryMb(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const match = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) / 1024 : NaN;
}

/** The herd's rows among runs or ticks (a spread cron may fall on the herd's instant too). */
const OF_HERD = `schedule_id IN (SELECT id FROM schedules WHERE name LIKE 'herd-%')`;

/** Kairos's shapes: which processes each starts, and how the table names it. */
export const SHAPES = {
  one: { label: 'Kairos, npm start (all roles, one process)', apps: { 'kairos (all roles)': 'kairos' } },
  // The same with runs handed over at their instant rather than KAIROS_START_MARGIN before it: the
  // herd as it ran before precise starts.
  atInstant: { label: 'Kairos, npm start, KAIROS_START_MARGIN=0', apps: { 'kairos (all roles)': 'kairos' }, env: { KAIROS_START_MARGIN: '0' } },
  apart: { label: 'Kairos, one scheduler + two workers', apps: { scheduler: 'scheduler', 'worker 1': 'worker', 'worker 2': 'worker' } },
  two: {
    label: 'Kairos, two schedulers + two workers',
    apps: { 'scheduler 1': 'scheduler', 'scheduler 2': 'scheduler', 'worker 1': 'worker', 'worker 2': 'worker' },
  },
} as const satisfies Record<string, { label: string; apps: Record<string, 'kairos' | 'scheduler' | 'worker'>; env?: Record<string, string> }>;
export type Shape = keyof typeof SHAPES;
/** The Kairos shapes KAIROS_BENCH_HERD_SHAPES names (`one,atInstant,apart,two`, all by default), in that order. */
const SHAPE_ORDER = (Object.keys(SHAPES) as Shape[]).filter((shape) => (process.env.KAIROS_BENCH_HERD_SHAPES ?? shape).split(',').map((s) => s.trim()).includes(shape));
for (const asked of (process.env.KAIROS_BENCH_HERD_SHAPES ?? '').split(',').filter(Boolean)) {
  if (!(asked.trim() in SHAPES)) throw new Error(`KAIROS_BENCH_HERD_SHAPES: "${asked}" is not one of ${Object.keys(SHAPES).join(', ')}`);
}

/** The herd on a copy of `template` with Kairos in `shape`; `env` is added to every process's environment (another Redis, say). */
export async function kairosHerd(template: string, shape: Shape, env: Record<string, string> = {}): Promise<Herd> {
  const box = await sandbox(`herd_${shape}`, template);
  const spec: { apps: Record<string, 'kairos' | 'scheduler' | 'worker'>; env?: Record<string, string> } = SHAPES[shape];
  const children = Object.entries(spec.apps).map(([name, app]) => start(name, app, box, { ...spec.env, ...env }));
  try {
    await Promise.all(children.map((c) => c.ready));
    const readyMb = children.map((c) => memoryMb(c.process.pid!, 'VmRSS'));
    // T0: a whole minute (the crons' granularity) leaving room for the lookahead before it.
    const t0 = Math.ceil((Date.now() + 25_000) / 60_000) * 60_000;
    await insertSchedules(box.db, N - B + 1, N, t0);
    const insertedBeforeMs = t0 - Date.now();
    await box.db.query(`SELECT pg_notify('kairos_schedules', '')`);
    // Polled while the herd drains, so it must cost Postgres little. Once the instant's B runs are
    // all written (usually before T0), it only asks whether any of them is still queued, through
    // the relay's and the reconciler's partial indexes on available_at, instead of counting the
    // runs table whole each time. A started run leaves `queued` for good: its retries, if any, are
    // due later than T0. The herd's figures come from the runs' own start times, read once it is over.
    let allWritten = false;
    const allStarted = async (): Promise<boolean> => {
      allWritten ||= (await box.db.query(`SELECT count(*) >= $2 AS written FROM runs WHERE scheduled_for = $1`, [new Date(t0), B])).rows[0].written;
      if (!allWritten) return false;
      const { rows } = await box.db.query(
        `SELECT NOT EXISTS (SELECT 1 FROM runs WHERE state = 'queued' AND enqueued_at IS NULL AND available_at <= $1)
            AND NOT EXISTS (SELECT 1 FROM runs WHERE state = 'queued' AND enqueued_at IS NOT NULL AND available_at <= $1) AS done`,
        [new Date(t0)],
      );
      return rows[0].done as boolean;
    };
    await sleep(Math.max(0, t0 - Date.now()));
    const pids = children.map((c) => c.process.pid!);
    const cpuAtT0 = cpuSpent(pids);
    await until(allStarted, 300_000, 'the herd to start', 500);
    const cpu = cpuPerRun(cpuAtT0, B, pids);
    const peakMb = children.map((c) => memoryMb(c.process.pid!, 'VmHWM'));
    const { rows } = await box.db.query<{ late: number | null; ahead: boolean; written: number }>(
      `SELECT (extract(epoch FROM started_at - scheduled_for) * 1000)::float8 AS late, created_at < scheduled_for AS ahead,
              (extract(epoch FROM created_at - scheduled_for) * 1000)::float8 AS written
       FROM runs WHERE scheduled_for = $1 AND ${OF_HERD} ORDER BY 1`,
      [new Date(t0)],
    );
    const ticks = (await box.db.query(`SELECT count(*)::int AS n, count(DISTINCT schedule_id)::int AS d FROM ticks WHERE scheduled_for = $1 AND ${OF_HERD}`, [new Date(t0)])).rows[0];
    if (rows.length !== B || ticks.n !== B || ticks.d !== B) throw new Error(`bench: the herd made ${rows.length} runs and ${ticks.n} ticks (${ticks.d} schedules) for ${B} slots`);
    const late = rows.flatMap((r) => (r.late === null ? [] : [r.late]));
    if (late.length !== B) throw new Error(`bench: the poll saw the herd started, but ${B - late.length} of its runs have not started`);
    const allStartedMs = late.at(-1)!;
    return {
      allStartedMs,
      p50: percentile(late, 50),
      p99: percentile(late, 99),
      runsPerSecond: B / Math.max(0.001, allStartedMs / 1000),
      madeAhead: rows.filter((r) => r.ahead).length / B,
      insertedBeforeMs,
      lastWrittenMs: Math.max(...rows.map((r) => r.written)),
      rss: children.map((c, i) => ({ name: c.name, readyMb: readyMb[i]!, peakMb: peakMb[i]! })),
      cpu,
    };
  } finally {
    for (const c of children) c.process.kill('SIGTERM');
    await Promise.race([Promise.all(children.map((c) => c.exited)), sleep(20_000)]);
    for (const c of children) if (c.process.exitCode === null) c.process.kill('SIGKILL');
    await box.drop();
  }
}

async function rawHerd(): Promise<Herd> {
  const box = await sandbox('herd_raw');
  const queue = new Queue('bench', { connection: { url: REDIS_URL }, prefix: box.prefix });
  const late: number[] = [];
  const worker = new Worker<{ due: number }>('bench', async (job) => void late.push(Date.now() - job.data.due), {
    connection: { url: REDIS_URL, maxRetriesPerRequest: null },
    prefix: box.prefix,
    concurrency: RAW_CONCURRENCY,
  });
  await worker.waitUntilReady();
  const t0 = Date.now() + 10_000;
  for (let i = 0; i < B; i += 1_000) {
    await queue.addBulk(
      Array.from({ length: Math.min(1_000, B - i) }, () => ({ name: 'herd', data: { due: t0 }, opts: { delay: t0 - Date.now(), removeOnComplete: true } })),
    );
  }
  const insertedBeforeMs = t0 - Date.now();
  await sleep(Math.max(0, t0 - Date.now()));
  const cpuAtT0 = cpuSpent();
  await until(async () => late.length >= B, 300_000, 'the raw BullMQ herd', 100);
  const cpu = cpuPerRun(cpuAtT0, B);
  await worker.close();
  await queue.obliterate({ force: true });
  await queue.close();
  await box.drop();
  late.sort((a, b) => a - b);
  const allStartedMs = late.at(-1)!;
  return { allStartedMs, p50: percentile(late, 50), p99: percentile(late, 99), runsPerSecond: B / Math.max(0.001, allStartedMs / 1000), madeAhead: 1, insertedBeforeMs, lastWrittenMs: 0, rss: [], cpu };
}

/** The herds each Kairos figure is set beside: raw BullMQ's and graphile-worker's. */
interface Anchors {
  raw: Herd;
  graphile: Herd;
}

/**
 * One round's figures: the anchors' and each shape's, and, where the machine can be split, the
 * anchors and the roles apart again in the production shape (see inShape).
 */
type HerdRound = Anchors & Record<Shape, Herd> & { production?: Anchors & { apart: Herd } };

/**
 * A shape's figures over the rounds: the median of each timing, rate and CPU figure, the least made ahead, the
 * latest last write, each process's median RSS when ready and its highest peak.
 */
function overRounds(herds: readonly Herd[]): Herd {
  const of = (pick: (h: Herd) => number): number => median(herds.map(pick));
  return {
    allStartedMs: of((h) => h.allStartedMs),
    p50: of((h) => h.p50),
    p99: of((h) => h.p99),
    runsPerSecond: of((h) => h.runsPerSecond),
    madeAhead: Math.min(...herds.map((h) => h.madeAhead)),
    insertedBeforeMs: Math.min(...herds.map((h) => h.insertedBeforeMs)),
    lastWrittenMs: Math.max(...herds.map((h) => h.lastWrittenMs)),
    rss: herds[0]!.rss.map((r, i) => ({ name: r.name, readyMb: median(herds.map((h) => h.rss[i]!.readyMb)), peakMb: Math.max(...herds.map((h) => h.rss[i]!.peakMb)) })),
    cpu: medianCpu(herds.map((h) => h.cpu)),
  };
}

export async function herdScenario(): Promise<void> {
  if (!existsSync(`${ROOT}dist/apps/kairos/src/main.js`)) throw new Error('bench herd: run `npm run build` first; it starts Kairos from dist/');
  const machines = machineShapes();
  process.stdout.write(`herd: seeding ${N - B} schedules spread over a day...\n`);
  // Seeded once, copied for each shape and round (CREATE DATABASE ... TEMPLATE).
  const template = await sandbox('herd_template');
  try {
    const seedSeconds = await seedTemplate(template);
    const scan = await dueScan(template.db);
    await template.db.end();
    process.stdout.write(`herd: seeded in ${fmt(seedSeconds)} s\n`);
    const s = (ms: number): string => fmt(ms / 1000, 2);
    const rounds: HerdRound[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      process.stdout.write(`herd round ${round}/${ROUNDS}: raw BullMQ, graphile-worker, then Kairos in each shape...\n`);
      const result = { raw: await rawHerd(), graphile: await graphileHerd(B) } as HerdRound;
      for (const shape of SHAPE_ORDER) result[shape] = await kairosHerd(template.name, shape);
      if (machines.includes('production') && SHAPE_ORDER.includes('apart')) {
        result.production = await inShape('production', async () => ({ raw: await rawHerd(), graphile: await graphileHerd(B), apart: await kairosHerd(template.name, 'apart') }));
      }
      rounds.push(result);
      /** A Kairos herd's time to all started, and its ratios to the anchors of its round. */
      const time = (label: string, herd: Herd, anchors: Anchors): string =>
        `${label} ${s(herd.allStartedMs)} s (${fmt(herd.allStartedMs / anchors.raw.allStartedMs, 2)}x BullMQ, ${fmt(herd.allStartedMs / anchors.graphile.allStartedMs, 2)}x graphile)`;
      const anchors = (a: Anchors): string => `raw BullMQ ${s(a.raw.allStartedMs)} s, graphile-worker ${s(a.graphile.allStartedMs)} s`;
      const times = SHAPE_ORDER.map((shape) => time(shape, result[shape], result));
      const p = result.production;
      if (p) times.push(`production shape: ${anchors(p)}, ${time('apart', p.apart, p)}`);
      process.stdout.write(`herd round ${round}: all started after: ${anchors(result)}, ${times.join(', ')}; load average ${loadavg().map((l) => fmt(l, 1)).join(' ')}\n`);
    }
    const production = rounds.flatMap((r) => (r.production ? [r.production] : []));
    type Pair = { kairos: Herd } & Anchors;
    /** Kairos's ratios to an anchor: the median of each round's ratio to that round's anchor in the same machine shape. */
    const ratios = (pairs: readonly Pair[], anchor: keyof Anchors): string =>
      `${fmt(median(pairs.map((p) => p.kairos.allStartedMs / p[anchor].allStartedMs)), 2)} / ${fmt(median(pairs.map((p) => p.kairos.p99 / p[anchor].p99)), 2)}`;
    /** A table row: an anchor's (no pairs), or Kairos's with its rounds paired with the anchors'. */
    const row = (label: string, herds: readonly Herd[], pairs: readonly Pair[] | null): string[] => {
      const h = overRounds(herds);
      return [
        label,
        s(h.allStartedMs),
        `${s(h.p50)} / ${s(h.p99)}`,
        fmt(h.runsPerSecond),
        pairs === null ? '-' : `${fmt(h.madeAhead * 100)} % (inserted T0-${s(h.insertedBeforeMs)}, last T0${h.lastWrittenMs < 0 ? '' : '+'}${s(h.lastWrittenMs)})`,
        pairs === null ? '-' : ratios(pairs, 'raw'),
        pairs === null ? '-' : ratios(pairs, 'graphile'),
        h.rss.map((r) => `${r.name} ${fmt(r.readyMb)} → ${fmt(r.peakMb)}`).join(', ') || '-',
        [h.cpu.node, h.cpu.postgres, h.cpu.redis].map((us) => (us === null ? 'not local' : fmt(us))).join(' / '),
      ];
    };
    printTable([
      [
        `herd: ${B} of ${N} schedules due at one instant, median of ${ROUNDS}`,
        'all started (s)',
        'lateness p50 / p99 (s)',
        'runs/s',
        'runs in the ledger before T0',
        'vs BullMQ: all started / p99',
        'vs graphile: all started / p99',
        'RSS ready → highest peak (MB)',
        'CPU per run from T0 (µs): Node / Postgres / Redis',
      ],
      row(`raw BullMQ, ${B} delayed jobs, concurrency ${RAW_CONCURRENCY}`, rounds.map((r) => r.raw), null),
      row(`graphile-worker, ${B} jobs of one runAt, concurrency ${GRAPHILE_CONCURRENCY}, 2 s poll at its mean phase`, rounds.map((r) => r.graphile), null),
      ...SHAPE_ORDER.map((shape) => row(SHAPES[shape].label, rounds.map((r) => r[shape]), rounds.map((r) => ({ kairos: r[shape], raw: r.raw, graphile: r.graphile })))),
      ...(production.length === 0
        ? []
        : [
            row('raw BullMQ, production shape', production.map((p) => p.raw), null),
            row('graphile-worker, production shape', production.map((p) => p.graphile), null),
            row(`${SHAPES.apart.label}, production shape`, production.map((p) => p.apart), production.map((p) => ({ kairos: p.apart, raw: p.raw, graphile: p.graphile }))),
          ]),
    ]);
    process.stdout.write(
      `due scan at ${N} schedules: claimDue p50 ${fmt(percentile(scan.claim, 50), 2)} ms, p99 ${fmt(percentile(scan.claim, 99), 2)} ms; ` +
        `next-due p50 ${fmt(percentile(scan.nextDue, 50), 2)} ms, p99 ${fmt(percentile(scan.nextDue, 99), 2)} ms; ` +
        `load average ${loadavg().map((l) => fmt(l, 1)).join(' ')}\n`,
    );
  } finally {
    await template.drop();
  }
}
