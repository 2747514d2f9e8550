/** The production engines: durable throughput on a Redis Cluster and through PgBouncer, beside one Redis and Postgres itself. */
import { ROUNDS, RUNS, kairosThroughput } from './kairos.js';
import { fmt, median, printTable, type Sandbox } from './sandbox.js';

/**
 * The production engines (KAIROS_BENCH_ENGINES, `cluster,pgbouncer`): Kairos's durable throughput on
 * a Redis Cluster (three masters, a replica each) and with DATABASE_URL on PgBouncer in transaction
 * mode (DATABASE_DIRECT_URL on Postgres), each beside Kairos on one Redis and Postgres itself, in
 * alternating rounds, the engines made on loopback as the engine tests make them.
 */
export async function enginesScenario(): Promise<void> {
  const { startPgBouncer, startRedisCluster } = await import('../test/support/engines.js');
  const engines = (process.env.KAIROS_BENCH_ENGINES ?? 'cluster,pgbouncer').split(',').map((e) => e.trim());
  for (const e of engines) if (e !== 'cluster' && e !== 'pgbouncer') throw new Error(`KAIROS_BENCH_ENGINES: "${e}" is neither cluster nor pgbouncer`);
  const cluster = engines.includes('cluster') ? await startRedisCluster() : null;
  const pooler = engines.includes('pgbouncer') ? await startPgBouncer() : null;
  const on: Record<string, (box: Sandbox) => Record<string, string>> = {
    cluster: () => ({ REDIS_URL: '', REDIS_CLUSTER_NODES: cluster!.nodesVariable }),
    pgbouncer: (box) => ({ DATABASE_URL: pooler!.url(box.name), DATABASE_DIRECT_URL: box.url }),
  };
  const direct: number[] = [];
  const measured = new Map(engines.map((e) => [e, [] as number[]]));
  try {
    for (let round = 0; round < ROUNDS; round++) {
      direct.push((await kairosThroughput('redis')).perSecond);
      for (const e of engines) measured.get(e)!.push((await kairosThroughput('redis', false, on[e])).perSecond);
    }
  } finally {
    await cluster?.stop();
    await pooler?.stop();
  }
  const label: Record<string, string> = { cluster: 'Redis Cluster', pgbouncer: 'PgBouncer (transaction mode)' };
  process.stdout.write(`
production engines: durable runs per second (${RUNS} noop runs), beside one Redis and Postgres itself
`);
  printTable([
    ['', 'direct', ...engines.flatMap((e) => [label[e]!, `${e} / direct`])],
    ['Kairos (scheduler + built-in worker)', fmt(median(direct)), ...engines.flatMap((e) => [fmt(median(measured.get(e)!)), fmt(median(measured.get(e)!.map((v, i) => v / direct[i]!)), 2)])],
  ]);
  process.stdout.write(`rounds: direct ${direct.map((v) => fmt(v)).join(', ')}; ${engines.map((e) => `${e} ${measured.get(e)!.map((v) => fmt(v)).join(', ')}`).join('; ')}
`);
}
