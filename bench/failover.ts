/**
 * Leader failover under load, the roles apart: an API, two schedulers and three workers from the
 * build, 40 every-second schedules and 6 every-second multi-step schedules (a -> b, c -> d), a
 * worker killed with -9 and replaced every 4 s with a burst of 500 ad-hoc runs behind it, and the
 * leading scheduler killed with -9 KAIROS_BENCH_KILLS times (10), a fresh scheduler started after
 * each. Measured per engine (KAIROS_BENCH_FAILOVER_ENGINES, `direct,cluster-pgbouncer`): the time
 * from each kill until a standby holds a live lease (p50, max), the slots recorded missed, how long
 * after the faults every run had ended (and what is still active after 60 s), and `fsck`'s findings.
 */
import { fsck } from '@kairos/ledger';
import { fmt, percentile, printTable, sandbox, sleep, startBuilt, type Child, type Sandbox } from './sandbox.js';

const KILLS = Number(process.env.KAIROS_BENCH_KILLS ?? 10);
const EVERY_SECOND = 40;
const GRAPHS = 6;
const BURST = 500;
const CHURN_MS = 4_000;
/** Between two kills: the fresh scheduler boots and the cluster settles. */
const SETTLE_MS = 3_000;
const DRAIN_LIMIT_MS = 60_000;

interface Figures {
  engine: string;
  failoverMs: number[];
  slots: number;
  missed: number;
  runs: number;
  drainedMs: number | null;
  leftActive: string[];
  findings: string[];
}

const target = { type: 'handler', name: 'noop' };

async function measure(engine: string, box: Sandbox, env: Record<string, string>): Promise<Figures> {
  const children: Child[] = [];
  const start = (app: 'api' | 'scheduler' | 'worker'): Child => {
    const child = startBuilt(`${app}-${children.length}`, app, box, env);
    children.push(child);
    return child;
  };
  try {
    const base = await start('api').ready;
    const schedulers = [start('scheduler'), start('scheduler')];
    const workers = [start('worker'), start('worker'), start('worker')];
    await Promise.all([...schedulers, ...workers].map((c) => c.ready));
    const post = async (path: string, body: unknown): Promise<unknown> => {
      const response = await fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      if (response.status >= 300) throw new Error(`bench: POST ${path} answered ${response.status}: ${await response.text()}`);
      return response.json();
    };
    const cron = '* * * * * *';
    await post('/v1/schedules/batch', { items: Array.from({ length: EVERY_SECOND }, (_, i) => ({ name: `every-second-${i}`, cron, target })) });
    const steps = [
      { name: 'a', target },
      { name: 'b', dependsOn: ['a'], target },
      { name: 'c', target },
      { name: 'd', dependsOn: ['c'], target },
    ];
    await post('/v1/schedules/batch', { items: Array.from({ length: GRAPHS }, (_, i) => ({ name: `graph-${i}`, cron, steps })) });
    await sleep(SETTLE_MS);

    let churning = true;
    const churn = (async () => {
      while (churning) {
        await sleep(CHURN_MS);
        if (!churning) break;
        workers.shift()!.process.kill('SIGKILL');
        const fresh = start('worker');
        workers.push(fresh);
        await fresh.ready;
        await post('/v1/runs/batch', { items: Array.from({ length: BURST }, () => ({ target })) });
      }
    })();

    const lease = async (): Promise<{ holder: string; alive: boolean } | undefined> =>
      (await box.db.query(`SELECT holder, expires_at > now() AS alive FROM leases WHERE name = 'scheduler'`)).rows[0];
    const failoverMs: number[] = [];
    for (let kill = 0; kill < KILLS; kill++) {
      let leader = await lease();
      while (!leader?.alive) {
        await sleep(20);
        leader = await lease();
      }
      const victim = schedulers.find((s) => s.process.pid === Number(leader!.holder.split(':')[1]));
      if (!victim) throw new Error(`bench: the leader ${leader.holder} is none of the schedulers started here`);
      victim.process.kill('SIGKILL');
      const killedAt = performance.now();
      for (;;) {
        const seen = await lease();
        if (seen?.alive && seen.holder !== leader.holder) break;
        await sleep(5);
      }
      failoverMs.push(performance.now() - killedAt);
      schedulers.splice(schedulers.indexOf(victim), 1);
      const fresh = start('scheduler');
      schedulers.push(fresh);
      await fresh.ready;
      await sleep(SETTLE_MS);
    }
    churning = false;
    await churn;

    const faultsEnded = performance.now();
    // What is still active, and why it waits: state, defer reason, when it was handed to the transport, its lease.
    const active = async (): Promise<string[]> =>
      (
        await box.db.query<{ line: string }>(
          `SELECT id || ' ' || state || coalesce(' ' || defer_reason, '') || ' available ' || available_at || ' enqueued ' || coalesce(enqueued_at::text, '-')
                  || ' lease ' || coalesce(lease_owner, '-') || ' until ' || coalesce(lease_expires_at::text, '-') AS line
             FROM runs WHERE state IN ('queued', 'running') ORDER BY available_at LIMIT 20`,
        )
      ).rows.map((r) => r.line);
    // The schedules keep firing: pause them, so every run made so far can end.
    const schedules = (await (await fetch(`${base}/v1/schedules?limit=100`)).json()) as { items: { id: string }[] };
    for (const { id } of schedules.items) await post(`/v1/schedules/${id}/pause`, {});
    let drainedMs: number | null = null;
    let leftActive = await active();
    while (performance.now() - faultsEnded < DRAIN_LIMIT_MS) {
      const { rows } = await box.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM runs WHERE state IN ('queued', 'running')`);
      if (rows[0]!.n === 0) {
        drainedMs = performance.now() - faultsEnded;
        leftActive = [];
        break;
      }
      leftActive = await active();
      await sleep(250);
    }
    const counts = (
      await box.db.query<{ slots: number; missed: number; runs: number }>(
        `SELECT (SELECT count(*)::int FROM ticks) AS slots, (SELECT count(*)::int FROM ticks WHERE outcome = 'missed') AS missed,
                (SELECT count(*)::int FROM runs WHERE parent_run_id IS NULL) AS runs`,
      )
    ).rows[0]!;
    const findings = (await fsck(box.db)).map((v) => `${v.check} ${v.subject}: ${v.detail}`);
    return { engine, failoverMs, ...counts, drainedMs, leftActive, findings };
  } finally {
    for (const child of children) child.process.kill('SIGKILL');
    await Promise.all(children.map((c) => c.exited));
  }
}

export async function failoverScenario(): Promise<void> {
  const engines = (process.env.KAIROS_BENCH_FAILOVER_ENGINES ?? 'direct,cluster-pgbouncer').split(',').map((e) => e.trim());
  for (const e of engines) if (e !== 'direct' && e !== 'cluster-pgbouncer') throw new Error(`KAIROS_BENCH_FAILOVER_ENGINES: "${e}" is neither direct nor cluster-pgbouncer`);
  const { startPgBouncer, startRedisCluster } = await import('../test/support/engines.js');
  const results: Figures[] = [];
  for (const engine of engines) {
    const box = await sandbox('failover');
    const cluster = engine === 'cluster-pgbouncer' ? await startRedisCluster() : null;
    const pooler = engine === 'cluster-pgbouncer' ? await startPgBouncer() : null;
    try {
      const env: Record<string, string> = { KAIROS_RATE_LIMIT: '0' };
      if (cluster && pooler) Object.assign(env, { REDIS_URL: '', REDIS_CLUSTER_NODES: cluster.nodesVariable, DATABASE_URL: pooler.url(box.name), DATABASE_DIRECT_URL: box.url });
      results.push(await measure(engine, box, env));
    } finally {
      await cluster?.stop();
      await pooler?.stop();
      await box.drop();
    }
  }
  process.stdout.write(`
failover: the leader killed with -9 ${KILLS} times, roles apart (an API, two schedulers, three workers), under
${EVERY_SECOND} every-second schedules, ${GRAPHS} every-second four-step graphs, a worker killed every ${CHURN_MS / 1_000} s and ${BURST} ad-hoc runs after each
`);
  const sorted = (values: number[]): number[] => [...values].sort((a, b) => a - b);
  printTable([
    ['engine', 'failover p50 ms', 'failover max ms', 'slots', 'missed', 'runs', 'all ended after s', 'fsck findings'],
    ...results.map((r) => [
      r.engine,
      fmt(percentile(sorted(r.failoverMs), 50)),
      fmt(Math.max(...r.failoverMs)),
      String(r.slots),
      String(r.missed),
      String(r.runs),
      r.drainedMs === null ? `not in ${DRAIN_LIMIT_MS / 1_000}` : fmt(r.drainedMs / 1_000, 1),
      String(r.findings.length),
    ]),
  ]);
  for (const r of results) {
    process.stdout.write(`${r.engine}: failover ${r.failoverMs.map((ms) => fmt(ms)).join(', ')} ms\n`);
    for (const line of r.leftActive) process.stdout.write(`${r.engine}: still active: ${line}\n`);
    for (const line of r.findings.slice(0, 20)) process.stdout.write(`${r.engine}: fsck: ${line}\n`);
  }
}
