/**
 * The tick: where a schedule's due slots become runs. Every scheduler ticks the partitions it owns
 * (see PartitionService): it claims their due schedules with FOR UPDATE SKIP LOCKED and, in one
 * transaction that also proves it still holds each partition's lease at its epoch, writes the
 * ticks, the runs and the advanced cursors. Only after the commit are the new runs handed to the
 * transport; they are marked enqueued as they are inserted, so a crash in between leaves them
 * overdue without a job, which the reconciler re-creates. Slots due within the lookahead are
 * written ahead and handed over as delayed jobs, so a herd is queued before its instant; while one
 * batch is handed over, the next one is written.
 */
import { Inject, Injectable, Logger, type BeforeApplicationShutdown, type OnApplicationBootstrap, type OnModuleInit } from '@nestjs/common';
import type { KairosConfig } from '@kairos/config';
import { planWithLookahead, type DispatchItem } from '@kairos/domain';
import {
  CalendarRepository,
  OutboxRepository,
  PartitionLeaseRepository,
  RunRepository,
  SCHEDULES_CHANNEL,
  listenTo,
  type Listener,
  ScheduleRepository,
  SlotWriter,
  inTransaction,
  materializeSlots,
  scheduleEvent,
  plannedFrom,
  specOf,
  type CursorAdvance,
  type Db,
  type Materialized,
} from '@kairos/ledger';
import { DATABASE, KAIROS_CONFIG, KairosMetrics, RunDispatcher, leaderActor, type GatedTask } from '@kairos/process';
import { TICK_SPAN, inSpan } from '@kairos/telemetry';
import { PartitionService, type PartitionOwnership } from '../partitions/partition.service.js';

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
  private task: GatedTask | null = null;
  private listener: Listener | null = null;
  private stopping = false;
  /** The hand-over of the last batch written, which the next batch's writing overlaps. */
  private handingOver: Promise<void> = Promise.resolve();

  constructor(
    @Inject(DATABASE) private readonly db: Db,
    @Inject(KAIROS_CONFIG) private readonly config: KairosConfig,
    private readonly partitions: PartitionService,
    private readonly leases: PartitionLeaseRepository,
    private readonly schedules: ScheduleRepository,
    private readonly runs: RunRepository,
    private readonly slots: SlotWriter,
    private readonly dispatcher: RunDispatcher,
    private readonly outbox: OutboxRepository,
    private readonly metrics: KairosMetrics,
    private readonly calendars: CalendarRepository,
  ) {}

  onModuleInit(): void {
    this.task = this.partitions.whileOwning('Tick', this.config.scheduler.tickMaxIdleMs, (ownership) => this.pass(ownership));
  }

  onApplicationBootstrap(): void {
    // A schedule created or changed is due at once: its notification wakes the pass.
    this.listener = listenTo(this.config.databaseDirectUrl, SCHEDULES_CHANNEL, () => this.task?.wake());
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.stopping = true;
    await this.listener?.close();
    // The last batch's hand-over, before the transport closes.
    await this.handingOver;
  }

  /**
   * One pass: write a batch and hand it over while the next pass writes the next batch (one
   * hand-over in flight at a time). Once a batch comes back short and nothing more is due within
   * the lookahead, wait for the hand-over and sleep until the next slot enters the lookahead
   * (bounded). A schedule created while the batch was written is due at once: the next pass
   * writes it without waiting for the hand-over, which on a slow transport can take longer than
   * the lookahead of a slot due soon.
   */
  private async pass(ownership: PartitionOwnership): Promise<number> {
    const maxIdle = this.config.scheduler.tickMaxIdleMs;
    const lookahead = this.config.scheduler.lookaheadMs;
    const result = await this.tickOnce(ownership);
    if (result.more) return 0;
    const dueInMs = await this.schedules.msUntilNextDue(this.db, ownership.claims.map((c) => c.partition));
    // Nothing was claimable although a slot is within the lookahead: its schedule waits for an
    // active run (see claimDue), so the next chance is the slot's own instant.
    const wakeInMs = dueInMs === null ? maxIdle : Math.min(maxIdle, Math.max(0, result.schedules === 0 && dueInMs <= lookahead ? dueInMs : dueInMs - lookahead));
    if (wakeInMs === 0 && !this.stopping) return 0;
    const wakeAt = performance.now() + wakeInMs;
    await this.handingOver;
    return Math.max(0, wakeAt - performance.now());
  }

  /**
   * Evaluates one batch of due schedules of the partitions in `ownership`, of those whose leases are
   * still held at their epochs (the others are reported lost and left alone), in a `kairos.tick`
   * span that the runs it writes record as their trace. The batch's hand-over is queued behind the
   * previous one's, inside the span, so its dispatch span is the tick's child.
   */
  tickOnce(ownership: PartitionOwnership): Promise<TickResult> {
    return inSpan(TICK_SPAN, { attributes: { 'kairos.tick.partitions': ownership.claims.length } }, async (span) => {
      const { result, dispatch } = await this.tickBatch(ownership);
      span.setAttributes({ 'kairos.tick.schedules': result.schedules, 'kairos.tick.ticks': result.ticks, 'kairos.tick.runs': result.runs });
      this.handingOver = this.handingOver.then(() => this.handOver(dispatch));
      return result;
    });
  }

  private async handOver(dispatch: readonly DispatchItem[]): Promise<void> {
    // The transport refusing is left to the relay by the dispatcher; this is the ledger failing to
    // record that, which the reconciler heals (it finds the runs overdue without a job).
    await this.dispatcher.dispatch(dispatch).catch((error: Error) => this.logger.warn(`handing runs to the transport failed: ${error.message}`));
  }

  /** Writes one batch of due schedules' slots in one transaction. */
  private async tickBatch(ownership: PartitionOwnership): Promise<{ result: TickResult; dispatch: DispatchItem[] }> {
    const { scheduler } = this.config;
    const { holder } = ownership;
    const { result, dispatch, written } = await inTransaction(this.db, async (tx) => {
      // Half the TTL: a tick frozen mid-transaction gives its partitions' rows back before their leases expire.
      const held = await this.leases.assertHeld(tx, holder, ownership.claims, Math.max(500, Math.floor(scheduler.leaderTtlMs / 2)));
      if (held.length < ownership.claims.length) {
        const still = new Set(held.map((h) => h.partition));
        this.partitions.lost(ownership.claims.map((c) => c.partition).filter((p) => !still.has(p)));
      }
      // Slots of a partition that fell due before its current run of ownership began are decided by catch-up.
      const coveredSince = new Map(held.map((h) => [h.partition, h.coveredSince.getTime()]));
      const { rows, dbNow, full } = await this.schedules.claimDue(tx, [...coveredSince.keys()], scheduler.tickBatchSize, scheduler.lookaheadMs);
      const active = await this.runs.activeBySchedule(tx, rows.map((r) => r.id));
      // One statement for the batch's calendars, none when no schedule of it names one.
      const calendars = await this.calendars.definitionsFor(tx, rows);
      const made: Materialized[] = [];
      const cursors: CursorAdvance[] = [];
      for (const row of rows) {
        const activeRuns = active.get(row.id) ?? [];
        const plan = planWithLookahead(
          {
            scheduleId: row.id,
            spec: specOf(row),
            anchorMs: row.createdAt.getTime(),
            cursorMs: row.nextFireAt!.getTime(),
            nowMs: dbNow.getTime(),
            catchupBoundaryMs: Math.max(
              coveredSince.get(row.tickPartition)!,
              row.createdAt.getTime(),
              row.resumedAt?.getTime() ?? 0,
            ),
            calendars: calendars.get(row.id),
            plannedFromMs: plannedFrom(row),
          },
          { lookaheadMs: scheduler.lookaheadMs, overlapAllows: row.overlap === 'allow', hasActive: activeRuns.length > 0 },
        );
        const slots = materializeSlots({
          row,
          slots: plan.slots,
          active: activeRuns,
          tickOrigin: 'schedule',
          runOrigin: 'schedule',
          overlap: row.overlap,
          actor: leaderActor('scheduler', holder),
          remainingRuns: row.maxRuns === null ? null : Math.max(0, row.maxRuns - row.fireCount),
        });
        made.push(slots);
        cursors.push({
          id: row.id,
          nextFireAt: slots.exhausted || plan.nextFireAtMs === null ? null : new Date(plan.nextFireAtMs),
          lastFireAt: slots.lastFiredAt,
          fired: slots.fired,
          completed: plan.completed || slots.exhausted,
        });
        if (plan.unrecordedSlots) {
          this.logger.warn(`schedule ${row.id}: more slots fell into the gap than are recorded one by one; the outage record covers the rest`);
        }
      }
      const written = await this.slots.write(tx, made);
      await this.schedules.advanceCursors(tx, cursors);
      const completed = new Set(cursors.filter((c) => c.completed).map((c) => c.id));
      await this.outbox.append(
        tx,
        rows.filter((r) => completed.has(r.id)).map((r) => scheduleEvent('schedule.completed', { ...r, status: 'completed', nextFireAt: null }, leaderActor('scheduler', holder))),
      );
      return {
        result: { schedules: rows.length, ticks: written.ticks.length, runs: written.runs.length, more: full },
        dispatch: written.dispatch,
        written: written.ticks,
      };
    });
    this.metrics.slotsFired(written);
    return { result, dispatch };
  }
}
