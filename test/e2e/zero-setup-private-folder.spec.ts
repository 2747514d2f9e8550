/**
 * Zero setup as root in a private folder: `npm start` from a checkout the postgres user cannot pass
 * through (a `mktemp -d` folder, mode 0700, as under /root), with its data folder there too. The
 * checkout is this one, bind-mounted into the private folder in a mount namespace of the process's
 * own, which runs in a network namespace without Postgres or Redis as in zero-setup.spec.ts: the
 * embedded server must still start (from a copy of its binaries, its data in /var/lib/kairos) and
 * an every-second schedule fire. Needs root and the build in dist/.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../support/kairos.js';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const PORT = 3000;
const EMBEDDED_PORT = 54329;

describe('zero setup: root, in a folder the postgres user cannot pass through', () => {
  const netns = `kzp-${randomBytes(4).toString('hex')}`;
  let privateDir: string;
  let child: ChildProcess | undefined;
  let exited: Promise<number | null> = Promise.resolve(null);
  let output = '';

  beforeAll(async () => {
    expect(fs.existsSync(path.join(ROOT, 'dist/apps/kairos/src/main.js')), 'the build in dist/ is missing').toBe(true);
    await run('ip', ['netns', 'add', netns]);
    await run('ip', ['netns', 'exec', netns, 'ip', 'link', 'set', 'lo', 'up']);
    privateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'kairos-private-'));
    expect(fs.statSync(privateDir).mode & 0o777).toBe(0o700);
    fs.mkdirSync(path.join(privateDir, 'k'));
  });

  afterAll(async () => {
    if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
    // The relocated data folder of this run; the copy of the binaries stays, shared by every start.
    const moved = /keeps its data in (\/var\/lib\/kairos\/pg-[0-9a-f]+)/.exec(output)?.[1];
    if (moved) {
      await waitFor(async () => (serverRunsOn(moved) ? undefined : true), 'the embedded server to stop', 30_000).catch(() => undefined);
      fs.rmSync(moved, { recursive: true, force: true });
    }
    await run('ip', ['netns', 'del', netns]).catch(() => undefined);
    if (privateDir) fs.rmSync(privateDir, { recursive: true, force: true });
  });

  const request = async (method: string, url: string, body?: unknown): Promise<{ status: number; body: any }> => {
    const script = `
      const response = await fetch('http://127.0.0.1:${PORT}${url}', { method: '${method}', headers: { 'content-type': 'application/json' }, ${body === undefined ? '' : `body: ${JSON.stringify(JSON.stringify(body))}`} });
      console.log(JSON.stringify({ status: response.status, body: await response.json() }));`;
    const { stdout } = await run('ip', ['netns', 'exec', netns, process.execPath, '--input-type=module', '-e', script]);
    return JSON.parse(stdout);
  };

  it('starts the embedded Postgres from a copy of its binaries, keeps the data in /var/lib/kairos, and fires', async () => {
    const checkout = path.join(privateDir, 'k');
    // The data folder is in the private folder too, beside the checkout rather than in it: the
    // mounted checkout is this repository, which the link must not land in.
    const env: Record<string, string | undefined> = { ...process.env, KAIROS_DATA_DIR: path.join(privateDir, 'data'), PORT: String(PORT), LOG_FORMAT: 'json', LOG_LEVEL: 'log' };
    delete env.DATABASE_URL;
    delete env.REDIS_URL;
    delete env.KAIROS_EMBEDDED_PG_PORT;
    // The bind mount lives in the child's own mount namespace: nothing of it outlives the child.
    child = spawn(
      'unshare',
      ['--mount', '--propagation', 'private', 'sh', '-c', 'mount --bind "$0" "$1" && cd "$1" && exec ip netns exec "$2" "$3" dist/apps/kairos/src/main.js', ROOT, checkout, netns, process.execPath],
      { env, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    exited = new Promise((resolve) => child!.once('exit', (code) => resolve(code)));
    await waitFor(async () => {
      if (child!.exitCode !== null) throw new Error(`kairos exited with ${child!.exitCode}:\n${output}`);
      return output.includes('"msg":"Kairos all-in-one is up"') ? true : undefined;
    }, 'kairos to come up', 120_000);

    expect(output).toContain(`the postgres user cannot pass ${privateDir} (mode 0700`);
    expect(output).toMatch(/runs from a copy of its binaries in \/var\/lib\/kairos\/postgres-/);
    expect(output).toMatch(new RegExp(`keeps its data in /var/lib/kairos/pg-[0-9a-f]+, linked from ${privateDir}/data/pg`));
    expect(fs.readlinkSync(path.join(privateDir, 'data/pg'))).toMatch(/^\/var\/lib\/kairos\/pg-/);

    const created = await request('POST', '/v1/schedules', { name: 'private', every: '1s', target: { type: 'handler', name: 'echo' } });
    expect(created.status).toBe(201);
    await waitFor(async () => {
      const { body } = await request('GET', `/v1/runs?scheduleId=${created.body.id}&state=succeeded&limit=10`);
      return body.items.length >= 2 ? true : undefined;
    }, 'the schedule to fire twice', 30_000);

    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  }, 240_000);
});

/** Whether a postgres process serves the data folder `dataDir`. */
function serverRunsOn(dataDir: string): boolean {
  return fs.readdirSync('/proc').some((pid) => {
    if (!/^\d+$/.test(pid)) return false;
    try {
      const args = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      return args[0]!.endsWith('postgres') && args.includes(dataDir) && args.includes(String(EMBEDDED_PORT));
    } catch {
      return false;
    }
  });
}
