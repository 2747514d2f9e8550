/**
 * The production engines a test runs Kairos on, each made by the test on loopback ports from
 * Debian's binaries and torn down after it: a Redis Cluster (three masters, a replica each), a Redis
 * master with a replica and three Sentinels, and PgBouncer in transaction mode in front of the test
 * Postgres; and a lone Redis set up as the cluster's nodes are, for a comparison beside them. Each
 * exposes what a test needs to break it (kill a master, restart the pooler).
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Cluster, Redis } from 'ioredis';
import { ADMIN_DATABASE_URL } from './services.js';

const run = promisify(execFile);

/** A port nothing listens on right now. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** Whether something accepts connections on the port. */
function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = connect(port, '127.0.0.1');
    probe.once('connect', () => {
      probe.destroy();
      resolve(true);
    });
    probe.once('error', () => resolve(false));
  });
}

async function waitUntil(check: () => Promise<boolean>, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** One redis-server (or redis-sentinel) the test owns. */
interface RedisProcess {
  port: number;
  process: ChildProcess;
}

function startRedisServer(dir: string, port: number, args: string[], sentinelConfig?: string): RedisProcess {
  const command = sentinelConfig ? ['redis-server', sentinelConfig, '--sentinel'] : ['redis-server'];
  const child = spawn(command[0]!, [...command.slice(1), '--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, '--logfile', join(dir, 'redis.log'),
    // Replicas sync at once (not after the 5 s Redis waits for more replicas): a replica that never synced cannot take over.
    '--repl-diskless-sync-delay', '0', ...args], {
    stdio: 'ignore',
  });
  child.on('error', () => undefined);
  return { port, process: child };
}

async function answers(port: number): Promise<boolean> {
  const redis = new Redis({ port, host: '127.0.0.1', lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0 });
  redis.on('error', () => undefined);
  try {
    await redis.connect();
    return (await redis.ping()) === 'PONG';
  } finally {
    redis.disconnect();
  }
}

/** Sends one command to the node on `port` and answers its reply. */
export async function command(port: number, ...args: string[]): Promise<unknown> {
  const redis = new Redis({ port, host: '127.0.0.1', lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0 });
  redis.on('error', () => undefined);
  try {
    await redis.connect();
    return await redis.call(args[0]!, ...args.slice(1));
  } finally {
    redis.disconnect();
  }
}

/** Whether the node is a replica whose link to its master is up (or a master). */
async function synced(port: number): Promise<boolean> {
  const info = String(await command(port, 'INFO', 'replication'));
  return info.includes('role:master') || info.includes('master_link_status:up');
}

async function stopAll(processes: RedisProcess[]): Promise<void> {
  await Promise.all(
    processes.map(
      (p) =>
        new Promise<void>((resolve) => {
          if (p.process.exitCode !== null || p.process.signalCode !== null) return resolve();
          p.process.once('exit', () => resolve());
          p.process.kill('SIGKILL');
        }),
    ),
  );
}

export interface RedisUnderTest {
  /** REDIS_URL for Kairos. */
  url: string;
  port: number;
  stop(): Promise<void>;
}

/** One Redis server of its own, with the settings of the cluster's nodes (no persistence), and no replica. */
export async function startRedis(): Promise<RedisUnderTest> {
  const dir = mkdtempSync(join(tmpdir(), 'kairos-redis-'));
  const port = await freePort();
  const server = startRedisServer(dir, port, []);
  const stop = async (): Promise<void> => {
    await stopAll([server]);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitUntil(() => answers(port), 'Redis to answer');
  } catch (error) {
    await stop();
    throw error;
  }
  return { url: `redis://127.0.0.1:${port}`, port, stop };
}

export interface RedisClusterUnderTest {
  /** REDIS_CLUSTER_NODES for Kairos: every master's address. */
  nodesVariable: string;
  /** The port of the master that owns the slot of `key` (Kairos's queues: `{prefix}`). */
  masterOf(key: string): Promise<number>;
  /** Kills a node with SIGKILL, as a crashed host would go. */
  kill(port: number): Promise<void>;
  /** A client on the cluster's seed nodes; the caller disconnects it. */
  client(): Cluster;
  /** Resolves once a node other than `port` serves `key`'s slot as master and the cluster is ok again. */
  failedOver(key: string, from: number): Promise<number>;
  stop(): Promise<void>;
}

/**
 * How long a cluster node may stay silent before the others flag it failing: two seconds, so a
 * replica is promoted within a few seconds of its master's death, while a node that a busy machine
 * holds back for a second is not flagged (which left the cluster failing on a loaded machine).
 */
const CLUSTER_NODE_TIMEOUT_MS = 2_000;

/**
 * A Redis Cluster of `masters` masters with one replica each, made with `redis-cli --cluster
 * create`.
 */
export async function startRedisCluster(masters = 3): Promise<RedisClusterUnderTest> {
  const dir = mkdtempSync(join(tmpdir(), 'kairos-cluster-'));
  const ports: number[] = [];
  for (let i = 0; i < masters * 2; i++) ports.push(await freePort());
  const nodes = ports.map((port) => {
    const nodeDir = mkdtempSync(join(dir, `${port}-`));
    return startRedisServer(nodeDir, port, ['--cluster-enabled', 'yes', '--cluster-config-file', 'nodes.conf', '--cluster-node-timeout', String(CLUSTER_NODE_TIMEOUT_MS)]);
  });
  const stop = async (): Promise<void> => {
    await stopAll(nodes);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitUntil(async () => (await Promise.all(ports.map(answers))).every(Boolean), 'the cluster nodes to answer');
    await run('redis-cli', ['--cluster', 'create', ...ports.map((p) => `127.0.0.1:${p}`), '--cluster-replicas', '1', '--cluster-yes'], { timeout: 30_000 });
    const ok = async (port: number): Promise<boolean> => String(await command(port, 'CLUSTER', 'INFO')).includes('cluster_state:ok');
    await waitUntil(async () => (await Promise.all(ports.map(ok))).every(Boolean), 'the cluster to be ok');
    await waitUntil(async () => (await Promise.all(ports.map(synced))).every(Boolean), 'the replicas to sync');
  } catch (error) {
    await stop();
    throw error;
  }
  const alive = (): number[] => nodes.filter((n) => n.process.exitCode === null && n.process.signalCode === null).map((n) => n.port);
  const masterOf = async (key: string): Promise<number> => {
    const slot = Number(await command(alive()[0]!, 'CLUSTER', 'KEYSLOT', key));
    const shards = (await command(alive()[0]!, 'CLUSTER', 'SLOTS')) as [number, number, [string, number]][];
    const shard = shards.find(([from, to]) => slot >= from && slot <= to);
    if (!shard) throw new Error(`no node serves slot ${slot}`);
    return shard[2][1];
  };
  return {
    nodesVariable: ports
      .slice(0, masters)
      .map((p) => `127.0.0.1:${p}`)
      .join(','),
    masterOf,
    client: () => new Cluster(ports.slice(0, masters).map((port) => ({ host: '127.0.0.1', port }))),
    async kill(port) {
      await stopAll(nodes.filter((n) => n.port === port));
    },
    async failedOver(key, from) {
      let master = from;
      await waitUntil(
        async () => {
          master = await masterOf(key);
          return master !== from && String(await command(master, 'CLUSTER', 'INFO')).includes('cluster_state:ok');
        },
        `a replica to take over slot of ${key} from ${from}`,
        60_000,
      );
      return master;
    },
    stop,
  };
}

export interface RedisSentinelsUnderTest {
  /** REDIS_SENTINELS for Kairos. */
  sentinelsVariable: string;
  name: string;
  /** The ports of the master and the replica as they started. */
  dataPorts: number[];
  /** The port of the current master, as the Sentinels name it. */
  master(): Promise<number>;
  kill(port: number): Promise<void>;
  /** Resolves with the new master's port once the Sentinels have promoted one other than `from`. */
  failedOver(from: number): Promise<number>;
  stop(): Promise<void>;
}

/**
 * A master, one replica and three Sentinels (quorum 2) that declare the master down after a second
 * without an answer.
 */
export async function startRedisSentinels(name = 'kairos'): Promise<RedisSentinelsUnderTest> {
  const dir = mkdtempSync(join(tmpdir(), 'kairos-sentinel-'));
  const [masterPort, replicaPort, ...sentinelPorts] = await Promise.all([1, 2, 3, 4, 5].map(() => freePort()));
  const processes: RedisProcess[] = [];
  const stop = async (): Promise<void> => {
    await stopAll(processes);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    processes.push(startRedisServer(mkdtempSync(join(dir, 'master-')), masterPort!, []));
    processes.push(startRedisServer(mkdtempSync(join(dir, 'replica-')), replicaPort!, ['--replicaof', '127.0.0.1', String(masterPort)]));
    await waitUntil(async () => (await answers(masterPort!)) && (await synced(replicaPort!)), 'the replica to sync with its master');
    for (const port of sentinelPorts) {
      const config = join(dir, `sentinel-${port}.conf`);
      writeFileSync(
        config,
        [
          `sentinel monitor ${name} 127.0.0.1 ${masterPort} 2`,
          `sentinel down-after-milliseconds ${name} 1000`,
          `sentinel failover-timeout ${name} 5000`,
          `sentinel parallel-syncs ${name} 1`,
        ].join('\n') + '\n',
      );
      processes.push(startRedisServer(mkdtempSync(join(dir, `sentinel-${port}-`)), port, [], config));
    }
    const seesReplica = async (port: number): Promise<boolean> => {
      const replicas = (await command(port, 'SENTINEL', 'REPLICAS', name)) as unknown[];
      return replicas.length === 1;
    };
    await waitUntil(async () => (await Promise.all(sentinelPorts.map(seesReplica))).every(Boolean), 'the Sentinels to see the replica');
  } catch (error) {
    await stop();
    throw error;
  }
  const master = async (): Promise<number> => {
    for (const port of sentinelPorts) {
      const address = (await command(port, 'SENTINEL', 'GET-MASTER-ADDR-BY-NAME', name).catch(() => null)) as [string, string] | null;
      if (address) return Number(address[1]);
    }
    throw new Error('no Sentinel answers');
  };
  return {
    sentinelsVariable: sentinelPorts.map((p) => `127.0.0.1:${p}`).join(','),
    name,
    dataPorts: [masterPort!, replicaPort!],
    master,
    async kill(port) {
      await stopAll(processes.filter((p) => p.port === port));
    },
    async failedOver(from) {
      let now = from;
      await waitUntil(
        async () => {
          now = await master();
          return now !== from && String(await command(now, 'ROLE')).startsWith('master');
        },
        `the Sentinels to promote a replica of ${from}`,
        30_000,
      );
      return now;
    },
    stop,
  };
}

/** Debian installs PgBouncer in /usr/sbin, which a user's PATH (postgres's under su) may lack. */
const PGBOUNCER = existsSync('/usr/sbin/pgbouncer') ? '/usr/sbin/pgbouncer' : 'pgbouncer';

export interface PgBouncerUnderTest {
  /** DATABASE_URL through the pooler, for the test database `database`. */
  url(database: string): string;
  port: number;
  /** Stops the pooler (every client connection drops) and starts it again after `downMs`. */
  restart(downMs: number): Promise<void>;
  /** The end of the pooler's log, for a failure's message. */
  logTail(): string;
  stop(): Promise<void>;
}

/**
 * PgBouncer from Debian in transaction mode (max_prepared_statements unset), in front of the test
 * Postgres, for every database on it. PgBouncer refuses to run as root: as root it runs as postgres.
 */
export async function startPgBouncer(): Promise<PgBouncerUnderTest> {
  const dir = mkdtempSync(join(tmpdir(), 'kairos-pgbouncer-'));
  const port = await freePort();
  const server = new URL(ADMIN_DATABASE_URL);
  writeFileSync(join(dir, 'users.txt'), `"${decodeURIComponent(server.username || 'postgres')}" ""\n`);
  writeFileSync(
    join(dir, 'pgbouncer.ini'),
    [
      '[databases]',
      `* = host=${server.hostname} port=${server.port || 5432}`,
      '[pgbouncer]',
      `listen_addr = 127.0.0.1`,
      `listen_port = ${port}`,
      `unix_socket_dir =`,
      'pool_mode = transaction',
      'auth_type = trust',
      `auth_file = ${join(dir, 'users.txt')}`,
      'max_client_conn = 1000',
      'default_pool_size = 40',
      // A login Postgres refuses (its connections all taken by the other files' processes for a
      // moment) is retried after a second rather than PgBouncer's 15, while clients wait on it.
      'server_login_retry = 1',
      'ignore_startup_parameters = extra_float_digits,options,application_name',
      `logfile = ${join(dir, 'pgbouncer.log')}`,
    ].join('\n') + '\n',
  );
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    const { stdout } = await run('id', ['-u', 'postgres']);
    const { stdout: group } = await run('id', ['-g', 'postgres']);
    chownSync(dir, Number(stdout), Number(group));
    for (const f of ['users.txt', 'pgbouncer.ini']) chownSync(join(dir, f), Number(stdout), Number(group));
    chmodSync(dir, 0o755);
  }
  let child: ChildProcess | null = null;
  const start = async (): Promise<void> => {
    const ini = join(dir, 'pgbouncer.ini');
    child = asRoot ? spawn('su', ['postgres', '-s', '/bin/sh', '-c', `exec ${PGBOUNCER} ${ini}`], { stdio: 'ignore' }) : spawn(PGBOUNCER, [ini], { stdio: 'ignore' });
    child.on('error', () => undefined);
    await waitUntil(() => listening(port), 'PgBouncer to listen');
  };
  const halt = async (): Promise<void> => {
    const current = child as ChildProcess | null;
    child = null;
    if (!current || current.exitCode !== null) return;
    const exited = new Promise<void>((resolve) => current.once('exit', () => resolve()));
    // su passes no signal on: stop PgBouncer itself, found by its port's config file.
    await run('pkill', ['-KILL', '-f', `pgbouncer ${join(dir, 'pgbouncer.ini')}`]).catch(() => undefined);
    current.kill('SIGKILL');
    await exited;
  };
  await start();
  return {
    port,
    url(database) {
      const url = new URL(ADMIN_DATABASE_URL);
      url.port = String(port);
      url.pathname = `/${database}`;
      return url.toString();
    },
    async restart(downMs) {
      await halt();
      await new Promise((r) => setTimeout(r, downMs));
      await start();
    },
    logTail() {
      const log = join(dir, 'pgbouncer.log');
      return existsSync(log) ? readFileSync(log, 'utf8').slice(-3_000) : '(no log)';
    },
    async stop() {
      await halt();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

