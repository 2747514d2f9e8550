/**
 * The pruner (leader only): deletes what retention lets go, one small batch per statement, resting
 * between batches as long as the batch took, so pruning uses at most about half of one connection
 * and each of its transactions is short. Once a pass finds nothing left it sleeps
 * KAIROS_RETENTION_INTERVAL.
 */
import { Inject, Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import type { KairosConfig } from '@kairos/config';
import { RetentionRepository, type Db } from '@kairos/ledger';
import { DATABASE, KAIROS_CONFIG, KairosMetrics } from '@kairos/process';
import { LeadershipService } from '../leadership/leadership.service.js';

/** The shortest rest between two batches, however quick the last one was. */
const MIN_BATCH_PAUSE_MS = 20;

interface PassTotals {
  runs: number;
  run_events: number;
  ticks: number;
  outbox: number;
  subscription_deliveries: number;
  scheduler_sessions: number;
  events: number;
}

@Injectable()
export class RetentionService implements OnModuleInit {
  private readonly logger = new Logger('Retention');
  private readonly repository = new RetentionRepository();
  /** Where the walk over runs resumes; null starts a new pass from the oldest run. */
  private cursor: string | null = null;
  private totals: PassTotals = RetentionService.zero();

  constructor(
    @Inject(DATABASE) private readonly db: Db,
    @Inject(KAIROS_CONFIG) private readonly config: KairosConfig,
    private readonly leadership: LeadershipService,
    private readonly metrics: KairosMetrics,
  ) {}

  onModuleInit(): void {
    this.leadership.whileLeading('Retention', this.config.retention.intervalMs, () => this.prune());
  }

  private static zero(): PassTotals {
    return { runs: 0, run_events: 0, ticks: 0, outbox: 0, subscription_deliveries: 0, scheduler_sessions: 0, events: 0 };
  }

  /** One batch of each kind; returns the pause before the next batch, or the interval once done. */
  private async prune(): Promise<number> {
    const policy = this.config.retention;
    const startedAt = performance.now();
    const runs = await this.repository.pruneRuns(this.db, policy, this.cursor);
    const runlessTicks = await this.repository.pruneRunlessTicks(this.db, policy);
    const sensorTicks = await this.repository.pruneSensorTicks(this.db, policy);
    const outbox = await this.repository.prunePublishedOutbox(this.db, policy);
    const deliveries = await this.repository.pruneDeliveries(this.db, policy);
    const sessions = await this.repository.pruneSessions(this.db, policy);
    const events = await this.repository.pruneEvents(this.db, policy);
    const batch: PassTotals = {
      runs: runs.runs,
      run_events: runs.events,
      ticks: runs.ticks + runlessTicks + sensorTicks,
      outbox,
      subscription_deliveries: deliveries,
      scheduler_sessions: sessions,
      events,
    };
    for (const [table, rows] of Object.entries(batch)) {
      this.totals[table as keyof PassTotals] += rows;
      this.metrics.pruned(table, rows);
    }
    this.cursor = runs.lastId;
    const more = runs.runs === policy.batchSize || [runlessTicks, sensorTicks, outbox, deliveries, sessions, events].some((n) => n >= policy.batchSize);
    if (more) return Math.max(MIN_BATCH_PAUSE_MS, performance.now() - startedAt);
    if (Object.values(this.totals).some((n) => n > 0)) {
      this.logger.log(`pruned ${Object.entries(this.totals).map(([table, n]) => `${n} ${table}`).join(', ')}`);
    }
    this.cursor = null;
    this.totals = RetentionService.zero();
    return policy.intervalMs;
  }
}
