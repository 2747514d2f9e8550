/**
 * Zero setup: on a machine with Node.js and nothing else, `npm start` runs. The built all-in-one
 * process is started in a network namespace whose loopback has no Postgres and no Redis, without
 * DATABASE_URL or REDIS_URL: it starts its embedded Postgres, keeps its queues there, fires an
 * every-second schedule, and after a restart (and after a kill -9, whose server the watchdog
 * stops) the schedule is still there and fires again. Needs root (network namespaces, and the
 * server running as the postgres user) and the build in dist/ (the global setup makes it).
 */
import { execFile, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, builtMain } from '../support/build.js';
import { waitFor } from '../support/kairos.js';
import { spawnProcess } from '../support/processes.js';

const run = promisify(execFile);
const MAIN = path.join(ROOT, builtMain('kairos'));
const PORT = 3000;

interface Started {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
  /** Milliseconds from spawn to the banner, and the embedded server's own start as logged. */
  upMs: number;
  postgresMs: number;
}

describe('zero setup: only Node.js on the machine', () => {
  const netns = `kz-${randomBytes(4).toString('hex')}`;
  let dataDir: string;
  const started: Started[] = [];

  beforeAll(async () => {
    expect(fs.existsSync(MAIN), `${MAIN} is missing: the global setup builds it`).toBe(true);
    await run('ip', ['netns', 'add', netns]);
    await run('ip', ['netns', 'exec', netns, 'ip', 'link', 'set', 'lo', 'up']);
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'kairos-zero-'));
    // The server runs as the postgres user, which must reach its folder inside this one.
    fs.chmodSync(dataDir, 0o755);
  });

  afterAll(async () => {
    for (const s of started) if (s.child.exitCode === null && s.child.signalCode === null) s.child.kill('SIGKILL');
    await Promise.all(started.map((s) => s.exited));
    if (dataDir) await waitFor(async () => (serverPids(dataDir).length === 0 ? true : undefined), 'the embedded server to stop', 30_000).catch(() => undefined);
    for (const pid of dataDir ? serverPids(dataDir) : []) process.kill(pid, 'SIGKILL');
    await run('ip', ['netns', 'del', netns]).catch(() => undefined);
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  });

  /** Runs `script` (an async function body) with Node inside the namespace and returns what it printed as JSON. */
  async function inside(script: string): Promise<any> {
    const { stdout } = await run('ip', ['netns', 'exec', netns, process.execPath, '--input-type=module', '-e', `console.log(JSON.stringify(await (async () => { ${script} })()))`]);
    return JSON.parse(stdout);
  }
  const request = (method: string, url: string, body?: unknown) =>
    inside(`
      const response = await fetch('http://127.0.0.1:${PORT}${url}', { method: '${method}', headers: { 'content-type': 'application/json' }, ${body === undefined ? '' : `body: ${JSON.stringify(JSON.stringify(body))}`} });
      return { status: response.status, body: await response.json() };`);

  async function start(): Promise<Started> {
    const env: Record<string, string | undefined> = { ...process.env, KAIROS_DATA_DIR: dataDir, PORT: String(PORT), LOG_FORMAT: 'json', LOG_LEVEL: 'log' };
    delete env.DATABASE_URL;
    delete env.REDIS_URL;
    const began = Date.now();
    const child = spawnProcess('ip', ['netns', 'exec', netns, process.execPath, MAIN], { env });
    const entry: Partial<Started> = { child: child.process, output: child.output, exited: child.exited };
    started.push(entry as Started);
    await child.until(/"msg":"Kairos all-in-one is up"/, 'kairos to come up', 120_000);
    entry.upMs = Date.now() - began;
    entry.postgresMs = Number(/embedded Postgres (?:created \S+ and )?started in (\d+) ms/.exec(child.output())?.[1]);
    return entry as Started;
  }

  async function succeededSince(scheduleId: string, since: Date): Promise<number> {
    const { body } = await request('GET', `/v1/runs?scheduleId=${scheduleId}&state=succeeded&limit=100`);
    return (body.items as { scheduledFor: string }[]).filter((r) => new Date(r.scheduledFor) > since).length;
  }

  it('comes up on the embedded Postgres and Postgres transport, fires every second, and keeps the schedule across restarts', async () => {
    // Nothing answers on the namespace's loopback where Postgres and Redis usually are.
    const probes = await inside(`
      const net = await import('node:net');
      const probe = (port) => new Promise((resolve) => {
        const socket = net.connect(port, '127.0.0.1');
        socket.once('connect', () => { socket.destroy(); resolve('open'); });
        socket.once('error', (error) => resolve(error.code));
      });
      return [await probe(5432), await probe(6379)];`);
    expect(probes).toEqual(['ECONNREFUSED', 'ECONNREFUSED']);

    const cold = await start();
    const banner = JSON.parse(cold.output().split('\n').find((l) => l.includes('"msg":"Kairos all-in-one is up"'))!);
    expect(banner.database).toBe(`embedded postgres ${dataDir}/pg:54329`);
    expect(banner.transport).toBe("postgres (schema kairos_transport of the ledger's database)");
    expect(cold.output()).toContain(`embedded Postgres created ${dataDir}/pg and started`);
    const ready = await waitFor(async () => {
      const response = await request('GET', '/health/ready');
      return response.status === 200 ? response.body : undefined;
    }, 'ready', 20_000);
    expect(ready.info.postgres).toEqual({ status: 'up', database: `embedded postgres ${dataDir}/pg:54329` });
    expect(ready.info.transport).toEqual({ status: 'up', transport: "postgres (schema kairos_transport of the ledger's database)" });

    const created = await request('POST', '/v1/schedules', { name: 'zero', every: '1s', target: { type: 'handler', name: 'echo' }, payload: { zero: true } });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    await waitFor(async () => ((await succeededSince(id, new Date(0))) >= 2 ? true : undefined), 'the schedule to fire twice', 30_000);

    cold.child.kill('SIGTERM');
    expect(await cold.exited).toBe(0);
    expect(serverPids(dataDir)).toEqual([]);

    // A warm start: the data folder is there, the schedule with it.
    const restartedAt = new Date();
    const warm = await start();
    expect(warm.output()).not.toContain('embedded Postgres created');
    const listed = await request('GET', '/v1/schedules');
    expect(listed.body.items.map((s: { id: string }) => s.id)).toEqual([id]);
    await waitFor(async () => ((await succeededSince(id, restartedAt)) >= 2 ? true : undefined), 'the schedule to fire after the restart', 30_000);

    // kill -9 leaves no server behind: the watchdog stops it, and the next start finds the folder free.
    warm.child.kill('SIGKILL');
    await warm.exited;
    await waitFor(async () => (serverPids(dataDir).length === 0 ? true : undefined), 'the orphaned server to stop', 30_000);
    const killedAt = new Date();
    const third = await start();
    await waitFor(async () => ((await succeededSince(id, killedAt)) >= 1 ? true : undefined), 'the schedule to fire after the kill', 30_000);
    third.child.kill('SIGTERM');
    expect(await third.exited).toBe(0);
    // The server stops with the process; allow the moment its exit takes to show in /proc.
    await waitFor(async () => (serverPids(dataDir).length === 0 ? true : undefined), 'the embedded server to stop with Kairos', 100, 20);
    console.log(
      `zero setup: cold start ${cold.upMs} ms to the banner (embedded Postgres ${cold.postgresMs} ms, initdb included), ` +
        `warm ${warm.upMs} ms (Postgres ${warm.postgresMs} ms), after kill -9 ${third.upMs} ms (Postgres ${third.postgresMs} ms); load ${os.loadavg()[0]!.toFixed(2)}`,
    );
  }, 300_000);
});

/** The pids of Postgres servers running on `dataDir`. */
function serverPids(dataDir: string): number[] {
  return fs.readdirSync('/proc').flatMap((entry) => {
    if (!/^\d+$/.test(entry)) return [];
    try {
      const argv = fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      return argv[0]!.endsWith('/postgres') && argv.includes(path.join(dataDir, 'pg')) ? [Number(entry)] : [];
    } catch {
      return [];
    }
  });
}
