// Smoke of the built project under the Node.js that runs this script (`.ci/run` runs it on Node.js
// 24 and 26 after the main test run on 20): starts the all-in-one process (dist/, so `npm run
// build` first) on a fresh database of the local Postgres and a key prefix of its own on the local
// Redis, creates an every-second schedule over REST and waits for its runs to succeed, runs a
// handler on a queue of its own in a user worker built with the SDK (its build in dist/), and stops
// both with SIGTERM, expecting exit code 0. Prints one line per step and a count; exits 1 on a
// failure. The database and the Redis keys are removed afterwards either way.
//
// KAIROS_SMOKE_ADMIN_URL (default postgresql://postgres@127.0.0.1:5432/postgres) and REDIS_URL
// (default redis://127.0.0.1:6379) name the servers.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const MAIN = `${ROOT}dist/apps/kairos/src/main.js`;
const SDK = `${ROOT}dist/packages/sdk/src/index.js`;
const ADMIN_URL = process.env.KAIROS_SMOKE_ADMIN_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
/** The whole smoke must end well within this. */
const DEADLINE_MS = 100_000;

if (process.argv[2] === 'worker') await runWorker(process.argv[3]);
else await smoke();

/** The user worker, in a process of its own: one handler on one queue, stopped by SIGTERM. */
async function runWorker(queue) {
  const { KairosWorker } = await import(SDK);
  const worker = new KairosWorker({
    queue,
    concurrency: 4,
    version: 'smoke',
    logger: { log: () => undefined, warn: (m) => console.error(`worker: ${m}`), error: (m) => console.error(`worker: ${m}`) },
    handlers: { 'smoke-double': async ({ payload }) => ({ doubled: payload.n * 2, node: process.version }) },
  });
  await worker.start();
  console.log('worker ready');
  process.once('SIGTERM', async () => {
    await worker.stop();
    process.exit(0);
  });
}

async function smoke() {
  const began = Date.now();
  const hardStop = setTimeout(() => {
    console.log(`not ok - the smoke took more than ${DEADLINE_MS / 1000} s`);
    void cleanup().finally(() => process.exit(1));
  }, DEADLINE_MS);
  const { default: pg } = await import('pg');
  const { Redis } = await import('ioredis');
  const id = randomBytes(4).toString('hex');
  const database = `kairos_smoke_${id}`;
  const prefix = `kairos-smoke-${id}`;
  const queue = `smoke-${id}`;
  const databaseUrl = Object.assign(new URL(ADMIN_URL), { pathname: `/${database}` }).href;
  const env = { ...process.env, DATABASE_URL: databaseUrl, REDIS_URL, KAIROS_QUEUE_PREFIX: prefix, PORT: '0', HOST: '127.0.0.1', LOG_FORMAT: 'json', LOG_LEVEL: 'warn' };
  delete env.NODE_OPTIONS;
  const children = [];
  let passed = 0;
  let failed = 0;

  async function step(name, body) {
    const started = Date.now();
    try {
      const detail = await body();
      passed += 1;
      console.log(`ok ${passed + failed} - ${name}${detail ? ` (${detail})` : ''} [${Date.now() - started} ms]`);
    } catch (error) {
      failed += 1;
      console.log(`not ok ${passed + failed} - ${name}: ${error.message}`);
      for (const child of children) if (child.output()) console.log(`--- output of ${child.name}:\n${child.output().slice(-4_000)}`);
      throw error;
    }
  }

  let cleaned = false;
  async function cleanup() {
    if (cleaned) return;
    cleaned = true;
    for (const child of children) if (child.process.exitCode === null && child.process.signalCode === null) child.process.kill('SIGKILL');
    await Promise.all(children.map((c) => c.exited));
    const admin = new pg.Client({ connectionString: ADMIN_URL });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`).finally(() => admin.end());
    const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1, lazyConnect: true });
    await redis.connect();
    let removed = 0;
    for (let cursor = '0'; ; ) {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1_000);
      if (keys.length > 0) removed += await redis.del(...keys);
      cursor = next;
      if (cursor === '0') break;
    }
    await redis.quit();
    return removed;
  }

  let base = '';
  const api = async (method, path, body) => {
    const response = await fetch(`${base}${path}`, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`${method} ${path} answered ${response.status}: ${text}`);
    return JSON.parse(text);
  };
  const succeededRuns = async (scheduleId) => (await api('GET', `/v1/runs?scheduleId=${scheduleId}&state=succeeded&limit=10`)).items;

  let kairos;
  let worker;
  try {
    await step(`Node.js ${process.version}: dist/ is built`, async () => {
      for (const file of [MAIN, SDK]) if (!existsSync(file)) throw new Error(`${file} is missing: run npm run build first`);
    });
    await step(`a fresh database ${database} on the local Postgres`, async () => {
      const admin = new pg.Client({ connectionString: ADMIN_URL });
      await admin.connect();
      await admin.query(`CREATE DATABASE ${database}`).finally(() => admin.end());
    });
    await step('the all-in-one process starts, applies the migrations and is ready', async () => {
      kairos = start('kairos', [MAIN], env, (line) => line.includes('"msg":"Kairos all-in-one is up"'));
      children.push(kairos);
      const banner = JSON.parse((await kairos.ready).trim());
      base = new URL(banner.rest).origin;
      const ready = await until(async () => {
        const response = await fetch(`${base}/health/ready`);
        return response.status === 200 ? response.json() : undefined;
      }, 'ready', 20_000);
      return `${banner.database}; ${Object.keys(ready.info).join(', ')} up`;
    });
    await step('an every-second schedule over REST fires and its runs succeed with the payload echoed', async () => {
      const schedule = await api('POST', '/v1/schedules', { name: 'smoke', every: '1s', target: { type: 'handler', name: 'echo' }, payload: { smoke: id } });
      const runs = await until(async () => {
        const items = await succeededRuns(schedule.id);
        return items.length >= 2 ? items : undefined;
      }, 'two succeeded runs', 30_000);
      for (const run of runs) if (run.result?.smoke !== id) throw new Error(`run ${run.id} has result ${JSON.stringify(run.result)}`);
      return `${runs.length} runs succeeded`;
    });
    await step(`a user worker built with the SDK runs its handler on queue ${queue}`, async () => {
      worker = start('worker', [fileURLToPath(import.meta.url), 'worker', queue], env, (line) => line.includes('worker ready'));
      children.push(worker);
      await worker.ready;
      const schedule = await api('POST', '/v1/schedules', { name: 'smoke-worker', every: '1s', target: { type: 'handler', name: 'smoke-double', queue }, payload: { n: 21 } });
      const [run] = await until(async () => {
        const items = await succeededRuns(schedule.id);
        return items.length >= 1 ? items : undefined;
      }, "a run of the worker's handler to succeed", 30_000);
      if (run.result?.doubled !== 42 || run.result?.node !== process.version) throw new Error(`run ${run.id} has result ${JSON.stringify(run.result)}`);
      await api('POST', `/v1/schedules/${schedule.id}/pause`);
      return `result ${JSON.stringify(run.result)}`;
    });
    await step('SIGTERM stops the worker and then Kairos, each with exit code 0', async () => {
      const codes = [];
      for (const child of [worker, kairos]) {
        child.process.kill('SIGTERM');
        const code = await Promise.race([child.exited, new Promise((resolve) => setTimeout(() => resolve('no exit within 30 s'), 30_000))]);
        if (code !== 0) throw new Error(`${child.name} exited with ${code}`);
        codes.push(`${child.name} 0`);
      }
      return codes.join(', ');
    });
    await step('the database and the Redis keys are removed', async () => `${await cleanup()} keys`);
    // What a newer Node.js deprecates in the code or its dependencies is worth knowing before it breaks.
    const warnings = children.flatMap((c) => c.output().split('\n').filter((line) => /\(node:\d+\) \[?\w*\]? ?\w*Warning/.test(line)).map((line) => `${c.name}: ${line}`));
    for (const warning of new Set(warnings)) console.log(`note - ${warning}`);
  } catch {
    await cleanup().catch((error) => console.log(`cleanup failed: ${error.message}`));
  }
  clearTimeout(hardStop);
  console.log(`smoke on Node.js ${process.version}: ${passed} passed, ${failed} failed in ${((Date.now() - began) / 1000).toFixed(1)} s`);
  process.exit(failed === 0 ? 0 : 1);
}

/** A child process under this Node.js; `ready` resolves with the first output line `isReady` accepts. */
function start(name, args, env, isReady) {
  const child = spawn(process.execPath, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal)));
  const ready = new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name} printed no ready line within 60 s`)), 60_000);
    const onData = (chunk) => {
      output += chunk.toString();
      const line = output.split('\n').find(isReady);
      if (line) {
        clearTimeout(timer);
        resolve(line);
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited with ${code} before it was ready`));
    });
  });
  ready.catch(() => undefined);
  return { name, process: child, output: () => output, exited, ready };
}

async function until(read, what, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  let lastError;
  while (Date.now() < deadline) {
    try {
      const value = await read();
      if (value !== undefined) return value;
    } catch (error) {
      lastError = error;
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`no ${what} within ${timeoutMs} ms${lastError ? ` (last error: ${lastError.message})` : ''}`);
}
