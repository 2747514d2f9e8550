/**
 * A transport that cannot be reached never takes a process down: for each way a connection can
 * fail (nothing listening, credentials refused, a server that accepts and then hangs up, a pooler
 * that refuses the Postgres transport's startup parameter) the process stays up for half a minute
 * (five backoff steps) with a small heap, says what is wrong once per backoff step, reports it on
 * /health/ready, and serves runs as soon as the dependency is fixed, without a restart.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { SPAWNING_TIMEOUT_MS, api, sleep, spawnKairos, useTestEnvironment, waitFor, type KairosChild } from '../support/kairos.js';

/** How long each process must live with its broken transport. */
const OUTAGE_MS = 30_000;
const HEAP_LIMIT_BYTES = 150 * 1024 * 1024;

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

function startRedis(port: number, ...args: string[]): ChildProcess {
  const redis = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', ...args], { stdio: 'ignore' });
  return redis;
}

async function redisAnswers(port: number, ...auth: string[]): Promise<void> {
  await waitFor(async () => (spawnSync('redis-cli', ['-p', String(port), ...auth, 'ping'], { encoding: 'utf8' }).stdout.trim() === 'PONG' ? true : undefined), `redis on ${port}`);
}

/** A TCP server that accepts every connection and closes it at once. */
async function hangUpServer(port: number): Promise<net.Server> {
  const server = net.createServer((socket) => socket.destroy());
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return server;
}

type ProxyMode = 'refuse-options' | 'hang-up-options' | 'pass';

/**
 * A Postgres front that behaves as a transaction-mode PgBouncer does towards the `options` startup
 * parameter (the Postgres transport pins its schema with it): refuse it with PgBouncer's error, or
 * hang up on it; every other connection, and all of them in `pass` mode, goes through to Postgres.
 */
async function postgresFront(port: number, target: URL): Promise<{ mode: ProxyMode; server: net.Server }> {
  const front = { mode: 'refuse-options' as ProxyMode, server: net.createServer() };
  front.server.on('connection', (client) => {
    let buffered = Buffer.alloc(0);
    const onData = (chunk: Buffer): void => {
      buffered = Buffer.concat([buffered, chunk]);
      if (buffered.length < 8 || buffered.length < buffered.readInt32BE(0)) return;
      client.off('data', onData);
      const startup = buffered.subarray(8, buffered.readInt32BE(0)).toString('utf8').split('\0');
      const carriesOptions = startup.some((field, i) => i % 2 === 0 && field === 'options');
      if (carriesOptions && front.mode === 'hang-up-options') return void client.destroy();
      if (carriesOptions && front.mode === 'refuse-options') return void client.end(errorResponse('08P01', 'unsupported startup parameter: options'));
      const upstream = net.connect(Number(target.port || 5432), target.hostname, () => {
        upstream.write(buffered);
        client.pipe(upstream).pipe(client);
      });
      upstream.on('error', () => client.destroy());
      client.on('error', () => upstream.destroy());
      client.on('close', () => upstream.destroy());
    };
    client.on('data', onData);
    client.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => front.server.listen(port, '127.0.0.1', resolve));
  return front;
}

/** A Postgres ErrorResponse message (FATAL, with its SQLSTATE). */
function errorResponse(sqlstate: string, message: string): Buffer {
  const fields = Buffer.from(`SFATAL\0VFATAL\0C${sqlstate}\0M${message}\0\0`, 'utf8');
  const head = Buffer.alloc(5);
  head.write('E', 0);
  head.writeInt32BE(fields.length + 4, 1);
  return Buffer.concat([head, fields]);
}

interface Outage {
  name: string;
  /** The check /health/ready reports down, and words its message must carry. */
  check: 'redis' | 'transport';
  says: RegExp;
  env(): Promise<Record<string, string>>;
  fix(): Promise<void>;
}

async function heapUsed(base: string): Promise<number> {
  const metrics = await (await fetch(`${base}/metrics`)).text();
  const line = metrics.split('\n').find((l) => l.startsWith('kairos_nodejs_heap_size_used_bytes '));
  return Number(line!.split(' ')[1]);
}

describe('a transport that cannot be reached', () => {
  const t = useTestEnvironment();
  const cleanups: (() => unknown)[] = [];
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });

  const outages: Outage[] = [];
  {
    let port = 0;
    outages.push({
      name: 'Redis: nothing listens',
      check: 'redis',
      says: /ECONNREFUSED.*start Redis or point REDIS_URL at a running server/,
      env: async () => ({ REDIS_URL: `redis://127.0.0.1:${(port = await freePort())}` }),
      fix: async () => {
        const redis = startRedis(port);
        cleanups.push(() => redis.kill('SIGKILL'));
        await redisAnswers(port);
      },
    });
  }
  {
    let port = 0;
    outages.push({
      name: 'Redis: credentials refused',
      check: 'redis',
      says: /NOAUTH.*Redis refuses these credentials/,
      env: async () => {
        port = await freePort();
        const redis = startRedis(port, '--requirepass', 'not-given');
        cleanups.push(() => redis.kill('SIGKILL'));
        await redisAnswers(port, '-a', 'not-given', '--no-auth-warning');
        return { REDIS_URL: `redis://127.0.0.1:${port}` };
      },
      fix: async () => {
        spawnSync('redis-cli', ['-p', String(port), '-a', 'not-given', '--no-auth-warning', 'config', 'set', 'requirepass', '']);
      },
    });
  }
  {
    let port = 0;
    let server: net.Server;
    outages.push({
      name: 'Redis: a server that accepts and hangs up',
      check: 'redis',
      says: /cannot reach Redis at 127\.0\.0\.1:\d+: /,
      env: async () => {
        server = await hangUpServer((port = await freePort()));
        cleanups.push(() => server.close());
        return { REDIS_URL: `redis://127.0.0.1:${port}` };
      },
      fix: async () => {
        await new Promise((resolve) => server.close(resolve));
        const redis = startRedis(port);
        cleanups.push(() => redis.kill('SIGKILL'));
        await redisAnswers(port);
      },
    });
  }
  for (const mode of ['refuse-options', 'hang-up-options'] as const) {
    let front: Awaited<ReturnType<typeof postgresFront>>;
    outages.push({
      name: `Postgres transport: a pooler that ${mode === 'refuse-options' ? 'refuses' : 'hangs up on'} the schema's startup parameter`,
      check: 'transport',
      says: mode === 'refuse-options' ? /unsupported startup parameter: options.*point DATABASE_URL at Postgres itself, not the pooler/ : /cannot reach the Postgres transport/,
      env: async () => {
        front = await postgresFront(await freePort(), new URL(t.databaseUrl));
        front.mode = mode;
        cleanups.push(() => front.server.close());
        const url = new URL(t.databaseUrl);
        url.port = String((front.server.address() as net.AddressInfo).port);
        return { DATABASE_URL: url.toString(), REDIS_URL: '' };
      },
      fix: async () => {
        front.mode = 'pass';
      },
    });
  }

  it(
    'keeps each process up with a small heap, says why on /health/ready and in a few lines, and serves once it is fixed',
    async () => {
      const children: KairosChild[] = [];
      cleanups.push(async () => {
        for (const child of children) child.process.kill('SIGKILL');
      });
      // Each outage gets its own Redis prefix, so the processes of different outages share nothing but the ledger's database.
      for (const [i, outage] of outages.entries()) {
        children.push(spawnKairos('kairos', t.env({ KAIROS_QUEUE_PREFIX: `${t.redisPrefix}-${i}`, LOG_LEVEL: 'warn', ...(await outage.env()) })));
      }
      const bases = await Promise.all(children.map((c) => c.ready));
      await sleep(OUTAGE_MS);

      for (const [i, outage] of outages.entries()) {
        const child = children[i]!;
        expect(child.process.exitCode, `${outage.name}: the process is still running`).toBeNull();
        expect(await heapUsed(bases[i]!), `${outage.name}: heap used`).toBeLessThan(HEAP_LIMIT_BYTES);
        const health = await fetch(`${bases[i]}/health/ready`);
        expect(health.status, outage.name).toBe(503);
        const report = (await health.json()) as { error: Record<string, { status: string; message: string }> };
        expect(report.error[outage.check]?.status, `${outage.name}: ${JSON.stringify(report)}`).toBe('down');
        expect(report.error[outage.check]!.message, outage.name).toMatch(outage.says);
        // One line per backoff step (1, 2, 4, 8, 16, 30 s) from the consumer, not one per retry.
        const consumerLines = child.output().split('\n').filter((l) => l.includes('queue kairos-runs: cannot reach'));
        expect(consumerLines.length, `${outage.name}:\n${consumerLines.join('\n')}`).toBeGreaterThanOrEqual(4);
        expect(consumerLines.length, outage.name).toBeLessThanOrEqual(8);
        expect(consumerLines[0], outage.name).toMatch(outage.says);
        const lines = child.output().split('\n');
        expect(lines.length, `${outage.name}: the whole log stays small, and it is:\n${[...new Set(lines.map((l) => l.replace(/"time":"[^"]*",/, '').slice(0, 240)))].join('\n')}`).toBeLessThan(80);
      }

      await Promise.all(outages.map((o) => o.fix()));
      await Promise.all(
        outages.map(async (outage, i) => {
          const client = api(bases[i]!);
          await waitFor(async () => ((await fetch(`${bases[i]}/health/ready`)).status === 200 ? true : undefined), `${outage.name}: ready again`, 45_000, 500);
          const created = await client.post('/v1/runs', { target: { type: 'handler', name: 'echo' }, payload: { outage: i } });
          expect(created.status, outage.name).toBe(201);
          const run = await waitFor(async () => {
            const { body } = await client.get(`/v1/runs/${created.body.id}`);
            return body.state === 'succeeded' ? body : undefined;
          }, `${outage.name}: a run after the fix`, 45_000, 250);
          expect(run.result, outage.name).toEqual({ outage: i });
        }),
      );
      for (const child of children) child.process.kill('SIGTERM');
      expect(await Promise.all(children.map((c) => c.exited))).toEqual(outages.map(() => 0));
    },
    SPAWNING_TIMEOUT_MS + OUTAGE_MS + 120_000,
  );
});
