/**
 * The reconciler (leader only), the repair loop that makes "Postgres is the truth" exact: every
 * queued run that Postgres says the transport holds, and that is overdue, is checked against the
 * transport and re-enqueued when it lost the job (a Redis FLUSHALL or failover without persistence,
 * an emptied Postgres transport schema). It also releases
 * runs parked behind a schedule's active run when that release was missed.
 */
import { Inject, Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import type { KairosConfig } from '@kairos/config';
import type { DispatchItem } from '@kairos/domain';
import { RunRecoveryRepository, type Db } from '@kairos/ledger';
import { DATABASE, KAIROS_CONFIG, RunDispatcher, leaderActor } from '@kairos/process';
import { LeadershipService, type LeadershipTerm } from '../leadership/leadership.service.js';

const RECONCILE_BATCH = 500;

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
  ) {}

  onModuleInit(): void {
    this.leadership.whileLeading('Reconciler', this.config.scheduler.reconcileIntervalMs, (term) => this.reconcile(term));
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
}
