/**
 * The one step that writes slots, shared by the tick, trigger and backfill: inside the caller's
 * transaction, the ticks first (a slot that already has one is left alone: another tick or an
 * earlier backfill took it), then the runs of the slots whose tick was written (a run that records
 * no tick, as a trigger's, is always written), then the cancellations the `replace` policy asked
 * for. The caller hands `dispatch` to the queue once the transaction has committed.
 * Its inverse, withdrawAhead, gives back the slots whose runs were made ahead but are not due yet.
 */
import type { DispatchItem, ReasonCode } from '@kairos/domain';
import type { Tx } from '../database.js';
import type { RunRepository } from '../runs/run.repository.js';
import type { NewRun } from '../runs/run-row.js';
import type { ScheduleRepository, TickRecord } from './schedule.repository.js';
import type { Materialized } from './slot-materializer.js';

export interface WrittenSlots {
  ticks: TickRecord[];
  runs: NewRun[];
  /** Ticks not written because their slot already had one. */
  alreadyTicked: number;
  /** The written runs that are due (not parked), to hand to the queue after the commit. */
  dispatch: DispatchItem[];
}

export class SlotWriter {
  constructor(
    private readonly schedules: ScheduleRepository,
    private readonly runs: RunRepository,
  ) {}

  /** Writes what materializeSlots decided for one or more schedules. */
  async write(tx: Tx, made: readonly Materialized[]): Promise<WrittenSlots> {
    const ticks = made.flatMap((m) => m.ticks);
    const written = new Set(await this.schedules.insertTicks(tx, ticks));
    const lost = new Set(ticks.filter((t) => t.runId !== null && !written.has(t)).map((t) => t.runId));
    const runs = made.flatMap((m) => m.runs).filter((r) => !lost.has(r.id));
    const { dispatch } = await this.runs.insertRuns(tx, runs);
    for (const { reasonText, ids } of cancellations(made)) {
      await this.runs.requestCancel(tx, ids, 'overlap', 'REPLACED_BY_OVERLAP', reasonText);
    }
    return {
      ticks: ticks.filter((t) => written.has(t)),
      runs,
      alreadyTicked: ticks.length - written.size,
      dispatch,
    };
  }

  /**
   * Cancels the schedule's runs that the tick made ahead of their slot (slot still in the future,
   * run not started) and gives their slots back: their ticks go and the cursor (and fire count,
   * which maxRuns reads) move back to the first of them, so the slot is planned again from the
   * definition and status in force when it comes due. A schedule completed by its last run made
   * ahead is active again. The caller holds the schedule's row lock. Returns the slots given back.
   */
  async withdrawAhead(tx: Tx, scheduleId: string, actor: string, reasonCode: ReasonCode, reasonText: string): Promise<number> {
    const cancelled = await this.runs.requestCancel(tx, await this.runs.aheadIdsOfSchedule(tx, scheduleId), actor, reasonCode, reasonText);
    if (cancelled.length > 0) await this.schedules.giveBackSlots(tx, scheduleId, cancelled);
    return cancelled.length;
  }
}

/** The runs to cancel, grouped by the reason text each gets. */
function cancellations(made: readonly Materialized[]): { reasonText: string; ids: string[] }[] {
  const byText = new Map<string, string[]>();
  for (const m of made) {
    if (m.cancel.length === 0) continue;
    byText.set(m.cancelReasonText, [...(byText.get(m.cancelReasonText) ?? []), ...m.cancel]);
  }
  return [...byText].map(([reasonText, ids]) => ({ reasonText, ids }));
}
