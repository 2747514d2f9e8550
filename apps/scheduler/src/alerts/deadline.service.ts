/**
 * Deadlines (leader only): every half second, the slots of schedules with `expect.succeededWithin`
 * whose deadline has passed are judged from the ledger, once each, in slot order. A late slot
 * emits `schedule.late` (and counts in kairos_schedule_late_total); the first slot on time after a
 * lateness emits `schedule.recovered`. The events, the judged-through mark and the lateness commit
 * in one transaction, so a crash judges again from the same slot and emits nothing twice. Judged
 * from the ledger, a dead worker fleet or a stuck queue is noticed like a failing handler. Slots
 * that fell due while the schedule was paused are passed over: pausing is choosing not to run them.
 */
import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { formatDuration, formatInstant, slotOnTime } from '@kairos/domain';
import { DeadlineRepository, inTransaction, OutboxRepository, type Db, type DomainEvent } from '@kairos/ledger';
import { DATABASE, KairosMetrics } from '@kairos/process';
import { LeadershipService } from '../leadership/leadership.service.js';

/** How often deadlines are checked: a late slot is reported within about this long of its deadline. */
const CHECK_INTERVAL_MS = 500;
const SCHEDULES_PER_PASS = 200;
const SLOTS_PER_SCHEDULE = 100;

@Injectable()
export class DeadlineService implements OnModuleInit {
  private readonly repository = new DeadlineRepository();
  private readonly outbox = new OutboxRepository();

  constructor(
    @Inject(DATABASE) private readonly db: Db,
    private readonly leadership: LeadershipService,
    private readonly metrics: KairosMetrics,
  ) {}

  onModuleInit(): void {
    this.leadership.whileLeading('Deadlines', CHECK_INTERVAL_MS, () => this.check());
  }

  private async check(): Promise<number> {
    const due = await this.repository.schedulesDue(this.db, SCHEDULES_PER_PASS);
    if (due.length === 0) return CHECK_INTERVAL_MS;
    const late = await inTransaction(this.db, async (tx) => {
      const slots = await this.repository.lockDueSlots(tx, due, SLOTS_PER_SCHEDULE);
      const events: DomainEvent[] = [];
      let lateSlots = 0;
      for (const [scheduleId, ofSchedule] of groupBy(slots, (s) => s.scheduleId)) {
        let lateSince = ofSchedule[0]!.lateSince;
        for (const slot of ofSchedule) {
          if (slot.duringPause) continue;
          const deadline = new Date(slot.scheduledFor.getTime() + slot.withinMs);
          const common = { scheduleId, name: slot.name, scheduledFor: formatInstant(slot.scheduledFor), expect: { succeededWithin: formatDuration(slot.withinMs) } };
          if (slotOnTime(slot)) {
            if (lateSince !== null) {
              events.push({ namespaceId: slot.namespaceId, topic: 'schedule.recovered', aggregateId: scheduleId, payload: { ...common, lateSince: formatInstant(lateSince), runId: slot.runId } });
              lateSince = null;
            }
            continue;
          }
          lateSlots += 1;
          lateSince ??= slot.scheduledFor;
          events.push({
            namespaceId: slot.namespaceId,
            topic: 'schedule.late',
            aggregateId: scheduleId,
            payload: { ...common, deadline: formatInstant(deadline), runId: slot.runId, runState: slot.runState, tickOutcome: slot.outcome },
          });
        }
        await this.repository.markJudged(tx, scheduleId, ofSchedule.at(-1)!.scheduledFor, lateSince);
      }
      await this.outbox.append(tx, events);
      return lateSlots;
    });
    if (late > 0) this.metrics.scheduleLate(late);
    return due.length === SCHEDULES_PER_PASS ? 0 : CHECK_INTERVAL_MS;
  }
}

function groupBy<T>(items: readonly T[], key: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) groups.set(key(item), [...(groups.get(key(item)) ?? []), item]);
  return groups;
}
