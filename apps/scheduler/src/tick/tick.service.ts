/**
 * The tick: where a schedule's due slots become runs. The leader claims due schedules with
 * FOR UPDATE SKIP LOCKED and, in one transaction that also proves it still holds the lease at its
 * epoch, writes the ticks, the runs and the advanced cursors. Only after the commit are the new
 * runs handed to Redis (the relay heals a crash in between).
 */
import { Inject, Injectable, Logger, type BeforeApplicationShutdown, type OnApplicationBootstrap, type OnModuleInit } from '@nestjs/common';
import pg from 'pg';
import type { KairosConfig } from '@kairos/config';
import { planSlots, queueOf } from '@kairos/domain';
import {
  LeaseRepository,
  OutboxRepository,
  RunRepository,
  SCHEDULES_CHANNEL,
  ScheduleRepository,
  inTransaction,
  materializeSlots,
  scheduleEvent,
  specOf,
  type CursorAdvance,
  type Db,
  type DispatchItem,
  type NewRun,
  type TickRecord,
} from '@kairos/ledger';
import { RunDispatcher } from '@kairos/queue';
import { DATABASE, KAIROS_CONFIG, KairosMetrics, SCHEDULER_LEASE } from '@kairos/runtime';
import { LeadershipService, type LeaderTask, type LeadershipTerm } from '../leadership/leadership.service.js';

export interface TickResult {
  schedules: number;
  ticks: number;
  runs: number;
  /** True when the batch was full and more schedules may be due right now. */
  more: boolean;
}

@Injectable()
export class TickService implements OnModuleInit, OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('Tick');
  private task: LeaderTask | null = null;
  private listener: pg.Client | null = null;
  private stopping = false;

  constructor(
    @Inject(DATABASE) private readonly db: Db,
    @Inject(KAIROS_CONFIG) private readonly config: KairosConfig,
    private readonly leadership: LeadershipService,
    private readonly leases: LeaseRepository,
    private readonly schedules: ScheduleRepository,
    private readonly runs: RunRepository,
    private readonly dispatcher: RunDispatcher,
    private readonly outbox: OutboxRepository,
    private readonly metrics: KairosMetrics,
  ) {}

  onModuleInit(): void {
    this.task = this.leadership.whileLeading('Tick', this.config.scheduler.tickMaxIdleMs, (term) => this.pass(term));
  }

  onApplicationBootstrap(): void {
    void this.listen();
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.stopping = true;
    await this.listener?.end().catch(() => undefined);
  }

  /** One pass: tick while batches come back full, then sleep until the next slot is due (bounded). */
  private async pass(term: LeadershipTerm): Promise<number> {
    const maxIdle = this.config.scheduler.tickMaxIdleMs;
    const result = await this.tickOnce(term);
    if (result.more) return 0;
    const dueInMs = await this.schedules.msUntilNextDue(this.db);
    if (dueInMs === null) return maxIdle;
    return Math.min(maxIdle, Math.max(0, dueInMs - this.config.scheduler.lookaheadMs));
  }

  /** Evaluates one batch of due schedules under `term`. Throws LeaseLostError if the term ended. */
  async tickOnce(term: LeadershipTerm): Promise<TickResult> {
    const { scheduler } = this.config;
    const { result, dispatch, written } = await inTransaction(this.db, async (tx) => {
      await this.leases.assertHeld(tx, SCHEDULER_LEASE, term.holder, term.epoch);
      const { rows, dbNow } = await this.schedules.claimDue(tx, scheduler.tickBatchSize, scheduler.lookaheadMs);
      const active = await this.runs.activeBySchedule(tx, rows.map((r) => r.id));
      const ticks: TickRecord[] = [];
      const runs: NewRun[] = [];
      const cancel: string[] = [];
      const cursors: CursorAdvance[] = [];
      for (const row of rows) {
        const plan = planSlots({
          scheduleId: row.id,
          spec: specOf(row),
          anchorMs: row.createdAt.getTime(),
          cursorMs: row.nextFireAt!.getTime(),
          nowMs: dbNow.getTime() + scheduler.lookaheadMs,
          catchupBoundaryMs: Math.max(
            term.acquiredAt.getTime(),
            row.createdAt.getTime(),
            row.resumedAt?.getTime() ?? 0,
          ),
        });
        const made = materializeSlots({
          row,
          slots: plan.slots,
          active: active.get(row.id) ?? [],
          tickOrigin: 'schedule',
          runOrigin: 'schedule',
          overlap: row.overlap,
          actor: `scheduler:${term.holder}`,
          remainingRuns: row.maxRuns === null ? null : Math.max(0, row.maxRuns - row.fireCount),
        });
        ticks.push(...made.ticks);
        runs.push(...made.runs);
        cancel.push(...made.cancel);
        cursors.push({
          id: row.id,
          nextFireAt: made.exhausted || plan.nextFireAtMs === null ? null : new Date(plan.nextFireAtMs),
          lastFireAt: made.lastFiredAt,
          fired: made.fired,
          completed: plan.completed || made.exhausted,
        });
        if (plan.unrecordedSlots) {
          this.logger.warn(`schedule ${row.id}: more slots fell into the gap than are recorded one by one; the outage record covers the rest`);
        }
      }
      const inserted = await this.schedules.insertTicks(tx, ticks);
      const written = ticks.filter((t) => inserted.has(`${t.scheduleId}@${t.scheduledFor.getTime()}`));
      const claimedRunIds = new Set(
        ticks.filter((t) => t.runId !== null && inserted.has(`${t.scheduleId}@${t.scheduledFor.getTime()}`)).map((t) => t.runId),
      );
      const newRuns = runs.filter((r) => claimedRunIds.has(r.id));
      await this.runs.insertRuns(tx, newRuns);
      await this.runs.requestCancel(tx, cancel, 'overlap', 'REPLACED_BY_OVERLAP', 'a newer slot replaced this run (overlap replace)');
      await this.schedules.advanceCursors(tx, cursors);
      const completed = new Set(cursors.filter((c) => c.completed).map((c) => c.id));
      await this.outbox.append(
        tx,
        rows.filter((r) => completed.has(r.id)).map((r) => scheduleEvent('schedule.completed', { ...r, status: 'completed', nextFireAt: null }, `scheduler:${term.holder}`)),
      );
      const dispatch: DispatchItem[] = newRuns.flatMap((r) => (r.availableAt ? [{ id: r.id, availableAt: r.availableAt, queue: queueOf(r.target) }] : []));
      return {
        result: { schedules: rows.length, ticks: inserted.size, runs: newRuns.length, more: rows.length === scheduler.tickBatchSize },
        dispatch,
        written,
      };
    });
    this.metrics.slotsFired(written);
    await this.dispatcher.dispatch(dispatch);
    return result;
  }

  /** LISTEN for schedule changes on a dedicated connection; reconnects after errors. */
  private async listen(): Promise<void> {
    while (!this.stopping) {
      const client = new pg.Client({ connectionString: this.config.databaseUrl });
      try {
        await client.connect();
        await client.query(`LISTEN ${SCHEDULES_CHANNEL}`);
        client.on('notification', () => this.task?.wake());
        this.listener = client;
        if (!this.stopping) {
          await new Promise<void>((resolve) => {
            client.once('error', () => resolve());
            client.once('end', () => resolve());
          });
        }
      } catch {
        // Postgres is away; the loop still polls every tickMaxIdle, so waking is only an optimisation.
      }
      this.listener = null;
      await client.end().catch(() => undefined);
      if (!this.stopping) await new Promise((r) => setTimeout(r, 1_000));
    }
  }
}
