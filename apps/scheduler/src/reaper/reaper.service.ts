/**
 * The reaper (leader only): a run whose lease expired past the skew allowance lost its executor.
 * It is requeued with a backoff, crash_count + 1 and epoch + 1 (so the lost executor's late
 * verdict is fenced out), or, past the crash budget, quarantined as dead with POISONED.
 */
import { Inject, Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import type { KairosConfig } from '@kairos/config';
import { RunRecoveryRepository, type Db } from '@kairos/ledger';
import { DATABASE, KAIROS_CONFIG, RunDispatcher, leaderActor } from '@kairos/process';
import { LeadershipService, type LeadershipTerm } from '../leadership/leadership.service.js';

const REAP_BATCH = 200;

@Injectable()
export class ReaperService implements OnModuleInit {
  private readonly logger = new Logger('Reaper');

  constructor(
    @Inject(DATABASE) private readonly db: Db,
    @Inject(KAIROS_CONFIG) private readonly config: KairosConfig,
    private readonly leadership: LeadershipService,
    private readonly runs: RunRecoveryRepository,
    private readonly dispatcher: RunDispatcher,
  ) {}

  onModuleInit(): void {
    this.leadership.whileLeading('Reaper', this.config.scheduler.reaperIntervalMs, (term) => this.reap(term));
  }

  private async reap(term: LeadershipTerm): Promise<number> {
    const { scheduler } = this.config;
    const { requeued, poisoned } = await this.runs.reapExpired(this.db, {
      skewMs: scheduler.reaperSkewMs,
      backoffMs: scheduler.reaperBackoffMs,
      crashBudget: scheduler.crashBudget,
      limit: REAP_BATCH,
      actor: leaderActor('reaper', term.holder),
    });
    if (requeued.length > 0) this.logger.warn(`requeued ${requeued.length} runs whose executors stopped renewing their leases`);
    if (poisoned.length > 0) this.logger.error(`quarantined ${poisoned.length} runs as POISONED: ${poisoned.join(', ')}`);
    await this.dispatcher.dispatch(requeued);
    return requeued.length + poisoned.length === REAP_BATCH ? 0 : scheduler.reaperIntervalMs;
  }
}
