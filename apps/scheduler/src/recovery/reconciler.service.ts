/**
 * The reconciler (leader only), the repair loop that makes "Postgres is the truth" exact: every
 * queued run that Postgres says the transport holds, and that is overdue, is checked against the
 * transport and re-enqueued when it lost the job (a Redis FLUSHALL or failover without persistence,
 * an emptied Postgres transport schema). It also releases
 * runs parked behind a schedule's active run when that release was missed, and moves the jobs left
 * on shards that the number of shards (KAIROS_QUEUE_SHARDS) no longer uses to the shards in use.
 */
import { Inject, Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import type { KairosConfig } from '@kairos/config';
import { DEFAULT_QUEUE, type DispatchItem } from '@kairos/domain';
import { RunRecoveryRepository, WorkerRepository, type Db } from '@kairos/ledger';
import { DATABASE, KAIROS_CONFIG, RunDispatcher, leaderActor } from '@kairos/process';
import { withTimeout } from '@kairos/queue';
import { LeadershipService, type LeadershipTerm } from '../leadership/leadership.service.js';

const RECONCILE_BATCH = 500;
/** How often the shards no longer in use are looked into for jobs left behind: each look costs a command per shard. */
const REHOME_INTERVAL_MS = 10_000;
/** A look into the shards that takes longer than this is given up, and tried again at the next pass. */
const REHOME_TIMEOUT_MS = 30_000;

@Injectable()
export class ReconcilerService implements OnModuleInit {
  private readonly logger = new Logger('Reconciler');
  /** Where the walk through the overdue runs stands: the last run of the previous full page. */
  private cursor: DispatchItem | null = null;

  constructor(
    @Inject(DATABASE) private readonly db: Db,
    @Inject(KAIROS_CONFIG) private readonly config: KairosConfig,
    private readonly leadership: LeadershipService,
    private readonly runs: RunRecoveryRepository,
    private readonly dispatcher: RunDispatcher,
    private readonly workers: WorkerRepository,
  ) {}

  onModuleInit(): void {
    this.leadership.whileLeading('Reconciler', this.config.scheduler.reconcileIntervalMs, (term) => this.reconcile(term));
    // A loop of its own: a slow or stuck look into the shards never holds up the repairs above.
    this.leadership.whileLeading('Shard re-homing', REHOME_INTERVAL_MS, () => withTimeout(this.rehome(), REHOME_TIMEOUT_MS, `no answer within ${REHOME_TIMEOUT_MS} ms`));
  }

  /**
   * One page of overdue runs per pass, walking the whole overdue set across passes: a backlog the
   * workers have not reached yet is overdue too, and its jobs are live. The walk only hurries
   * (next page at once) while pages keep turning up lost jobs, as after a transport wipe.
   */
  private async reconcile(term: LeadershipTerm): Promise<number> {
    const overdue = await this.runs.listOverdueEnqueued(this.db, this.config.scheduler.reconcileGraceMs, RECONCILE_BATCH, this.cursor);
    this.cursor = overdue.length === RECONCILE_BATCH ? overdue[overdue.length - 1]! : null;
    const repaired = await this.dispatcher.redeliver(overdue, (ids) => this.runs.markEnqueued(this.db, ids));
    if (repaired.length > 0) this.logger.warn(`re-enqueued ${repaired.length} runs the transport had lost`);

    for (const scheduleId of await this.runs.listStrandedParkedSchedules(this.db, RECONCILE_BATCH)) {
      await this.dispatcher.dispatch(await this.runs.releaseParked(this.db, scheduleId, leaderActor('reconciler', term.holder)));
    }
    return this.cursor !== null && repaired.length > 0 ? 0 : this.config.scheduler.reconcileIntervalMs;
  }

  /** Moves up to a batch of jobs off the shards no longer in use; the next pass at once while there are more, else after REHOME_INTERVAL_MS. */
  private async rehome(): Promise<number> {
    let moved = 0;
    for (const queue of new Set([DEFAULT_QUEUE, ...(await this.workers.queues(this.db))])) {
      moved += await this.dispatcher.rehome(queue, RECONCILE_BATCH - moved);
      if (moved >= RECONCILE_BATCH) break;
    }
    if (moved > 0) this.logger.warn(`moved ${moved} jobs off shards no longer in use to the shards their runs pick now`);
    return moved >= RECONCILE_BATCH ? 0 : REHOME_INTERVAL_MS;
  }
}
