/**
 * Schedule use cases. Each validates its input completely before touching the ledger, writes in
 * one transaction, and wakes the leader's tick (NOTIFY on commit) when a schedule may be due sooner.
 */
import { Inject, Injectable } from '@nestjs/common';
import {
  AddressPolicy,
  checkKeysResolve,
  ConflictError,
  requestHash,
  NotFoundError,
  ValidationError,
  excludedDatesOf,
  isClockSpec,
  firesInRange,
  firstFireAt,
  isObject,
  isoDateOfDay,
  localDayOf,
  newId,
  nextSlotWithinBounds,
  readScheduleName,
  recurrenceOf,
  specHash,
  definitionChanges,
  type CalendarDefinition,
  type JsonObject,
  type JsonValue,
  type ScheduleCreateRequest,
  type ScheduleSpec,
  type SlotDecision,
  formatInstant,
  queueOf,
} from '@kairos/domain';
import {
  CalendarRepository,
  OutboxRepository,
  RunRepository,
  ScheduleRepository,
  SlotWriter,
  scheduleEvent,
  inTransaction,
  materializeSlots,
  plannedFrom,
  specOf,
  type DatabaseClock,
  type Db,
  type Page,
  type Queryable,
  type ScheduleFilter,
  type ScheduleRow,
  type TickRow,
  type Tx,
  type NewSchedule,
} from '@kairos/ledger';
import { BackfillRequest, ScheduleVersionPage, readBatchItems, readScheduleCreate, readSchedulePatch, readWire, ScheduleTrigger, type BackfillResult as BackfillResultShape, type Preview } from '@kairos/domain/wire';
import { DATABASE, DATABASE_CLOCK, RunDispatcher } from '@kairos/process';
import type { z } from 'zod';
import type { CallerContext } from '../auth/request-context.js';
import { runViews, type RunView } from '../runs/run.view.js';
import { scheduleView, specDefinition, type ScheduleView } from './schedule.view.js';
import { refusalIn, settledValue, type Settled } from '../requests/batch.js';
import { assertTargetAddressAllowed } from '../targets/target-address.js';
import { WorkersService } from '../workers/workers.service.js';

/** The most slots one backfill request may cover. */
export const MAX_BACKFILL_SLOTS = 1_000;


export type BackfillResult = z.output<typeof BackfillResultShape>;
export type PreviewView = z.output<typeof Preview>;

@Injectable()
export class SchedulesService {
  constructor(
    @Inject(DATABASE) private readonly db: Db,
    @Inject(DATABASE_CLOCK) private readonly clock: DatabaseClock,
    private readonly schedules: ScheduleRepository,
    private readonly runs: RunRepository,
    private readonly slotWriter: SlotWriter,
    private readonly dispatcher: RunDispatcher,
    private readonly outbox: OutboxRepository,
    private readonly addresses: AddressPolicy,
    private readonly workers: WorkersService,
    private readonly calendars: CalendarRepository,
  ) {}

  /**
   * The calendars a spec's calendar rule names (`spec.calendar.exclude`), each checked to exist in
   * the namespace (UNKNOWN_CALENDAR naming its place in the list) and held until the transaction
   * ends with `lock`. Those in `declared` (an apply's own calendars, not written yet in a dry run)
   * are taken from there.
   */
  async calendarsOf(
    db: Queryable,
    namespaceId: string,
    names: readonly string[],
    opts: { lock?: boolean; declared?: ReadonlyMap<string, CalendarDefinition> } = {},
  ): Promise<CalendarDefinition[]> {
    const declared = opts.declared ?? new Map<string, CalendarDefinition>();
    const found = [...(await this.calendars.byNames(db, namespaceId, names.filter((name) => !declared.has(name)), opts))];
    for (const [i, name] of names.entries()) {
      const own = declared.get(name);
      if (own !== undefined) found.push(own);
      else if (!found.some((c) => c.name === name)) {
        throw new ValidationError('UNKNOWN_CALENDAR', `calendar.exclude[${i}]`, `no calendar named "${name}" in this namespace; create it with POST /v1/calendars or drop it from calendar.exclude`);
      }
    }
    return found;
  }

  async create(caller: CallerContext, body: unknown): Promise<ScheduleView> {
    return settledValue((await this.createMany(caller, [body]))[0]!);
  }

  /**
   * POST /v1/schedules/batch: each item read and created as POST /v1/schedules would, all in one
   * transaction. A refused item (its input, its target, a taken name, a conflicting reuse of its
   * idempotency key) answers with that refusal and stores nothing; the others go on.
   */
  async createBatch(caller: CallerContext, body: unknown): Promise<Settled<ScheduleView>[]> {
    return this.createMany(caller, readBatchItems(body));
  }

  /**
   * Creates the schedules of a request's bodies in one pass: each body is read and checked as the
   * single route reads it, while what its items share is done once for the request (each queue's
   * registered handlers read, a handler admitted, the read instant as a Date, no calendar lookup for
   * a schedule that names none).
   */
  private async createMany(caller: CallerContext, bodies: readonly unknown[]): Promise<Settled<ScheduleView>[]> {
    const admit = this.workers.admission();
    const admitted = new Set<string>();
    const nowMs = this.clock.now();
    const createdAt = new Date(nowMs);
    const answers: Settled<ScheduleView>[] = [];
    const accepted: { index: number; schedule: NewSchedule }[] = [];
    for (let index = 0; index < bodies.length; index++) {
      const body = bodies[index];
      try {
        const request = readScheduleCreate(body, nowMs);
        const { target } = request.spec;
        assertTargetAddressAllowed(this.addresses, target);
        // A handler already admitted for this request is known to its queue.
        const handler = target.type === 'handler' ? `${queueOf(target)}\u0000${target.name}` : null;
        if (handler === null || !admitted.has(handler)) {
          await admit(target);
          if (handler !== null) admitted.add(handler);
        }
        const names = request.spec.calendar?.exclude ?? [];
        const calendars = names.length === 0 ? [] : await this.calendarsOf(this.db, caller.namespaceId, names);
        const bodyHash = request.idempotencyKey === null ? null : requestHash(body);
        accepted.push({ index, schedule: this.newSchedule(caller, request, bodyHash, nowMs, null, calendars, createdAt) });
      } catch (error) {
        answers[index] = { ok: false, refusal: refusalIn(error) };
      }
    }
    if (accepted.length === 0) return answers;
    await inTransaction(this.db, async (tx) => {
      // The calendars named stay until the schedules naming them are written (a delete waits, then sees them).
      const named = [...new Set(accepted.flatMap((a) => a.schedule.spec.calendar?.exclude ?? []))];
      await this.calendarsOf(tx, caller.namespaceId, named, { lock: true });
      const created = await this.insertNew(tx, caller, accepted.map((a) => a.schedule));
      for (const [i, answer] of created.entries()) {
        answers[accepted[i]!.index] = 'refusal' in answer ? { ok: false, refusal: answer.refusal } : { ok: true, value: scheduleView(answer.row, answer.deduped) };
      }
    });
    return answers;
  }

  /**
   * The row to insert for a read create request (or an apply's declared schedule, with its source).
   * `createdAt` is `nowMs` as a Date, which the schedules of one request may share.
   */
  newSchedule(
    caller: CallerContext,
    request: ScheduleCreateRequest,
    bodyHash: string | null,
    nowMs: number,
    source: string | null,
    calendars: readonly CalendarDefinition[],
    createdAt = new Date(nowMs),
  ): NewSchedule {
    const id = newId(nowMs);
    // A schedule started by events has no slots: no next fire.
    const first = isClockSpec(request.spec) ? firstFireAt(request.spec, nowMs, calendars) : null;
    if (first === null && isClockSpec(request.spec)) throw noFireLeft();
    return {
      id,
      namespaceId: caller.namespaceId,
      name: request.spec.name ?? id,
      spec: request.spec,
      specHash: specHash(request.spec),
      paused: request.paused,
      idempotencyKey: request.idempotencyKey,
      requestHash: bodyHash,
      nextFireAt: first === null ? null : new Date(first),
      createdAt,
      source,
    };
  }

  /**
   * Inserts schedules in the caller's transaction: each created one gets its created event and its
   * first version; the answers are createMany's (refused or deduped ones change nothing).
   */
  async insertNew(tx: Tx, caller: CallerContext, schedules: readonly NewSchedule[]): Promise<Awaited<ReturnType<ScheduleRepository['createMany']>>> {
    const created = await this.schedules.createMany(tx, schedules);
    const fresh = created.flatMap((answer) => ('row' in answer && !answer.deduped ? [answer.row] : []));
    if (fresh.length > 0) {
      await this.schedules.notifyChanged(tx);
      await this.outbox.append(tx, fresh.map((row) => scheduleEvent('schedule.created', row, caller.actor)));
      // A first version changes nothing: its definition is all there is to say.
      await this.schedules.recordVersions(
        tx,
        fresh.map((row) => ({ scheduleId: row.id, specHash: row.specHash, definition: specDefinition(specOf(row)), source: row.source, actor: caller.actor, changes: [] })),
      );
    }
    return created;
  }

  /**
   * PUT by name: creates the schedule, or replaces its definition when the spec differs. An
   * unchanged spec is a no-op (same spec_hash). Returns whether it was created.
   */
  async upsertByName(caller: CallerContext, name: string, body: unknown): Promise<{ view: ScheduleView; created: boolean }> {
    // The path's name is checked before it reaches a query: Postgres refuses some text (NUL) with an error.
    readScheduleName({ name });
    if (!isObject(body)) throw new ValidationError('VALIDATION_FAILED', null, 'the body must be a JSON object');
    const obj = body;
    if (obj.name !== undefined && obj.name !== name) {
      throw new ValidationError('CONFLICTING_FIELDS', 'name', `the body names "${String(obj.name)}" but the path names "${name}"; drop one`);
    }
    const existing = await this.schedules.getByName(this.db, caller.namespaceId, name);
    if (!existing) {
      const view = await this.create(caller, { ...obj, name });
      if (view.deduped && view.name !== name) {
        throw new ConflictError('CONFLICT', 'idempotencyKey', `idempotencyKey already names schedule "${view.name}"; drop it or use a new one`);
      }
      return { view, created: !view.deduped };
    }
    const nowMs = this.clock.now();
    const { spec } = readScheduleCreate({ ...obj, name }, nowMs);
    if (specHash(spec) === existing.specHash) return { view: scheduleView(existing), created: false };
    return { view: await this.replace(caller, existing.id, spec, nowMs), created: false };
  }

  /** PATCH: the given fields replace the stored ones (a new cron/every/at/in replaces the old timing). */
  async patch(caller: CallerContext, id: string, body: unknown): Promise<ScheduleView> {
    const row = await this.require(this.db, caller, id);
    const { definition, paused } = readSchedulePatch(body);
    const merged: JsonObject = { ...wireDefinition(row) };
    if (['cron', 'every', 'at', 'in', 'on'].some((k) => definition[k] !== undefined)) {
      for (const k of ['cron', 'every', 'at', 'on']) delete merged[k];
    }
    // A new target replaces the stored steps, and new steps the stored target.
    if (definition['target'] != null) delete merged['steps'];
    if (definition['steps'] != null) delete merged['target'];
    Object.assign(merged, definition);
    const nowMs = this.clock.now();
    const { spec } = readScheduleCreate(merged, nowMs);
    let view = specHash(spec) === row.specHash ? scheduleView(row) : await this.replace(caller, id, spec, nowMs);
    if (paused === true && view.status === 'active') view = await this.setPaused(caller, id, true);
    if (paused === false && view.status === 'paused') view = await this.setPaused(caller, id, false);
    return view;
  }

  /** Writes a changed definition; its target must still name a handler a worker has registered. */
  private async replace(caller: CallerContext, id: string, spec: ScheduleSpec, nowMs: number): Promise<ScheduleView> {
    assertTargetAddressAllowed(this.addresses, spec.target);
    await this.workers.admit(spec.target);
    const row = await inTransaction(this.db, async (tx) => {
      const current = await this.require(tx, caller, id, true);
      return this.writeDefinition(tx, caller, current, spec, nowMs, null);
    });
    return scheduleView(row);
  }

  /**
   * When a schedule redefined as `spec` at `nowMs` fires next (from now, under its bounds; null when
   * it is done), `withdrawn` of its fired slots having been given back.
   */
  nextFireAfterChange(current: ScheduleRow, spec: ScheduleSpec, nowMs: number, calendars: readonly CalendarDefinition[], withdrawn = 0): number | null {
    if (!isClockSpec(spec)) return null;
    const exhausted = spec.maxRuns !== null && current.fireCount - withdrawn >= spec.maxRuns;
    // The cursor restarts from now: so does the planning (see recurrenceOf).
    return exhausted ? null : nextSlotWithinBounds(spec, recurrenceOf(spec, current.createdAt.getTime(), calendars, nowMs), nowMs);
  }

  /**
   * Replaces the definition of `current` (locked by the caller's transaction) with `spec`: the runs
   * made ahead from the old definition are withdrawn, the cursor restarts from now, and the change
   * is recorded as the schedule's next version. `appliedBy` is the apply source that declared it,
   * which the schedule then belongs to; null for a change through the API, which keeps its source.
   */
  async writeDefinition(tx: Tx, caller: CallerContext, current: ScheduleRow, spec: ScheduleSpec, nowMs: number, appliedBy: string | null): Promise<ScheduleRow> {
    const source = appliedBy ?? current.source;
    const calendars = await this.calendarsOf(tx, current.namespaceId, spec.calendar?.exclude ?? [], { lock: true });
    // Runs made ahead for slots still to come were planned from the old definition.
    const withdrawn = await this.slotWriter.withdrawAhead(tx, current.id, caller.actor, 'SCHEDULE_CHANGED', 'the schedule was redefined before the slot came due');
    const next = this.nextFireAfterChange(current, spec, nowMs, calendars, withdrawn);
    const hash = specHash(spec);
    const updated = await this.schedules.replaceDefinition(tx, current.id, spec.name ?? current.name, spec, hash, next === null ? null : new Date(next), source);
    await this.schedules.notifyChanged(tx);
    await this.outbox.append(tx, [scheduleEvent('schedule.updated', updated, caller.actor)]);
    const definition = specDefinition(spec);
    const changes = definitionChanges(specDefinition(specOf(current)), definition);
    if (source !== current.source) changes.push({ field: 'source', from: current.source, to: source });
    await this.schedules.recordVersions(tx, [{ scheduleId: current.id, specHash: hash, definition, source: appliedBy, actor: caller.actor, changes }]);
    return updated;
  }

  async get(caller: CallerContext, id: string): Promise<ScheduleView> {
    return scheduleView(await this.require(this.db, caller, id));
  }

  async list(caller: CallerContext, filter: ScheduleFilter, limit: number, cursor?: string): Promise<Page<ScheduleView>> {
    const page = await this.schedules.list(this.db, caller.namespaceId, filter, limit, cursor);
    return { items: page.items.map((r) => scheduleView(r)), nextCursor: page.nextCursor };
  }

  async setPaused(caller: CallerContext, id: string, paused: boolean): Promise<ScheduleView> {
    const row = await inTransaction(this.db, async (tx) => {
      const current = await this.require(tx, caller, id, true);
      // A pause also takes back the runs made ahead for slots still to come (which may have
      // completed the schedule early); a resume plans them again if they are still to come.
      const withdrawn =
        paused && current.status !== 'paused' ? await this.slotWriter.withdrawAhead(tx, id, caller.actor, 'SCHEDULE_PAUSED', 'the schedule was paused before the slot came due') : 0;
      if (current.status === 'completed' && withdrawn === 0) {
        throw new ConflictError('INVALID_STATE', null, `schedule ${id} has completed; it has nothing left to ${paused ? 'pause' : 'resume'}`);
      }
      const changed = await this.schedules.setPaused(tx, id, paused);
      if (changed) {
        if (!paused) await this.schedules.notifyChanged(tx);
        await this.outbox.append(tx, [scheduleEvent(paused ? 'schedule.paused' : 'schedule.resumed', changed, caller.actor)]);
      }
      return changed ?? current;
    });
    return scheduleView(row);
  }

  /** Soft-deletes the schedule; its queued runs are cancelled, running ones finish. */
  async remove(caller: CallerContext, id: string): Promise<void> {
    await inTransaction(this.db, async (tx) => this.deleteLocked(tx, caller, await this.require(tx, caller, id, true)));
  }

  /** Deletes `row`, locked by the caller's transaction. */
  async deleteLocked(tx: Tx, caller: CallerContext, row: ScheduleRow): Promise<void> {
    await this.runs.requestCancel(tx, await this.runs.queuedIdsOfSchedule(tx, row.id), caller.actor, 'SCHEDULE_DELETED', 'the schedule was deleted');
    await this.schedules.markDeleted(tx, row.id);
    await this.outbox.append(tx, [scheduleEvent('schedule.deleted', row, caller.actor)]);
  }

  /** Runs the schedule now, outside its slots; works while paused. Overlap may be overridden for this run. */
  async trigger(caller: CallerContext, id: string, body: unknown): Promise<RunView> {
    const { overlap, payload } = readWire(ScheduleTrigger, body ?? {});
    const nowMs = this.clock.now();
    const { runs, dispatch } = await inTransaction(this.db, async (tx) => {
      const row = await this.require(tx, caller, id, true);
      // A payload given for this run must resolve the schedule's concurrency keys as the stored one does.
      if (payload !== undefined) checkKeysResolve({ concurrency: row.concurrency, target: row.target, payload: payload as JsonValue | null });
      const made = await this.materialize(tx, row, [{ slotMs: nowMs, fire: true, availableAtMs: nowMs, catchup: false }], {
        tickOrigin: null,
        runOrigin: 'manual',
        overlap: overlap ?? row.overlap,
        actor: caller.actor,
        payload,
      });
      if (made.runs.length === 0) {
        throw new ConflictError(
          'CONFLICT',
          'overlap',
          `an earlier run of schedule ${id} is still active and its overlap policy is ${overlap ?? row.overlap}; pass "overlap": "allow" (or "buffer_one") to run anyway`,
        );
      }
      return made;
    });
    await this.dispatcher.dispatch(dispatch);
    return (await runViews(this.db, this.runs, [runs[0]!]))[0]!;
  }

  /**
   * Fires every slot of [from, to] that has no tick yet, at most MAX_BACKFILL_SLOTS. Repeating a
   * backfill over the same range creates nothing new: the tick of each slot already exists.
   * Backfilled runs queue behind each other (overlap buffer_all) unless the request says otherwise.
   */
  async backfill(caller: CallerContext, id: string, body: unknown): Promise<BackfillResult> {
    const request = readWire(BackfillRequest, body);
    const { from, to } = request;
    if (to < from) throw new ValidationError('VALIDATION_FAILED', 'to', 'to must not be earlier than from');
    if (to > this.clock.now()) {
      throw new ValidationError('VALIDATION_FAILED', 'to', 'to is in the future; backfill covers past slots, the scheduler fires the rest');
    }
    const overlap = request.overlap ?? 'buffer_all';
    const row = await this.require(this.db, caller, id);
    const spec = specOf(row);
    const calendars = await this.calendars.byNames(this.db, row.namespaceId, spec.calendar?.exclude ?? []);
    const range = firesInRange(spec, recurrenceOf(spec, row.createdAt.getTime(), calendars, -Infinity), { afterMs: from - 1, untilMs: to, limit: MAX_BACKFILL_SLOTS });
    if (range.more) {
      throw new ValidationError('VALIDATION_FAILED', 'to', `the range holds more than ${MAX_BACKFILL_SLOTS} slots; backfill it in smaller ranges`);
    }
    // A date the calendar excludes is recorded once, as the scheduler records it, and fires nothing.
    const slots: SlotDecision[] = [
      ...range.slots.map((slotMs): SlotDecision => ({ slotMs, fire: true, availableAtMs: slotMs, catchup: false })),
      ...range.excluded.map(
        (slotMs): SlotDecision => ({
          slotMs,
          fire: false,
          reason: 'CALENDAR_EXCLUDED',
          reasonText: `${isoDateOfDay(localDayOf(spec.timezone, slotMs))} (${spec.timezone}) is excluded by the schedule's calendar; no slot of that date fires`,
        }),
      ),
    ].sort((a, b) => a.slotMs - b.slotMs);
    const { runs, dispatch, alreadyTicked } = await inTransaction(this.db, async (tx) => {
      const locked = await this.require(tx, caller, id, true);
      return this.materialize(tx, locked, slots, { tickOrigin: 'backfill', runOrigin: 'backfill', overlap, actor: caller.actor });
    });
    await this.dispatcher.dispatch(dispatch);
    return { slots: range.slots.length, created: runs.length, alreadyTicked, runs: await runViews(this.db, this.runs, runs) };
  }

  /**
   * The next `count` fire instants after `after` (default now), within the schedule's bounds and
   * maxRuns, and the DST policy they were computed with.
   */
  async preview(caller: CallerContext, id: string, count: number, after: number | undefined): Promise<PreviewView> {
    const row = await this.require(this.db, caller, id);
    const spec = specOf(row);
    const remaining = spec.maxRuns === null ? count : Math.max(0, Math.min(count, spec.maxRuns - row.fireCount));
    const calendars = await this.calendars.byNames(this.db, row.namespaceId, spec.calendar?.exclude ?? []);
    const range = firesInRange(spec, recurrenceOf(spec, row.createdAt.getTime(), calendars, plannedFrom(row)), { afterMs: after ?? this.clock.now(), limit: remaining });
    return {
      fireTimes: range.slots.map((slot) => formatInstant(slot)),
      ...(spec.calendar === null ? {} : { excludedDates: excludedDatesOf(spec, range.excluded) }),
      dst: scheduleView(row).dst,
    };
  }

  async versions(caller: CallerContext, id: string, limit: number, cursor?: string): Promise<z.output<typeof ScheduleVersionPage>> {
    await this.require(this.db, caller, id);
    const page = await this.schedules.listVersions(this.db, id, limit, cursor);
    return { items: page.items.map((v) => ({ ...v, appliedAt: formatInstant(v.appliedAt) })), nextCursor: page.nextCursor };
  }

  async ticks(caller: CallerContext, id: string, limit: number, cursor?: string): Promise<Page<TickRow>> {
    await this.require(this.db, caller, id);
    return this.schedules.listTicks(this.db, id, limit, cursor);
  }

  /** Writes ticks (when `tickOrigin` is set) and runs for `slots`, deciding overlap inside the transaction. */
  private async materialize(
    tx: Tx,
    row: ScheduleRow,
    slots: SlotDecision[],
    opts: { tickOrigin: 'backfill' | null; runOrigin: 'manual' | 'backfill'; overlap: ScheduleRow['overlap']; actor: string; payload?: ScheduleRow['payload'] },
  ) {
    const active = (await this.runs.activeBySchedule(tx, [row.id])).get(row.id) ?? [];
    const source = opts.payload === undefined ? row : { ...row, payload: opts.payload };
    // Manual runs and backfills do not count against maxRuns: it bounds what the schedule fires itself.
    const made = materializeSlots({
      row: source,
      slots,
      active,
      tickOrigin: opts.tickOrigin,
      runOrigin: opts.runOrigin,
      overlap: opts.overlap,
      actor: opts.actor,
      remainingRuns: null,
    });
    const written = await this.slotWriter.write(tx, [made]);
    return { runs: await this.runs.getMany(tx, written.runs.map((r) => r.id)), dispatch: written.dispatch, alreadyTicked: written.alreadyTicked };
  }

  private async require(db: Db | Tx, caller: CallerContext, id: string, lock = false): Promise<ScheduleRow> {
    const row = await this.schedules.get(db, caller.namespaceId, id, { lock });
    if (!row) throw new NotFoundError('schedule', id);
    return row;
  }
}

/** A calendar rule that leaves a schedule nothing to fire. */
export function noFireLeft(): ValidationError {
  return new ValidationError('NO_FUTURE_FIRE', 'calendar', 'the calendars excluded leave this schedule no slot to fire after now; exclude fewer dates');
}

/** The stored definition in wire form, the base a PATCH is applied to. */
function wireDefinition(row: ScheduleRow): JsonObject {
  return specDefinition(specOf(row));
}
