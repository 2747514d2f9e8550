/**
 * Event use cases. An event is stored with everything it starts in one transaction: the runs of the
 * schedules whose `on` it matches (each decided against its schedule's overlap policy, as a trigger
 * is, and its flow control: see event-fan-out.ts) and the durable functions waiting for it. After a crash either all of it exists or none does;
 * the runs go to the transport once the transaction has committed.
 */
import { Inject, Injectable } from '@nestjs/common';
import { MatchIndex, newId, NotFoundError, type DispatchItem, type JsonValue } from '@kairos/domain';
import { EventCreate, readBatchItems, readWire, type EventRequest } from '@kairos/domain/wire';
import {
  EventRepository,
  FlowControlRepository,
  RunRepository,
  ScheduleRepository,
  SlotWriter,
  eventBody,
  inTransaction,
  retryTransient,
  type Db,
  type EventRow,
  type EventSkip,
  type NewEvent,
  type Page,
  type ScheduleRow,
  type Tx,
} from '@kairos/ledger';
import { DATABASE, RunDispatcher } from '@kairos/process';
import type { CallerContext } from '../auth/request-context.js';
import { refusalOf, settledValue, type Settled } from '../requests/batch.js';
import { EventFanOut, flowHorizonMs, markPeriods } from './event-fan-out.js';
import { eventView, type EventViewShape } from './event.view.js';

@Injectable()
export class EventsService {
  constructor(
    @Inject(DATABASE) private readonly db: Db,
    private readonly events: EventRepository,
    private readonly schedules: ScheduleRepository,
    private readonly runs: RunRepository,
    private readonly slotWriter: SlotWriter,
    private readonly dispatcher: RunDispatcher,
    private readonly flow: FlowControlRepository,
  ) {}

  /** POST /v1/events: stored and fanned out (202), or the first event of its id (200, deduped). */
  async send(caller: CallerContext, body: unknown): Promise<EventViewShape> {
    return settledValue((await this.sendMany(caller, [body]))[0]!);
  }

  /** POST /v1/events/batch: each item read and sent as POST /v1/events would, all in one transaction; a refused item stores nothing. */
  async sendBatch(caller: CallerContext, body: unknown): Promise<Settled<EventViewShape>[]> {
    return this.sendMany(caller, readBatchItems(body));
  }

  async get(caller: CallerContext, id: string): Promise<EventViewShape> {
    const row = await this.events.get(this.db, caller.namespaceId, id);
    if (!row) throw new NotFoundError('event', id);
    return eventView(row, false);
  }

  async list(caller: CallerContext, name: string | undefined, limit: number, cursor?: string): Promise<Page<EventViewShape>> {
    const page = await this.events.list(this.db, caller.namespaceId, name, limit, cursor);
    return { items: page.items.map((row) => eventView(row, false)), nextCursor: page.nextCursor };
  }

  private async sendMany(caller: CallerContext, bodies: readonly unknown[]): Promise<Settled<EventViewShape>[]> {
    const answers: Settled<EventViewShape>[] = [];
    const accepted: { index: number; event: NewEvent }[] = [];
    for (const [index, body] of bodies.entries()) {
      const refused = await refusalOf(async () => {
        const read: EventRequest = (({ name, data, id }) => ({ name, data: data ?? null, id: id ?? null }))(readWire(EventCreate, body, ['name', 'data', 'id']));
        accepted.push({ index, event: { id: read.id ?? newId(), name: read.name, data: read.data as JsonValue | null } });
      });
      if (refused) answers[index] = { ok: false, refusal: refused };
    }
    if (accepted.length === 0) return answers;
    // Rolled back whole as a deadlock victim (API processes storing events of the same schedules at
    // once), the transaction is run again.
    const { written, dispatch, wake } = await retryTransient(() => inTransaction(this.db, (tx) => this.store(tx, caller, accepted.map((a) => a.event))));
    await this.dispatcher.dispatch(dispatch);
    await this.dispatcher.wake(wake);
    // An id seen before (or twice in this batch) answers the event that first used it.
    const firsts = await this.events.getMany(this.db, caller.namespaceId, accepted.filter((a) => !written.has(a.event)).map((a) => a.event.id));
    for (const { index, event } of accepted) {
      const own = written.get(event);
      answers[index] = { ok: true, value: own ? eventView(own, false) : eventView(firsts.get(event.id)!, true) };
    }
    return answers;
  }

  /**
   * The schedules each event starts, by event id, in the order of their ids: those listening to its
   * name (an index) whose match it fits (MatchIndex: no event is compared with every schedule of a
   * busy name). Only schedules whose runs are decided against what they hold (an overlap policy
   * other than allow, flow control) are locked, so events of one name do not queue behind each
   * other for the rest.
   */
  private async listenersOf(tx: Tx, namespaceId: string, events: readonly EventRow[]): Promise<Map<string, ScheduleRow[]>> {
    const listening = await this.events.listening(tx, namespaceId, [...new Set(events.map((e) => e.name))]);
    const decided = listening.filter((s) => s.overlap !== 'allow' || s.flow !== null);
    const locked = new Map((await this.events.lockListening(tx, decided.map((s) => s.id))).map((s) => [s.id, s]));
    const current = listening.flatMap((s) => (s.overlap !== 'allow' || s.flow !== null ? (locked.has(s.id) ? [locked.get(s.id)!] : []) : [s]));
    const byName = new Map<string, MatchIndex<ScheduleRow>>();
    for (const name of new Set(current.map((s) => s.onEvent!))) {
      byName.set(name, new MatchIndex(current.filter((s) => s.onEvent === name).map((s) => ({ item: s, match: s.onMatch ?? {} }))));
    }
    const byEvent = new Map<string, ScheduleRow[]>();
    for (const event of events) {
      const found = byName.get(event.name)?.matching(eventBody(event) as unknown as JsonValue) ?? [];
      if (found.length > 0) byEvent.set(event.id, found.sort((a, b) => (a.id < b.id ? -1 : 1)));
    }
    return byEvent;
  }

  /** Stores the events and what they start; answers the rows written (by the event they came from) and what to hand the transport. */
  private async store(tx: Parameters<Parameters<typeof inTransaction>[1]>[0], caller: CallerContext, events: readonly NewEvent[]) {
    const rows = await this.events.insert(tx, caller.namespaceId, events, caller.actor);
    const byId = new Map(rows.map((r) => [r.id, r]));
    const written = new Map<NewEvent, EventRow>();
    for (const event of events) {
      const row = byId.get(event.id);
      if (row) {
        written.set(event, row);
        byId.delete(event.id);
      }
    }
    const listeners = await this.listenersOf(tx, caller.namespaceId, rows);
    const schedules = [...new Map([...listeners.values()].flat().map((s) => [s.id, s])).values()];
    const controlled = schedules.filter((s) => s.flow !== null);
    const fanOut = new EventFanOut(
      rows[0]?.receivedAt.getTime() ?? 0,
      caller.actor,
      await this.runs.activeBySchedule(tx, schedules.filter((s) => s.overlap !== 'allow').map((s) => s.id)),
      await this.flow.marks(tx, controlled.map((s) => s.id), flowHorizonMs(controlled)),
      await this.flow.openWindows(tx, controlled.filter((s) => s.flow!.debounce || s.flow!.batch).map((s) => s.id)),
    );
    const outcomes = rows.map((row) => ({ id: row.id, runIds: [] as string[], skipped: [] as EventSkip[], resumed: [] as string[] }));
    for (const [i, row] of rows.entries()) {
      for (const schedule of listeners.get(row.id) ?? []) {
        const outcome = fanOut.apply(schedule, row);
        if ('skipped' in outcome) outcomes[i]!.skipped.push({ scheduleId: schedule.id, reasonCode: outcome.skipped });
        else outcomes[i]!.runIds.push(outcome.runId);
      }
    }
    const slots = await this.slotWriter.write(tx, fanOut.made);
    await this.schedules.recordFires(tx, fanOut.made.map((m) => ({ scheduleId: m.runs[0]!.scheduleId!, fired: 1 })));
    if (controlled.length > 0) {
      await this.flow.writeMarks(tx, fanOut.marks, markPeriods(controlled));
      const { open, closed } = fanOut.windowChanges();
      await this.flow.saveWindows(tx, open, closed);
      await this.flow.writeGathered(tx, fanOut.gatheredExisting(), fanOut.gatheredNew(), caller.actor);
    }
    const resumed = await this.events.resumeWaits(tx, caller.namespaceId, rows, caller.actor);
    for (const r of resumed) outcomes[rows.findIndex((row) => row.id === r.eventId)]!.resumed.push(r.runId);
    await this.events.recordOutcomes(tx, caller.namespaceId, outcomes);
    for (const [i, row] of rows.entries()) Object.assign(row, { runIds: outcomes[i]!.runIds, skipped: outcomes[i]!.skipped, resumed: outcomes[i]!.resumed });
    // Runs already handed over whose job waits delayed (a full batch, a resumed wait) are woken, not added again.
    const wake: DispatchItem[] = [...fanOut.fullExisting(), ...resumed.flatMap((r) => (r.dispatch ? [r.dispatch] : []))];
    return { written, dispatch: slots.dispatch, wake };
  }
}
