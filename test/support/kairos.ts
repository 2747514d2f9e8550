/**
 * Running Kairos under test against the real Postgres and Redis: a fresh database and Redis prefix
 * per test file, in-process apps, and child processes (for kill -9 and SIGSTOP). The `postgres`
 * vitest project (KAIROS_TEST_TRANSPORT=postgres) runs the same files with the queues in each test
 * database's transport schema instead of Redis.
 */
import { afterAll, beforeAll, inject } from 'vitest';
import { Worker, createPostgresBackend } from 'bullmq';
import pg from 'pg';
import { TRANSPORT_SCHEMA, type Role, type TransportConfig } from '@kairos/config';
import { startKairos, type StartedKairos } from '@kairos/process';
import { ApiModule } from '../../apps/api/src/api.module.js';
import { SchedulerModule } from '../../apps/scheduler/src/scheduler.module.js';
import { WorkerModule } from '../../apps/worker/src/worker.module.js';
import { runCli } from '../../apps/cli/src/cli.js';
import { DEFAULT_RUNS_QUEUE_NAME, deleteKeysWithPrefix, openTransport, type RunsQueue, type Transport } from '@kairos/queue';
import { REDIS_URL, createDatabase, databaseUrl, dropDatabase, uniqueName } from './services.js';
import { builtMain, type App } from './build.js';
import { spawnProcess, type ChildOutput } from './processes.js';

/** Timings short enough for tests to watch failover and reaping happen. */
export const FAST_TIMINGS: Record<string, string> = {
  KAIROS_LEADER_TTL: '2s',
  KAIROS_TICK_MAX_IDLE: '200ms',
  KAIROS_RELAY_INTERVAL: '300ms',
  KAIROS_RECONCILE_INTERVAL: '500ms',
  KAIROS_RECONCILE_GRACE: '1s',
  KAIROS_REAPER_INTERVAL: '300ms',
  KAIROS_REAPER_SKEW: '500ms',
  KAIROS_REAPER_BACKOFF: '200ms',
  KAIROS_RUN_LEASE_TTL: '3s',
  KAIROS_SHUTDOWN_GRACE: '3s',
  LOG_LEVEL: 'warn',
};

/** The transport this test run exercises: Redis unless KAIROS_TEST_TRANSPORT=postgres. */
export const TEST_TRANSPORT: TransportConfig['kind'] = process.env.KAIROS_TEST_TRANSPORT === 'postgres' ? 'postgres' : 'redis';

export interface TestEnvironment {
  databaseUrl: string;
  redisPrefix: string;
  /** Where this test's Kairos keeps its queues. */
  transport: TransportConfig;
  /** A pool on the test database, for assertions. */
  db: pg.Pool;
  /** Environment for a Kairos process of this test. */
  env(overrides?: Record<string, string>): Record<string, string>;
  cleanup(): Promise<void>;
}

export async function testEnvironment(): Promise<TestEnvironment> {
  const name = uniqueName(inject('runId'));
  await createDatabase(name, inject('templateDatabase'));
  const url = databaseUrl(name);
  const redisPrefix = `kt-${name}`;
  const db = new pg.Pool({ connectionString: url, max: 4 });
  // Dropping the database ends any connection still closing; that must not fail the run.
  db.on('error', () => undefined);
  const transport: TransportConfig = TEST_TRANSPORT === 'redis' ? { kind: 'redis', url: REDIS_URL } : { kind: 'postgres', url, schema: TRANSPORT_SCHEMA };
  return {
    databaseUrl: url,
    redisPrefix,
    transport,
    db,
    env: (overrides = {}) => ({
      ...FAST_TIMINGS,
      DATABASE_URL: url,
      // Empty means unset, also over a REDIS_URL a spawned child inherits.
      REDIS_URL: transport.kind === 'redis' ? REDIS_URL : '',
      KAIROS_QUEUE_PREFIX: redisPrefix,
      PORT: '0',
      HOST: '127.0.0.1',
      // Rate limits have their own spec; elsewhere test clients send bursts no real client would.
      KAIROS_RATE_LIMIT: '0',
      ...overrides,
    }),
    cleanup: async () => {
      await db.end();
      await dropDatabase(name);
      if (transport.kind === 'redis') await deleteKeysWithPrefix(REDIS_URL, redisPrefix);
    },
  };
}

/** The test's transport, opened as Kairos opens it. Close it after use. */
export function testTransport(t: TestEnvironment): Promise<Transport> {
  return openTransport(t.transport, t.redisPrefix);
}

/**
 * A handle on the test's runs queue in the transport, to look at (or tamper with) the jobs Kairos
 * holds there. Closing it closes its transport too.
 */
export async function runsQueue(t: TestEnvironment): Promise<RunsQueue> {
  const transport = await testTransport(t);
  const queue = transport.queue(DEFAULT_RUNS_QUEUE_NAME);
  const close = queue.close.bind(queue);
  queue.close = async () => {
    await close();
    await transport.close();
  };
  return queue;
}

/** A worker on the test's runs queue that takes jobs only when asked (getNextJob), as a test needs. Close it after use. */
export function manualWorker(t: TestEnvironment): Worker {
  return t.transport.kind === 'redis'
    ? new Worker(DEFAULT_RUNS_QUEUE_NAME, null, { connection: { url: t.transport.url, maxRetriesPerRequest: null }, prefix: t.redisPrefix, autorun: false })
    : (new Worker(DEFAULT_RUNS_QUEUE_NAME, null, { connection: { connectionString: t.transport.url, schema: t.transport.schema, max: 2 }, autorun: false }, createPostgresBackend) as unknown as Worker);
}

/**
 * Loses everything the transport holds, as a Redis FLUSHALL (or a wiped Postgres transport
 * schema) would: every job, delayed or waiting, is gone.
 */
export async function wipeTransport(t: TestEnvironment): Promise<void> {
  if (t.transport.kind === 'redis') return deleteKeysWithPrefix(t.transport.url, t.redisPrefix);
  const schema = pg.escapeIdentifier(t.transport.schema);
  const { rows } = await t.db.query<{ name: string }>(
    `SELECT tablename AS name FROM pg_tables WHERE schemaname = $1 AND tablename <> 'migration'`,
    [t.transport.schema],
  );
  // Workers lock the transport's rows in their own order while TRUNCATE locks its tables in turn, so
  // Postgres may pick the TRUNCATE as a deadlock's victim: the wipe is tried again, as an operator would.
  for (let attempt = 1; ; attempt++) {
    try {
      await t.db.query(`TRUNCATE ${rows.map((r) => `${schema}.${pg.escapeIdentifier(r.name)}`).join(', ')}`);
      return;
    } catch (error) {
      if ((error as { code?: string }).code !== '40P01' || attempt === 5) throw error;
    }
  }
}

/**
 * A value a hook sets later, reachable before then through a stand-in that forwards every property
 * to it, so a describe block can name it once (`const { t, kairos } = useKairos()`) and use it
 * inside its tests and hooks.
 */
function late<T extends object>(what: string): { value: T; current: T | undefined; set(value: T): void } {
  const slot: { current: T | undefined } = { current: undefined };
  const target = (): T => {
    if (slot.current === undefined) throw new Error(`${what} is used before the beforeAll hook that makes it has run`);
    return slot.current;
  };
  const value = new Proxy({} as T, {
    get: (_stub, key) => {
      const actual = target();
      const property: unknown = Reflect.get(actual, key, actual);
      return typeof property === 'function' ? property.bind(actual) : property;
    },
  });
  return {
    value,
    get current() {
      return slot.current;
    },
    set: (actual) => (slot.current = actual),
  };
}

/** Gives the enclosing describe block a fresh database and Redis prefix, dropped after its tests. */
export function useTestEnvironment(): TestEnvironment {
  const t = late<TestEnvironment>('the test environment');
  beforeAll(async () => {
    t.set(await testEnvironment());
  });
  afterAll(async () => {
    await t.current?.cleanup();
  });
  return t.value;
}

export interface UseKairosOptions {
  /** The roles started in this process; all three by default. */
  roles?: Role[];
  /** Variables on top of the test environment's (see TestEnvironment.env). */
  env?: Record<string, string>;
}

/**
 * Gives the enclosing describe block a test environment and Kairos started in this process on it,
 * with a REST client; Kairos is closed and the environment dropped after its tests. Hooks the block
 * registers after this call run after Kairos is up, and their afterAll before it closes.
 */
export function useKairos(options: UseKairosOptions = {}): { t: TestEnvironment; kairos: StartedKairos; client: ApiClient } {
  const t = useTestEnvironment();
  const kairos = late<StartedKairos>('Kairos');
  const client = late<ApiClient>('the API client');
  beforeAll(async () => {
    kairos.set(await startInProcess(t.env(options.env), options.roles));
    client.set(api(kairos.value.url));
  });
  afterAll(async () => {
    await kairos.current?.app.close();
  });
  return { t, kairos: kairos.value, client: client.value };
}

const MODULES = { api: ApiModule, scheduler: SchedulerModule, worker: WorkerModule };

/** Starts Kairos inside the test process with the given roles. */
export async function startInProcess(env: Record<string, string>, roles: Role[] = ['api', 'scheduler', 'worker']): Promise<StartedKairos> {
  return startKairos({ name: 'test', defaultRoles: roles, modules: MODULES }, { ...env, KAIROS_ROLES: roles.join(',') });
}

export interface KairosChild extends ChildOutput {
  /** Resolves with the base URL once the process printed that it is up. */
  ready: Promise<string>;
}

/**
 * Time allowed to a test or hook that spawns Kairos processes: several children, each up from the
 * build in a few seconds, on a machine busy with other test files.
 */
export const SPAWNING_TIMEOUT_MS = 90_000;

/** Spawns a built entry point (`dist/apps/<app>/src/main.js`, see build.ts) as a child process. */
export function spawnKairos(app: Exclude<App, 'cli'>, env: Record<string, string>): KairosChild {
  const child = spawnProcess(process.execPath, [builtMain(app)], { env: { ...process.env, ...env } });
  // The banner's health URL, from a terminal-style table or a JSON log line.
  const ready = child
    .until(/Health\s+(http:\/\/\S+)\/health\/ready|"health":"(http:\/\/[^"]+)\/health\/ready"/, `kairos ${app} to be up`, SPAWNING_TIMEOUT_MS)
    .then((match) => (match[1] ?? match[2])!);
  ready.catch(() => undefined);
  return { ...child, ready };
}

/** Polls `probe` until it returns a value that is not undefined, or fails after `timeoutMs`. */
export async function waitFor<T>(probe: () => Promise<T | undefined>, what: string, timeoutMs = 15_000, intervalMs = 100): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Sleeps until the instant `at` (epoch ms); at once if it has passed. */
export const sleepUntil = (at: number): Promise<void> => sleep(Math.max(0, at - Date.now()));

/** The states a run does not leave by itself. */
export const ENDED_STATES = ['succeeded', 'failed', 'dead', 'cancelled'] as const;

/**
 * Polls GET /v1/runs/:id until the run is in one of `states` (a run that ended, by default) and
 * returns it as the API answered.
 */
export function runInState(client: ApiClient, id: string, states: string | readonly string[] = ENDED_STATES, timeoutMs = 30_000): Promise<any> {
  const wanted = typeof states === 'string' ? [states] : states;
  return waitFor(
    async () => {
      const run = (await client.get(`/v1/runs/${id}`)).body;
      return wanted.includes(run?.state) ? run : undefined;
    },
    `run ${id} to be ${wanted.join(' or ')}`,
    timeoutMs,
  );
}

/** Issues an API key through the CLI, as an operator does, and returns it (shown once). */
export async function issueKey(t: TestEnvironment, namespace: string, scopes: string): Promise<string> {
  const lines: string[] = [];
  const code = await runCli(['keys', 'create', '--namespace', namespace, '--scopes', scopes], { line: (l) => lines.push(l) }, { DATABASE_URL: t.databaseUrl });
  if (code !== 0) throw new Error(`keys create --namespace ${namespace} --scopes ${scopes} exited with ${code}: ${lines.join('\n')}`);
  return lines[0]!;
}

export type ApiClient = ReturnType<typeof api>;

/** A small JSON client for the REST API. */
export function api(baseUrl: string) {
  const call = async (method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> => {
    const response = await fetch(`${baseUrl}${path}`, {
      method,
      // State-changing requests are JSON, with or without a body, as the API requires.
      headers: method === 'GET' ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : null };
  };
  return {
    get: (path: string) => call('GET', path),
    post: (path: string, body?: unknown) => call('POST', path, body),
    put: (path: string, body?: unknown) => call('PUT', path, body),
    patch: (path: string, body?: unknown) => call('PATCH', path, body),
    delete: (path: string) => call('DELETE', path),
  };
}
