/**
 * What every bench scenario shares: a fresh database and Redis prefix per phase, the CPU spent
 * per run, waiting, percentiles and the table printer.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { deleteKeysWithPrefix } from '@kairos/queue';

export const ADMIN_URL = process.env.KAIROS_BENCH_ADMIN_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
export const ROOT = fileURLToPath(new URL('../', import.meta.url));
/** The Node options `npm start` and `npm run start:<role>` give Kairos (its V8 heap budget). */
export const NODE_FLAGS = /\bnode ((?:--\S+ )*)dist\//.exec(JSON.parse(readFileSync(`${ROOT}package.json`, 'utf8')).scripts.start)![1]!.split(' ').filter(Boolean);

export interface Sandbox {
  name: string;
  url: string;
  prefix: string;
  db: pg.Pool;
  drop(): Promise<void>;
}

export async function admin(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/**
 * A fresh database (a copy of `template` when given, which must have no connections) and Redis
 * prefix; on the Postgres transport the queues live in the database, so there are no keys to drop.
 */
export async function sandbox(label: string, template?: string, transport: 'redis' | 'postgres' = 'redis'): Promise<Sandbox> {
  const name = `kairos_bench_${label}_${Date.now().toString(36)}`;
  await admin(`CREATE DATABASE ${name}${template ? ` TEMPLATE ${template}` : ''}`);
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  const db = new pg.Pool({ connectionString: url.toString(), max: 4 });
  // DROP DATABASE ... WITH (FORCE) may still find a connection the pool is closing.
  db.on('error', () => undefined);
  return {
    name,
    url: url.toString(),
    prefix: `kb-${name}`,
    db,
    drop: async () => {
      // A template's pool is closed before it is copied.
      if (!db.ended) await db.end();
      await admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      if (transport === 'redis') await deleteKeysWithPrefix(REDIS_URL, `kb-${name}`);
    },
  };
}

/** CPU time spent so far, in microseconds: this process (every thread), and Postgres and Redis when they run on this machine. */
export interface CpuSpent {
  node: number;
  postgres: number | null;
  redis: number | null;
}

/** /proc counts CPU time in clock ticks of 1/100 s (USER_HZ, 100 on Linux). */
const CLOCK_TICK_US = 10_000;

/**
 * Reads the CPU time of this process (or, given `pids`, of those Node processes) and of the local
 * Postgres and Redis servers from /proc. A Postgres backend that exited is counted through its
 * parent's children's time (cutime, cstime). Where /proc is missing or the servers are elsewhere,
 * their figure is null.
 */
export function cpuSpent(pids?: readonly number[]): CpuSpent {
  const servers: Record<'postgres' | 'redis', number | null> = { postgres: null, redis: null };
  let node = 0;
  if (!pids) {
    const { user, system } = process.cpuUsage();
    node = user + system;
  }
  let entries: string[] = [];
  try {
    entries = readdirSync('/proc');
  } catch {
    // Not Linux: this process's figure only.
  }
  for (const pid of entries) {
    if (!/^\d+$/.test(pid)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    } catch {
      continue;
    }
    const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
    const server = comm === 'postgres' ? 'postgres' : comm === 'redis-server' ? 'redis' : null;
    const ours = pids?.includes(Number(pid)) ?? false;
    if (server === null && !ours) continue;
    // utime, stime, cutime, cstime: fields 14 to 17 of /proc/<pid>/stat, in clock ticks.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]);
    if (ours) node += ticks * CLOCK_TICK_US;
    else servers[server!] = (servers[server!] ?? 0) + ticks * CLOCK_TICK_US;
  }
  return { node, ...servers };
}

/** The CPU time spent since `from` (read with the same `pids`), per run, in microseconds. */
export function cpuPerRun(from: CpuSpent, runs: number, pids?: readonly number[]): CpuSpent {
  const now = cpuSpent(pids);
  const per = (a: number | null, b: number | null): number | null => (a === null || b === null ? null : (a - b) / runs);
  return { node: (now.node - from.node) / runs, postgres: per(now.postgres, from.postgres), redis: per(now.redis, from.redis) };
}

/** The median of each figure over `cpus`; a server's is null when any of them is. */
export function medianCpu(cpus: readonly CpuSpent[]): CpuSpent {
  const of = (k: 'postgres' | 'redis'): number | null => (cpus.some((c) => c[k] === null) ? null : median(cpus.map((c) => c[k]!)));
  return { node: median(cpus.map((c) => c.node)), postgres: of('postgres'), redis: of('redis') };
}

export async function until(probe: () => Promise<boolean>, timeoutMs: number, what: string, intervalMs = 50): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`bench: timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** The p-th percentile of ascending `sorted`. */
export const percentile = (sorted: readonly number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;

export const median = (values: readonly number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

export const fmt = (n: number, digits = 0): string => n.toFixed(digits);

/** Prints rows as aligned columns, the first row as the header. */
export function printTable(rows: string[][]): void {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  process.stdout.write(`\n${rows.map((r) => r.map((c, i) => c.padEnd(widths[i]!)).join('  ')).join('\n')}\n\n`);
}

/**
 * Where the bench's processes run. `shared`: Node, Postgres and Redis on every core, as on a
 * laptop. `production`: Postgres and Redis on the first core and the Node processes (this one and
 * every child it starts afterwards) on the others, as a deployment keeps its database and broker
 * off the application's cores. Both sides of a comparison run in the same shape.
 */
export type MachineShape = 'shared' | 'production';

/** The shapes KAIROS_BENCH_SHAPES asks for (default both), each measured only where it can be. */
export function machineShapes(): MachineShape[] {
  const asked = (process.env.KAIROS_BENCH_SHAPES ?? 'shared,production').split(',').map((s) => s.trim());
  for (const s of asked) if (s !== 'shared' && s !== 'production') throw new Error(`KAIROS_BENCH_SHAPES: "${s}" is neither shared nor production`);
  const pinnable = cpus().length >= 2 && spawnSync('taskset', ['-p', String(process.pid)]).status === 0;
  if (asked.includes('production') && !pinnable) process.stdout.write('production shape: not measured here (it needs taskset and two cores)\n');
  return (asked as MachineShape[]).filter((s) => s === 'shared' || pinnable);
}

/** Runs `fn` in `shape`, then gives every process back all cores. */
export async function inShape<T>(shape: MachineShape, fn: () => Promise<T>): Promise<T> {
  if (shape === 'shared') return fn();
  const all = `0-${cpus().length - 1}`;
  const pin = (cores: string, pids: readonly number[]): void => {
    for (const pid of pids) spawnSync('taskset', ['-a', '-p', '-c', cores, String(pid)], { stdio: 'ignore' });
  };
  pin('0', serverPids());
  pin(`1-${cpus().length - 1}`, [process.pid]);
  try {
    return await fn();
  } finally {
    pin(all, [...serverPids(), process.pid]);
  }
}

/** The local Postgres (postmaster and backends: new backends inherit the postmaster's cores) and Redis processes. */
function serverPids(): number[] {
  return readdirSync('/proc')
    .filter((pid) => /^\d+$/.test(pid))
    .filter((pid) => {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
        return comm === 'postgres' || comm === 'redis-server';
      } catch {
        return false;
      }
    })
    .map(Number);
}

export interface Child {
  name: string;
  process: ChildProcess;
  /** Resolves with the process's base URL once it is up. */
  ready: Promise<string>;
  exited: Promise<void>;
}

/** Starts a Kairos role from the build (`dist/`) on the sandbox, as `npm run start:<role>` does; `flags` go to Node (--cpu-prof, say). */
export function startBuilt(name: string, app: 'kairos' | 'api' | 'scheduler' | 'worker', box: Sandbox, env: Record<string, string> = {}, flags: readonly string[] = []): Child {
  const child = spawn(process.execPath, [...NODE_FLAGS, ...flags, `dist/apps/${app}/src/main.js`], {
    cwd: ROOT,
    env: { ...process.env, DATABASE_URL: box.url, REDIS_URL, KAIROS_QUEUE_PREFIX: box.prefix, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'warn', LOG_FORMAT: 'json', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const ready = new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const health = /"health":"(http:\/\/[^/"]+)/.exec(output) ?? /Health\s+(http:\/\/\S+?)\//.exec(output);
      if (health) resolve(health[1]!);
    });
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('exit', (code) => reject(new Error(`bench: ${name} exited with ${code} before it was up:\n${output}`)));
  });
  ready.catch(() => undefined);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return { name, process: child, ready, exited };
}
