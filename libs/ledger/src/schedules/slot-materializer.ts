/**
 * Turning slot decisions into rows: for each slot, a tick, and for each slot that fires, a run whose
 * overlap decision is taken against the schedule's active runs (updated as runs are added, so two
 * slots fired in one pass see each other). Pure: the caller supplies the active runs it read inside
 * the transaction that will write the result.
 */
import { decideOverlap, fairnessOver, newId, type ActiveRun, type OverlapPolicy, type SlotDecision, type TickOrigin, type RunOrigin } from '@kairos/domain';
import { declaredConcurrency, type NewRun } from '../runs/run-row.js';
import type { ScheduleRow } from './schedule-row.js';
import type { TickRecord } from './schedule.repository.js';

export interface MaterializeOptions {
  row: ScheduleRow;
  slots: readonly SlotDecision[];
  /** The schedule's queued and running runs; extended in place with the runs created here. */
  active: ActiveRun[];
  tickOrigin: TickOrigin | null;
  runOrigin: RunOrigin;
  overlap: OverlapPolicy;
  actor: string;
  /** Runs the schedule may still create (maxRuns minus its fire count); null for no limit. */
  remainingRuns: number | null;
}

export interface Materialized {
  ticks: TickRecord[];
  runs: NewRun[];
  /** Older runs the `replace` policy ends or asks to stop. */
  cancel: string[];
  /** Why they are cancelled, in the words their reason text keeps. */
  cancelReasonText: string;
  fired: number;
  lastFiredAt: Date | null;
  /** maxRuns is reached: slots after the one that used the last run were left unrecorded. */
  exhausted: boolean;
}

export function materializeSlots(opts: MaterializeOptions): Materialized {
  const { row } = opts;
  const out: Materialized = {
    ticks: [],
    runs: [],
    cancel: [],
    cancelReasonText:
      opts.runOrigin === 'schedule' ? 'a newer slot replaced this run (overlap replace)' : 'a newer run of the schedule replaced this run (overlap replace)',
    fired: 0,
    lastFiredAt: null,
    exhausted: opts.remainingRuns === 0,
  };
  for (const slot of opts.slots) {
    if (out.exhausted) break;
    const scheduledFor = new Date(slot.slotMs);
    const tick = (t: Pick<TickRecord, 'outcome' | 'reasonCode' | 'reasonText' | 'runId'>): void => {
      if (opts.tickOrigin) out.ticks.push({ scheduleId: row.id, namespaceId: row.namespaceId, scheduledFor, origin: opts.tickOrigin, ...t });
    };
    if (!slot.fire) {
      // A date the calendar excludes was passed over by choice; every other slot not fired was missed.
      tick({ outcome: slot.reason === 'CALENDAR_EXCLUDED' ? 'skipped' : 'missed', reasonCode: slot.reason, reasonText: slot.reasonText, runId: null });
      continue;
    }
    const decision = decideOverlap(opts.overlap, opts.active);
    if (decision.action === 'skip') {
      tick({ outcome: 'skipped', reasonCode: 'OVERLAP_SKIPPED', reasonText: `run ${decision.blockedBy} was still active (overlap ${opts.overlap})`, runId: null });
      continue;
    }
    for (const id of decision.cancel) {
      if (!out.cancel.includes(id)) out.cancel.push(id);
      // A queued run ends at once; a running one is only asked to stop and stays active until its
      // holder stops it, so a later slot of this pass still waits for it.
      const index = opts.active.findIndex((r) => r.id === id);
      if (index !== -1 && opts.active[index]!.state !== 'running') opts.active.splice(index, 1);
    }
    const id = newId();
    const buffered = decision.action === 'buffer';
    out.runs.push({
      id,
      namespaceId: row.namespaceId,
      scheduleId: row.id,
      origin: opts.runOrigin,
      sourceRunId: null,
      scheduledFor,
      availableAt: buffered ? null : new Date(slot.availableAtMs),
      deferReason: buffered
        ? `waiting for run ${decision.blockedBy} to end (overlap ${opts.overlap})`
        : slot.availableAtMs > slot.slotMs
          ? 'jitter'
          : null,
      exclusive: decision.action === 'buffer' || decision.exclusive,
      maxAttempts: row.retry.maxAttempts,
      target: row.target,
      payload: row.payload,
      retry: row.retry,
      timeoutMs: row.timeoutMs,
      concurrency: declaredConcurrency(row.concurrency, row.payload),
      priority: row.priority,
      // Checked to resolve over a schedule's payload; over an event's, a key that does not resolve puts the run with the runs without a key.
      fairness: fairnessOver(row.fairness, row.payload),
      idempotencyKey: null,
      actor: opts.actor,
      reasonCode: buffered ? 'OVERLAP_BUFFERED' : null,
      detail: slot.catchup ? { catchup: true } : {},
    });
    opts.active.push({ id, state: 'queued', buffered });
    tick({ outcome: 'triggered', reasonCode: buffered ? 'OVERLAP_BUFFERED' : 'TRIGGERED', reasonText: null, runId: id });
    out.fired += 1;
    out.lastFiredAt = scheduledFor;
    out.exhausted = opts.remainingRuns !== null && out.fired >= opts.remainingRuns;
  }
  return out;
}
