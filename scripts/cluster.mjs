#!/usr/bin/env node
/**
 * `npm run cluster -- --schedulers 2 --workers 4 [--port 3000]`: the deployed topology as local
 * processes against the Postgres of DATABASE_URL (required) and the Redis of REDIS_URL (without
 * it, the queues live in that Postgres). One API on --port, the
 * schedulers and workers on the ports after it, every output line prefixed with the process's
 * name. Ctrl-C (or SIGTERM) stops them all gracefully and waits for them; a second one kills them.
 * With --port 0 every process picks a free port and prints it in its banner. The processes run the
 * build (`npm run build`), as `npm run start:*` do.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const USAGE = 'usage: npm run cluster -- [--schedulers N] [--workers N] [--port P]';

function parseArgs(argv) {
  const options = { schedulers: 2, workers: 2, port: 3000 };
  for (let i = 0; i < argv.length; i += 2) {
    const name = argv[i]?.replace(/^--/, '');
    const value = Number(argv[i + 1]);
    if (!(name in options) || !Number.isInteger(value) || value < 0 || (name !== 'port' && value > 64) || value > 65535) {
      process.stderr.write(`cluster: cannot read "${argv[i]} ${argv[i + 1] ?? ''}"\n${USAGE}\n`);
      process.exit(2);
    }
    options[name] = value;
  }
  if (options.schedulers < 1) {
    process.stderr.write(`cluster: at least one scheduler is needed\n${USAGE}\n`);
    process.exit(2);
  }
  return options;
}

const options = parseArgs(process.argv.slice(2));
if (!process.env.DATABASE_URL?.trim()) {
  // Without it every process would start an embedded Postgres of its own on the same folder.
  process.stderr.write('cluster: set DATABASE_URL: the processes share one Postgres, and the embedded one belongs to a single process\n');
  process.exit(2);
}
const main = (app) => `dist/apps/${app}/src/main.js`;
if (!['api', 'scheduler', 'worker'].every((app) => existsSync(new URL(`../${main(app)}`, import.meta.url)))) {
  process.stderr.write('cluster: the processes run the build in dist/: run npm run build first\n');
  process.exit(2);
}
const roles = [
  { name: 'api', app: 'api' },
  ...Array.from({ length: options.schedulers }, (_, i) => ({ name: `scheduler-${i + 1}`, app: 'scheduler' })),
  ...Array.from({ length: options.workers }, (_, i) => ({ name: `worker-${i + 1}`, app: 'worker' })),
];
const width = Math.max(...roles.map((r) => r.name.length));
// Children write to a pipe, not a terminal; keep readable lines when this launcher runs in one.
const logFormat = process.env.LOG_FORMAT ?? (process.stdout.isTTY ? 'pretty' : 'json');

const children = roles.map((role, index) => {
  const port = options.port === 0 ? 0 : options.port + index;
  const child = spawn(process.execPath, [main(role.app)], {
    cwd: ROOT,
    env: { ...process.env, PORT: String(port), LOG_FORMAT: logFormat, KAIROS_ROLES: role.app },
    stdio: ['ignore', 'pipe', 'pipe'],
    // Their own process group: a Ctrl-C reaches this launcher only, which stops each process once.
    detached: true,
  });
  const prefix = `[${role.name.padEnd(width)}] `;
  for (const [stream, out] of [[child.stdout, process.stdout], [child.stderr, process.stderr]]) {
    createInterface({ input: stream }).on('line', (line) => out.write(`${prefix}${line}\n`));
  }
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ role, code, signal })));
  process.stdout.write(`${prefix}started (pid ${child.pid}${port === 0 ? '' : `, port ${port}`})\n`);
  return { role, child, exited };
});

let stopping = false;
async function stop(signal) {
  if (stopping) {
    process.stderr.write(`cluster: ${signal} again, killing every process\n`);
    for (const { child } of children) child.kill('SIGKILL');
    return;
  }
  stopping = true;
  process.stdout.write(`cluster: ${signal}, stopping ${children.length} processes\n`);
  for (const { child } of children) if (child.exitCode === null) child.kill('SIGTERM');
  const results = await Promise.all(children.map((c) => c.exited));
  const failed = results.filter((r) => r.code !== 0);
  for (const r of failed) process.stderr.write(`cluster: ${r.role.name} exited with ${r.code ?? r.signal}\n`);
  process.stdout.write(`cluster: all ${children.length} processes exited\n`);
  process.exit(failed.length === 0 ? 0 : 1);
}
process.on('SIGINT', () => void stop('SIGINT'));
process.on('SIGTERM', () => void stop('SIGTERM'));

// A process that dies on its own takes the cluster down: a half cluster is not what was asked for.
for (const { exited } of children) {
  exited.then(({ role, code, signal }) => {
    if (stopping) return;
    process.stderr.write(`cluster: ${role.name} exited with ${code ?? signal}; stopping the others\n`);
    void stop('SIGTERM');
  });
}
