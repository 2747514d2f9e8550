/**
 * Read-only views for the dashboard: GET /v1/whoami (the caller's namespace and scopes, so a page
 * hides what the key may not do), GET /v1/cluster (leader lease, live scheduler sessions, the
 * schedulers sharing the tick and who owns which partition, run counts of the caller's namespace,
 * queue depths, recent outages) and GET /v1/ticks/latest (each
 * listed schedule's newest tick).
 */
import { Controller, Get, Inject, Query } from '@nestjs/common';
import type { KairosConfig } from '@kairos/config';
import { DEFAULT_QUEUE, formatInstant, type ReasonCode, type TickOutcome } from '@kairos/domain';
import { LatestTicksQuery, readQuery, type ClusterState, type LatestTickList, type WhoAmI } from '@kairos/domain/wire';
import { LeaseRepository, type Db } from '@kairos/ledger';
import { RunsQueues } from '@kairos/queue';
import { DATABASE, KAIROS_CONFIG, QUEUE_JOB_STATES } from '@kairos/process';
import type { z } from 'zod';
import { Caller, type CallerContext } from '../auth/request-context.js';

/** The lease the leading scheduler holds. */
const LEADER_LEASE = 'scheduler';
const RECENT_OUTAGES = 10;

@Controller('v1')
export class ClusterController {
  private readonly leases = new LeaseRepository();

  constructor(
    @Inject(DATABASE) private readonly db: Db,
    private readonly queues: RunsQueues,
    @Inject(KAIROS_CONFIG) private readonly config: KairosConfig,
  ) {}

  @Get('whoami')
  whoami(@Caller() caller: CallerContext): z.output<typeof WhoAmI> {
    return { namespaceId: caller.namespaceId, actor: caller.actor, scopes: caller.scopes };
  }

  @Get('cluster')
  async cluster(@Caller() caller: CallerContext): Promise<z.output<typeof ClusterState>> {
    const [leader, sessions, members, partitions, outages, runs, queue] = await Promise.all([
      this.leases.current(this.db, LEADER_LEASE),
      this.db.query<{ holder: string; startedAt: Date; lastSeenAt: Date }>(
        `SELECT holder, started_at AS "startedAt", heartbeat_at AS "lastSeenAt" FROM scheduler_sessions
         WHERE stopped_at IS NULL ORDER BY started_at`,
      ),
      // A member is live while its heartbeat is fresher than the lease TTL (a frozen one goes stale).
      this.db.query<{ holder: string; hostname: string; pid: number; startedAt: Date; lastSeenAt: Date; live: boolean; clockOffsetMs: number | null }>(
        `SELECT holder, hostname, pid, started_at AS "startedAt", heartbeat_at AS "lastSeenAt", clock_offset_ms AS "clockOffsetMs",
                heartbeat_at > now() - $1 * interval '1 millisecond' AS live
         FROM scheduler_members ORDER BY started_at, holder`,
        [this.config.scheduler.leaderTtlMs],
      ),
      this.db.query<{ partition: number; holder: string; epoch: string; expiresAt: Date; coveredSince: Date; live: boolean }>(
        `SELECT partition, holder, epoch, expires_at AS "expiresAt", covered_since AS "coveredSince", expires_at > now() AS live
         FROM partition_leases ORDER BY partition`,
      ),
      this.db.query<{ startedAt: Date; endedAt: Date; reasonCode: string; partition: number | null }>(
        `SELECT started_at AS "startedAt", ended_at AS "endedAt", reason_code AS "reasonCode", partition
         FROM outages ORDER BY started_at DESC LIMIT ${RECENT_OUTAGES}`,
      ),
      this.db.query<{ state: string; n: number }>('SELECT state, count(*)::int AS n FROM runs WHERE namespace_id = $1 GROUP BY state ORDER BY state', [caller.namespaceId]),
      this.queues.jobCounts(DEFAULT_QUEUE, ...QUEUE_JOB_STATES),
    ]);
    return {
      leader: leader && { holder: leader.holder, epoch: Number(leader.epoch), expiresAt: formatInstant(leader.expiresAt), live: leader.alive },
      sessions: sessions.rows.map((s) => ({ holder: s.holder, startedAt: formatInstant(s.startedAt), lastSeenAt: formatInstant(s.lastSeenAt) })),
      schedulers: members.rows.map((m) => ({
        holder: m.holder,
        hostname: m.hostname,
        pid: m.pid,
        startedAt: formatInstant(m.startedAt),
        lastSeenAt: formatInstant(m.lastSeenAt),
        live: m.live,
        clockOffsetMs: m.clockOffsetMs,
        partitions: partitions.rows.filter((p) => p.live && p.holder === m.holder).map((p) => p.partition),
      })),
      partitions: partitions.rows.map((p) => ({
        partition: p.partition,
        // A partition never owned has epoch 0 and no holder.
        holder: p.holder === '' ? null : p.holder,
        epoch: Number(p.epoch),
        expiresAt: formatInstant(p.expiresAt),
        live: p.live,
        coveredSince: formatInstant(p.coveredSince),
      })),
      runs: Object.fromEntries(runs.rows.map((r) => [r.state, r.n])),
      queue: Object.fromEntries(QUEUE_JOB_STATES.map((state) => [state, queue[state] ?? 0])),
      outages: outages.rows.map((o) => ({ startedAt: formatInstant(o.startedAt), endedAt: formatInstant(o.endedAt), reasonCode: o.reasonCode, partition: o.partition })),
    };
  }

  @Get('ticks/latest')
  async latestTicks(@Caller() caller: CallerContext, @Query() params: Record<string, unknown>): Promise<z.output<typeof LatestTickList>> {
    const { scheduleIds: ids } = readQuery(LatestTicksQuery, params);
    const { rows } = await this.db.query<{ scheduleId: string; scheduledFor: Date; outcome: TickOutcome; reasonCode: ReasonCode; runId: string | null }>(
      `SELECT t.schedule_id AS "scheduleId", t.scheduled_for AS "scheduledFor", t.outcome, t.reason_code AS "reasonCode", t.run_id AS "runId"
       FROM unnest($2::uuid[]) AS s(id)
       CROSS JOIN LATERAL (SELECT * FROM ticks WHERE schedule_id = s.id AND namespace_id = $1 ORDER BY scheduled_for DESC LIMIT 1) t`,
      [caller.namespaceId, ids],
    );
    return { items: rows.map((t) => ({ scheduleId: t.scheduleId, scheduledFor: formatInstant(t.scheduledFor), outcome: t.outcome, reasonCode: t.reasonCode, runId: t.runId })) };
  }
}
