/**
 * Queue shards (`npm run bench -- shards`): Kairos on one Redis, on a Redis Cluster of three masters
 * (a replica each) with every run on one slot (KAIROS_QUEUE_SHARDS=1), and on the same Cluster with
 * its runs queue split into shards (KAIROS_QUEUE_SHARDS=6; KAIROS_BENCH_SHARDS lists the Cluster's
 * counts, `1,6`), the engines in turn in each of KAIROS_BENCH_ROUNDS rounds. On each engine: the
 * herd (herd.ts: B of N pending schedules due at one instant, Kairos from dist/ as one scheduler and
 * two workers) and the steady throughput (kairos.ts: the scheduler and the built-in worker in this
 * process). Over the steady phase it reads what a
 * durable run costs, the figures the scale model is built from: on each Redis master, the commands
 * (INFO commandstats after CONFIG RESETSTAT), the bytes in and out (INFO stats) and the CPU (INFO
 * cpu); in Postgres the transactions and rows written (pg_stat_database; the statements too where
 * pg_stat_statements is loaded) and the CPU; and the CPU of this process. From the CPU per run it
 * prints the rate each process would reach on a core of its own: a projection, not a measurement.
 * The single Redis and the Cluster are made for the scenario, on loopback ports, as the engine
 * tests make them.
 */
import { existsSync } from 'node:fs';
import { loadavg } from 'node:os';
import pg from 'pg';
import { DEFAULT_QUEUE } from '@kairos/domain';
import { liveShards, runsQueueName, shardPrefix } from '@kairos/queue';
import { B, N, SHAPES, kairosHerd, seedTemplate, type Herd, type Shape } from './herd.js';
import { ROUNDS, RUNS, kairosThroughput, type Throughput, type ThroughputProbe } from './kairos.js';
import { ADMIN_URL, ROOT, fmt, median, printTable, sandbox, sleep, type Sandbox } from './sandbox.js';

/** The Cluster's masters. */
const MASTERS = 3;
/** The numbers of shards measured on the Cluster (KAIROS_BENCH_SHARDS, `1,6`): an engine each. */
const COUNTS = (process.env.KAIROS_BENCH_SHARDS ?? '1,6').split(',').map((c) => Number(c.trim()));
for (const c of COUNTS) if (!Number.isInteger(c) || c < 1 || c > 64) throw new Error(`KAIROS_BENCH_SHARDS: "${c}" is not a number of shards (1 to 64)`);
/** Kairos's shape in the herd (KAIROS_BENCH_SHARDS_HERD_SHAPE, one of herd.ts's: `apart` by default). */
const HERD_SHAPE = (process.env.KAIROS_BENCH_SHARDS_HERD_SHAPE ?? 'apart') as Shape;
if (!(HERD_SHAPE in SHAPES)) throw new Error(`KAIROS_BENCH_SHARDS_HERD_SHAPE: "${HERD_SHAPE}" is not one of ${Object.keys(SHAPES).join(', ')}`);
/**
 * Postgres adds a backend's counts to pg_stat_database when it flushes them: at once when busy, but
 * up to 10 s later when it went idle just after a flush, and as it exits. The phase's start is read
 * this long after Kairos is up, so the counts of its start are in before it, and its end this long
 * after Kairos stopped, so those of the bench's own connections (the runs' inserts) are in.
 */
const PG_STATS_SETTLE_MS = 11_000;

/** Where Kairos runs: its environment, the Redis masters, and how the default runs queue's shards fall on them. */
interface Engine {
  label: string;
  env: Record<string, string>;
  masters: number[];
  /** How many of the default runs queue's shards each master holds under queue prefix `prefix`. */
  shardsOn(prefix: string): Promise<Map<number, number>>;
}

/** What a Redis node counted, or spent per run. */
interface NodeCounters {
  /** Calls as Redis counts them: each command a client sends, and each call a script makes. */
  commands: number;
  /** Scripts run (EVAL, EVALSHA, FCALL): BullMQ moves a job with one. */
  scripts: number;
  bytesIn: number;
  bytesOut: number;
  /** Bytes sent to the node's replicas. */
  replicationOut: number;
  cpuUs: number;
}

interface PostgresCounters {
  transactions: number;
  rowsWritten: number;
  /** Statements (pg_stat_statements), null where it is not loaded. */
  statements: number | null;
}

/** A steady phase's cost per run: each master's (busiest first, by commands), and Postgres's. */
interface RunCost {
  masters: { shards: number; cost: NodeCounters }[];
  postgres: PostgresCounters;
}

interface Round {
  herd: Herd;
  steady: Throughput;
  cost: RunCost;
}

type Command = (port: number, ...args: string[]) => Promise<unknown>;

/** A node's counters from INFO (stats, commandstats, cpu). */
async function nodeCounters(command: Command, port: number): Promise<NodeCounters> {
  const info = String(await command(port, 'INFO', 'stats', 'commandstats', 'cpu'));
  const field = (name: string): number => Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(info)?.[1] ?? 0);
  let commands = 0;
  let scripts = 0;
  for (const [, name, calls] of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) {
    commands += Number(calls);
    if (/^(eval|evalsha|eval_ro|evalsha_ro|fcall|fcall_ro)$/.test(name!)) scripts += Number(calls);
  }
  return {
    commands,
    scripts,
    bytesIn: field('total_net_input_bytes'),
    bytesOut: field('total_net_output_bytes'),
    replicationOut: field('total_net_repl_output_bytes'),
    cpuUs: (field('used_cpu_sys') + field('used_cpu_user')) * 1e6,
  };
}

/** A query on the admin database: its first row. */
async function adminRow(sql: string, params: unknown[] = []): Promise<Record<string, unknown>> {
  const client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
  try {
    return (await client.query(sql, params)).rows[0] as Record<string, unknown>;
  } finally {
    await client.end();
  }
}

/** Whether Postgres counts statements (pg_stat_statements preloaded); its view is then made in the admin database. */
async function statementsCounted(): Promise<boolean> {
  const loaded = (await adminRow(`SELECT current_setting('shared_preload_libraries') ~ 'pg_stat_statements' AS loaded`)).loaded === true;
  if (loaded) await adminRow('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
  return loaded;
}

async function postgresCounters(box: Sandbox, statements: boolean): Promise<PostgresCounters> {
  const { rows } = await box.db.query(
    `SELECT xact_commit + xact_rollback AS transactions, tup_inserted + tup_updated + tup_deleted AS written FROM pg_stat_database WHERE datname = current_database()`,
  );
  const counted = statements
    ? Number((await adminRow(`SELECT coalesce(sum(calls), 0)::float8 AS n FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = $1)`, [box.name])).n)
    : null;
  return { transactions: Number(rows[0].transactions), rowsWritten: Number(rows[0].written), statements: counted };
}

/**
 * Waits (10 s at most) until Kairos's connections have left the database, then until the bench's
 * own idle connections have flushed their counts.
 */
async function countsFlushed(box: Sandbox): Promise<void> {
  const deadline = Date.now() + 10_000;
  const left = async (): Promise<number> =>
    (await box.db.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name <> '' AND pid <> pg_backend_pid()`)).rows[0].n;
  while ((await left()) > 0 && Date.now() < deadline) await sleep(100);
  await sleep(PG_STATS_SETTLE_MS);
}

/** Reads the engine's and Postgres's counters around a steady phase; `cost()` answers them per run. */
function costProbe(engine: Engine, command: Command, statements: boolean): ThroughputProbe & { cost(): RunCost } {
  let held = new Map<number, number>();
  let redisFrom: NodeCounters[] = [];
  let redisTo: NodeCounters[] = [];
  let pgFrom: PostgresCounters | null = null;
  let pgTo: PostgresCounters | null = null;
  return {
    async before(box) {
      held = await engine.shardsOn(box.prefix);
      await sleep(PG_STATS_SETTLE_MS);
      pgFrom = await postgresCounters(box, statements);
      for (const port of engine.masters) await command(port, 'CONFIG', 'RESETSTAT');
      redisFrom = await Promise.all(engine.masters.map((port) => nodeCounters(command, port)));
    },
    async after() {
      redisTo = await Promise.all(engine.masters.map((port) => nodeCounters(command, port)));
    },
    async stopped(box) {
      await countsFlushed(box);
      pgTo = await postgresCounters(box, statements);
    },
    cost() {
      const per = (to: number, from: number): number => (to - from) / RUNS;
      const masters = engine.masters.map((port, i) => {
        const [from, to] = [redisFrom[i]!, redisTo[i]!];
        const cost = Object.fromEntries(Object.keys(to).map((k) => [k, per(to[k as keyof NodeCounters], from[k as keyof NodeCounters])])) as unknown as NodeCounters;
        return { shards: held.get(port) ?? 0, cost };
      });
      const [from, to] = [pgFrom!, pgTo!];
      return {
        masters: masters.sort((a, b) => b.cost.commands - a.cost.commands),
        postgres: {
          transactions: per(to.transactions, from.transactions),
          rowsWritten: per(to.rowsWritten, from.rowsWritten),
          statements: to.statements === null || from.statements === null ? null : per(to.statements, from.statements),
        },
      };
    },
  };
}

export async function shardsScenario(): Promise<void> {
  if (!existsSync(`${ROOT}dist/apps/kairos/src/main.js`)) throw new Error('bench shards: run `npm run build` first; the herd starts Kairos from dist/');
  const { command, startRedis, startRedisCluster } = await import('../test/support/engines.js');
  const statements = await statementsCounted();
  const single = await startRedis();
  const cluster = await startRedisCluster(MASTERS).catch(async (error: unknown) => {
    await single.stop();
    throw error;
  });
  let template: Sandbox | null = null;
  try {
    template = await sandbox('shards_template');
    const masters = cluster.nodesVariable.split(',').map((address) => Number(address.split(':')[1]));
    const queue = runsQueueName(DEFAULT_QUEUE);
    const engines: Engine[] = [
      { label: 'one Redis', env: { REDIS_URL: single.url, KAIROS_QUEUE_SHARDS: '' }, masters: [single.port], shardsOn: async () => new Map([[single.port, 1]]) },
      ...COUNTS.map((count) => ({
        label: `Cluster, KAIROS_QUEUE_SHARDS=${count}`,
        env: { REDIS_URL: '', REDIS_CLUSTER_NODES: cluster.nodesVariable, KAIROS_QUEUE_SHARDS: String(count) },
        masters,
        async shardsOn(prefix: string) {
          const held = new Map(masters.map((port) => [port, 0]));
          for (const shard of liveShards(count)) {
            const port = await cluster.masterOf(shardPrefix(`{${prefix}}`, prefix, queue, shard));
            held.set(port, (held.get(port) ?? 0) + 1);
          }
          return held;
        },
      })),
    ];
    process.stdout.write(`shards: seeding ${N - B} schedules spread over a day...\n`);
    await seedTemplate(template);
    await template.db.end();
    const rounds = engines.map(() => [] as Round[]);
    for (let round = 1; round <= ROUNDS; round++) {
      for (const [i, engine] of engines.entries()) {
        process.stdout.write(`shards round ${round}/${ROUNDS}: ${engine.label}: the herd, then the steady throughput...\n`);
        const herd = await kairosHerd(template!.name, HERD_SHAPE, engine.env);
        const probe = costProbe(engine, command as Command, statements);
        const steady = await kairosThroughput('redis', false, () => engine.env, probe);
        rounds[i]!.push({ herd, steady, cost: probe.cost() });
      }
    }
    report(engines, rounds, statements);
  } finally {
    await template?.drop();
    await cluster.stop();
    await single.stop();
  }
}

/** Prints the herd and throughput, the cost per run on each master and in Postgres, and the ceilings those project. */
function report(engines: readonly Engine[], rounds: readonly Round[][], statements: boolean): void {
  const of = <T>(items: readonly T[], pick: (item: T) => number): number => median(items.map(pick));
  const s = (ms: number): string => fmt(ms / 1000, 2);
  const cpu = (us: number | null): string => (us === null ? 'not local' : fmt(us));
  /** Postgres's CPU per run over the rounds, null where it does not run on this machine. */
  const postgresCpu = (r: readonly Round[]): number | null => (r.some((x) => x.steady.cpu.postgres === null) ? null : of(r, (x) => x.steady.cpu.postgres!));
  const baseline = rounds[0]!;
  process.stdout.write(`
shards: one Redis, and a Redis Cluster of ${MASTERS} masters (a replica each) at each number of shards; medians of ${ROUNDS} ${ROUNDS === 1 ? 'round' : 'rounds'}
herd: ${B} of ${N} schedules due at one instant, ${SHAPES[HERD_SHAPE].label}; steady: ${RUNS} noop runs, the scheduler and the built-in worker in this process
`);
  printTable([
    [
      'engine',
      'herd: all started (s)',
      'herd lateness p50 / p99 (s)',
      'herd runs/s',
      'steady runs/s',
      'steady / one Redis',
    ],
    ...engines.map((engine, e) => {
      const r = rounds[e]!;
      return [
        engine.label,
        s(of(r, (x) => x.herd.allStartedMs)),
        `${s(of(r, (x) => x.herd.p50))} / ${s(of(r, (x) => x.herd.p99))}`,
        fmt(of(r, (x) => x.herd.runsPerSecond)),
        fmt(of(r, (x) => x.steady.perSecond)),
        fmt(median(r.map((x, i) => x.steady.perSecond / baseline[i]!.steady.perSecond)), 2),
      ];
    }),
  ]);
  const bytes = (n: number): string => fmt(n);
  process.stdout.write(`per durable run on each Redis master, steady phase: busiest first (by commands), the median of the rounds at each rank
`);
  printTable([
    ['engine', 'master', 'shards held (each round)', 'commands', 'of which scripts', 'bytes in', 'bytes out', 'bytes to replica', 'Redis CPU (µs)'],
    ...engines.flatMap((engine, e) => {
      const r = rounds[e]!;
      const rows = engine.masters.map((_, rank) => {
        const at = r.map((x) => x.cost.masters[rank]!);
        return [
          engine.label,
          String(rank + 1),
          at.map((m) => m.shards).join(', '),
          fmt(of(at, (m) => m.cost.commands), 1),
          fmt(of(at, (m) => m.cost.scripts), 1),
          bytes(of(at, (m) => m.cost.bytesIn)),
          bytes(of(at, (m) => m.cost.bytesOut)),
          bytes(of(at, (m) => m.cost.replicationOut)),
          fmt(of(at, (m) => m.cost.cpuUs)),
        ];
      });
      if (engine.masters.length === 1) return rows;
      const sum = (pick: (c: NodeCounters) => number) => of(r, (x) => x.cost.masters.reduce((total, m) => total + pick(m.cost), 0));
      return [
        ...rows,
        [engine.label, 'all', '', fmt(sum((c) => c.commands), 1), fmt(sum((c) => c.scripts), 1), bytes(sum((c) => c.bytesIn)), bytes(sum((c) => c.bytesOut)), bytes(sum((c) => c.replicationOut)), fmt(sum((c) => c.cpuUs))],
      ];
    }),
  ]);
  process.stdout.write(`per durable run in Postgres and in this process, steady phase
`);
  printTable([
    ['engine', 'Postgres transactions', 'rows written', 'statements', 'Postgres CPU (µs)', 'Node CPU (µs): scheduler, worker and the inserts'],
    ...engines.map((engine, e) => {
      const r = rounds[e]!;
      return [
        engine.label,
        fmt(of(r, (x) => x.cost.postgres.transactions), 3),
        fmt(of(r, (x) => x.cost.postgres.rowsWritten), 2),
        statements ? fmt(of(r, (x) => x.cost.postgres.statements ?? NaN), 3) : 'pg_stat_statements not loaded',
        cpu(postgresCpu(r)),
        fmt(of(r, (x) => x.steady.cpu.node)),
      ];
    }),
  ]);
  // A core's microseconds over a run's: the rate at which that process would fill one core.
  const perCore = (us: number | null): string => (us === null || us <= 0 ? '-' : fmt(1e6 / us));
  process.stdout.write(`projected, not measured: runs a second at which a Redis master, or a core of Postgres or of Node, is full (1,000,000 µs over its CPU per run)
`);
  printTable([
    ['engine', 'Redis: busiest master full', 'Redis: runs spread evenly over the masters', 'Postgres, per core', 'Node, per core'],
    ...engines.map((engine, e) => {
      const r = rounds[e]!;
      const total = of(r, (x) => x.cost.masters.reduce((sum, m) => sum + m.cost.cpuUs, 0));
      return [
        engine.label,
        perCore(of(r, (x) => Math.max(...x.cost.masters.map((m) => m.cost.cpuUs)))),
        perCore(total / engine.masters.length),
        perCore(postgresCpu(r)),
        perCore(of(r, (x) => x.steady.cpu.node)),
      ];
    }),
  ]);
  process.stdout.write(`load average ${loadavg().map((l) => fmt(l, 1)).join(' ')}\n`);
}
