/**
 * Calendar use cases. A calendar is created, replaced or deleted in one transaction; replacing one
 * re-plans every schedule that names it from now on, as redefining the schedule would (the runs
 * made ahead for slots still to come are withdrawn, the cursor moves to the next slot the new
 * dates allow), and a calendar that a schedule names cannot be deleted.
 */
import { Inject, Injectable } from '@nestjs/common';
import { ConflictError, NotFoundError, ValidationError, canonicalJson, dayOfIsoDate, excludedDatesBetween, formatInstant, isIsoDate, isoDateOfDay, localDayOf } from '@kairos/domain';
import { CalendarDates, readCalendarCreate, type CalendarSpec, type CalendarView as CalendarViewShape } from '@kairos/domain/wire';
import { CalendarRepository, ScheduleRepository, SlotWriter, inTransaction, specOf, type CalendarRow, type DatabaseClock, type Db, type Page, type Tx } from '@kairos/ledger';
import { DATABASE, DATABASE_CLOCK } from '@kairos/process';
import type { z } from 'zod';
import type { CallerContext } from '../auth/request-context.js';
import { SchedulesService } from '../schedules/schedules.service.js';

export type CalendarView = z.output<typeof CalendarViewShape>;
export type CalendarDatesView = z.output<typeof CalendarDates>;

/** The longest range GET /v1/calendars/{name}/dates lists. */
export const MAX_DATES_RANGE_DAYS = 3_660;

export function calendarView(row: CalendarRow): CalendarView {
  return {
    name: row.name,
    dates: row.dates,
    holidays: row.holidays,
    description: row.description,
    schedules: row.schedules,
    createdAt: formatInstant(row.createdAt),
    updatedAt: formatInstant(row.updatedAt),
  };
}

@Injectable()
export class CalendarsService {
  constructor(
    @Inject(DATABASE) private readonly db: Db,
    @Inject(DATABASE_CLOCK) private readonly clock: DatabaseClock,
    private readonly calendars: CalendarRepository,
    private readonly schedules: ScheduleRepository,
    private readonly slotWriter: SlotWriter,
    private readonly scheduleService: SchedulesService,
  ) {}

  async create(caller: CallerContext, body: unknown): Promise<CalendarView> {
    const spec = readCalendarCreate(body);
    const row = await inTransaction(this.db, async (tx) => this.calendars.create(tx, caller.namespaceId, spec));
    if (row === null) {
      throw new ConflictError('CONFLICT', 'name', `a calendar named "${spec.name}" already exists in this namespace; PUT /v1/calendars/${spec.name} to replace it`);
    }
    return calendarView(row);
  }

  /** PUT by name: creates the calendar, or replaces it and re-plans the schedules naming it. */
  async upsert(caller: CallerContext, name: string, body: unknown): Promise<{ view: CalendarView; created: boolean }> {
    const spec = readCalendarCreate(body, name);
    return inTransaction(this.db, async (tx) => this.write(tx, caller, spec));
  }

  /** Creates or replaces `spec` in the caller's transaction (an apply's calendars go through here too). */
  async write(tx: Tx, caller: CallerContext, spec: CalendarSpec): Promise<{ view: CalendarView; created: boolean }> {
    let existing = await this.calendars.get(tx, caller.namespaceId, spec.name, { lock: true });
    if (existing === null) {
      const created = await this.calendars.create(tx, caller.namespaceId, spec);
      if (created !== null) return { view: calendarView(created), created: true };
      // A concurrent create of the same name committed first: this one replaces it, as a PUT after it would.
      existing = await this.calendars.get(tx, caller.namespaceId, spec.name, { lock: true });
      if (existing === null) throw new Error(`calendar "${spec.name}" could be neither created nor read`);
    }
    if (sameCalendar(existing, spec)) return { view: calendarView(existing), created: false };
    const row = await this.calendars.replace(tx, caller.namespaceId, spec);
    await this.replan(tx, caller, spec.name);
    return { view: calendarView(row), created: false };
  }

  /** The schedules naming calendar `name` plan their slots from now with what it says now. */
  private async replan(tx: Tx, caller: CallerContext, name: string): Promise<void> {
    const rows = await this.calendars.lockNamingSchedules(tx, caller.namespaceId, name);
    if (rows.length === 0) return;
    const calendars = await this.calendars.definitionsFor(tx, rows);
    const nowMs = this.clock.now();
    for (const row of rows) {
      // A completed schedule has nothing left to plan, whatever its dates.
      if (row.status === 'completed') continue;
      const withdrawn = await this.slotWriter.withdrawAhead(tx, row.id, caller.actor, 'SCHEDULE_CHANGED', `calendar "${name}" changed before the slot came due`);
      const next = this.scheduleService.nextFireAfterChange(row, specOf(row), nowMs, calendars.get(row.id) ?? [], withdrawn);
      await this.schedules.replanCursor(tx, row.id, next === null ? null : new Date(next));
    }
    await this.schedules.notifyChanged(tx);
  }

  async get(caller: CallerContext, name: string): Promise<CalendarView> {
    return calendarView(await this.require(this.db, caller, name));
  }

  async list(caller: CallerContext, limit: number, cursor?: string): Promise<Page<CalendarView>> {
    const page = await this.calendars.list(this.db, caller.namespaceId, limit, cursor);
    return { items: page.items.map(calendarView), nextCursor: page.nextCursor };
  }

  /** Deletes a calendar no schedule names (409 CALENDAR_IN_USE otherwise). */
  async remove(caller: CallerContext, name: string): Promise<void> {
    await inTransaction(this.db, async (tx) => {
      await this.require(tx, caller, name, true);
      const naming = await this.calendars.namingSchedules(tx, caller.namespaceId, name, 6);
      if (naming.length > 0) {
        const listed = naming.slice(0, 5).map((n) => `"${n}"`).join(', ');
        throw new ConflictError(
          'CALENDAR_IN_USE',
          'name',
          `calendar "${name}" is excluded by schedule${naming.length > 1 ? 's' : ''} ${listed}${naming.length > 5 ? ' and more' : ''}; remove it from their calendar.exclude first`,
        );
      }
      await this.calendars.remove(tx, caller.namespaceId, name);
    });
  }

  /**
   * The dates a calendar excludes between `from` and `to` (YYYY-MM-DD, inclusive), holidays
   * computed for each year of the range. Default: from today (UTC) for twelve months.
   */
  async dates(caller: CallerContext, name: string, from: string | undefined, to: string | undefined): Promise<CalendarDatesView> {
    for (const [field, value] of [['from', from], ['to', to]] as const) {
      if (value !== undefined && !isIsoDate(value)) throw new ValidationError('INVALID_DATE', field, `${field} must be a real date written YYYY-MM-DD, e.g. "2027-01-01"`);
    }
    const start = from ?? isoDateOfDay(localDayOf('UTC', this.clock.now()));
    const end = to ?? isoDateOfDay(dayOfIsoDate(start) + 364);
    if (end < start) throw new ValidationError('VALIDATION_FAILED', 'to', 'to must not be earlier than from');
    if (dayOfIsoDate(end) - dayOfIsoDate(start) > MAX_DATES_RANGE_DAYS) {
      throw new ValidationError('VALIDATION_FAILED', 'to', `a range of at most ${MAX_DATES_RANGE_DAYS} days is listed at once; ask for a shorter one`);
    }
    const row = await this.require(this.db, caller, name);
    return { from: start, to: end, items: excludedDatesBetween(row, start, end) };
  }

  private async require(db: Db | Tx, caller: CallerContext, name: string, lock = false): Promise<CalendarRow> {
    const row = await this.calendars.get(db, caller.namespaceId, name, { lock });
    if (!row) throw new NotFoundError('calendar', name);
    return row;
  }
}

/** Whether a stored calendar already says what `spec` says. */
function sameCalendar(row: CalendarRow, spec: CalendarSpec): boolean {
  return row.description === spec.description && canonicalJson(row.dates) === canonicalJson(spec.dates) && canonicalJson(row.holidays) === canonicalJson(spec.holidays);
}
