/**
 * `kairos status`: the database and transport in use, who leads, which scheduler owns which
 * partitions, how far each live process's host clock is from the database's, recent sessions and
 * outages, and what the ledger holds.
 */
import { describeDatabase, type KairosConfig } from '@kairos/config';
import { describeShards, describeTransport, openTransport } from '@kairos/queue';
import { LeaseRepository, ledgerSize, type Db } from '@kairos/ledger';
import { formatDuration } from '@kairos/domain';
import { iso, table, type Output } from '../output.js';

function formatBytes(bytes: number): string {
  const units = ['B', 'kB', 'MB', 'GB', 'TB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${unit === 0 ? value : value.toFixed(1)} ${units[unit]}`;
}

/** A host clock against the database's, as `kairos status` prints it: `+0.002 s`, `-30.1 s (fix NTP)`. */
export function clockOffset(offsetMs: number | null): string {
  if (offsetMs === null) return 'not measured';
  const hostAheadMs = -offsetMs;
  const text = `${hostAheadMs >= 0 ? '+' : '-'}${(Math.abs(hostAheadMs) / 1_000).toFixed(Math.abs(hostAheadMs) < 1_000 ? 3 : 1)} s`;
  return Math.abs(offsetMs) > 1_000 ? `${text} (fix NTP)` : text;
}

/**
 * How many shards each runs queue has, as a process started now would pick them (a Cluster's
 * masters are counted): `null` when Redis does not answer.
 */
async function queueShards(config: KairosConfig): Promise<{ count: number; text: string; warning?: string } | null> {
  if (config.transport.kind !== 'redis') return { count: 1, text: '1 shard per queue (the Postgres transport is not sharded)' };
  const transport = await openTransport(config.transport, config.queuePrefix);
  try {
    await transport.ping();
    return { count: transport.shards, text: describeShards(transport), ...(transport.shardsWarning && { warning: transport.shardsWarning }) };
  } catch {
    return null;
  } finally {
    await transport.close();
  }
}

export async function status(db: Db, config: KairosConfig, out: Output, json: boolean): Promise<number> {
  const leader = await new LeaseRepository().current(db, 'scheduler');
  const sessions = (
    await db.query(
      `SELECT holder, started_at, heartbeat_at, stopped_at, stop_reason FROM scheduler_sessions ORDER BY started_at DESC LIMIT 5`,
    )
  ).rows;
  const outages = (await db.query(`SELECT started_at, ended_at, reason_code, partition FROM outages ORDER BY started_at DESC LIMIT 5`)).rows;
  // Each member with the partitions whose live leases it holds; a frozen member's heartbeat goes stale.
  const schedulers = (
    await db.query(
      `SELECT m.holder, m.started_at, m.heartbeat_at, m.heartbeat_at > now() - $1 * interval '1 millisecond' AS live, m.clock_offset_ms,
              coalesce(array_agg(l.partition ORDER BY l.partition) FILTER (WHERE l.partition IS NOT NULL), '{}') AS partitions
       FROM scheduler_members m LEFT JOIN partition_leases l ON l.holder = m.holder AND l.expires_at > now()
       GROUP BY m.holder ORDER BY m.started_at, m.holder`,
      [config.scheduler.leaderTtlMs],
    )
  ).rows;
  // Live workers: the consumers whose clocks producers correct delays for.
  const workers = (
    await db.query(`SELECT id, queue, last_seen_at, clock_offset_ms FROM workers WHERE kairos_worker_live(last_seen_at, stopped_at) ORDER BY queue, id`)
  ).rows;
  const unowned = (await db.query(`SELECT array_agg(partition ORDER BY partition) AS p FROM partition_leases WHERE expires_at <= now()`)).rows[0].p ?? [];
  const schedules = (await db.query(`SELECT status, count(*)::int AS n FROM schedules GROUP BY status ORDER BY status`)).rows;
  const runs = (await db.query(`SELECT state, count(*)::int AS n FROM runs WHERE parent_run_id IS NULL GROUP BY state ORDER BY state`)).rows;
  const ledger = await ledgerSize(db);
  const database = describeDatabase(config);
  const transport = describeTransport(config.transport);
  const shards = await queueShards(config);
  if (json) {
    out.line(JSON.stringify({ database, transport, shards, leader, schedulers, workers, unownedPartitions: unowned, sessions, outages, schedules, runs, ledger }, null, 2));
    return 0;
  }
  out.line(`database   ${database}`);
  out.line(`transport  ${transport}`);
  out.line(`shards     ${shards === null ? 'unknown: Redis did not answer' : shards.text}`);
  if (shards?.warning) out.line(`           ${shards.warning}`);
  out.line(
    leader?.alive
      ? `leader     ${leader.holder} (epoch ${leader.epoch}, lease until ${iso(leader.expiresAt)})`
      : `leader     none: no scheduler holds the lease (TTL ${config.scheduler.leaderTtlMs} ms)`,
  );
  out.line(`schedules  ${schedules.map((r) => `${r.status} ${r.n}`).join(', ') || 'none'}`);
  out.line(`runs       ${runs.map((r) => `${r.state} ${r.n}`).join(', ') || 'none'}`);
  out.line(`\nschedulers (tick partitions${unowned.length > 0 ? `; without an owner: ${unowned.join(', ')}` : ''})`);
  out.line(
    schedulers.length === 0
      ? 'none running'
      : table(
          ['holder', 'started', 'last heartbeat', 'clock', 'partitions'],
          schedulers.map((m) => [m.holder, iso(m.started_at), iso(m.heartbeat_at) + (m.live ? '' : ' (stale)'), clockOffset(m.clock_offset_ms), m.partitions.join(',') || '-']),
        ),
  );
  out.line('\nworkers (heard from in the last minute)');
  out.line(
    workers.length === 0
      ? 'none'
      : table(['id', 'queue', 'last heartbeat', 'clock'], workers.map((w) => [w.id, w.queue, iso(w.last_seen_at), clockOffset(w.clock_offset_ms)])),
  );
  out.line('\nsessions');
  out.line(table(['holder', 'started', 'last heartbeat', 'stopped', 'how'], sessions.map((s) => [s.holder, iso(s.started_at), iso(s.heartbeat_at), iso(s.stopped_at), s.stop_reason ?? 'running'])));
  out.line(`\nledger     ${formatBytes(ledger.databaseBytes)} on disk; rows are Postgres' estimates (retention ${formatDuration(config.retention.retentionMs)})`);
  out.line(table(['table', 'rows', 'size'], ledger.tables.map((t) => [t.table, String(t.rows), formatBytes(t.bytes)])));
  out.line('\noutages');
  out.line(outages.length === 0 ? 'none recorded' : table(['from', 'to', 'reason', 'partition'], outages.map((o) => [iso(o.started_at), iso(o.ended_at), o.reason_code, String(o.partition ?? 'all')])));
  return 0;
}
