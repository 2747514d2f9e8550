/**
 * The calendars of POST /v1/apply: a declaration's calendars read (all of them before anything is
 * written), planned against the namespace's calendars by name, and written first in the apply's
 * transaction, so the schedules of the same declaration may name them. A calendar belongs to its
 * namespace, not to a source (the schedules of any source may exclude it): an apply creates and
 * replaces calendars but never deletes one, prune or not; DELETE /v1/calendars/:name does.
 */
import { Injectable } from '@nestjs/common';
import { definitionChanges, isObject, ValidationError, type CalendarDefinition, type FieldChange } from '@kairos/domain';
import { readCalendarCreate, type CalendarSpec } from '@kairos/domain/wire';
import { CalendarRepository, type CalendarWrite, type Tx } from '@kairos/ledger';
import type { CallerContext } from '../auth/request-context.js';
import { locatedIn } from '../schedules/apply-refusal.js';
import { CalendarsService } from './calendars.service.js';

export interface CalendarPlanItem {
  kind: 'calendar';
  name: string;
  action: 'create' | 'update' | 'unchanged';
  changes: FieldChange[];
}

/** A calendar of the declaration, read. */
export interface DeclaredCalendar {
  index: number;
  spec: CalendarSpec;
}

/** The calendars' part of an apply's plan, and what applying it writes (in the apply's transaction). */
export interface CalendarPlan {
  plan: CalendarPlanItem[];
  /** The declared calendars by name, as the declaration's schedules are planned with them. */
  declared: ReadonlyMap<string, CalendarDefinition>;
  /** Writes the created and changed calendars (re-planning the schedules naming them); whether it wrote any. */
  apply(): Promise<boolean>;
}

/** A refusal of calendar `index` (`name`), said under `calendars[i]`. */
const located = (error: unknown, index: number, name: string | undefined): unknown => locatedIn('calendars', error, index, name);

/** What a plan compares: the fields a calendar body declares but its name. */
function definition(calendar: Omit<CalendarWrite, 'name'>): Record<string, unknown> {
  return { dates: calendar.dates, holidays: calendar.holidays, description: calendar.description };
}

@Injectable()
export class CalendarApply {
  constructor(
    private readonly calendars: CalendarRepository,
    private readonly service: CalendarsService,
  ) {}

  /** Reads every declared calendar before anything is written: one refusal refuses the whole apply. */
  read(items: readonly unknown[]): DeclaredCalendar[] {
    const seen = new Map<string, number>();
    return items.map((item, index) => {
      const name = isObject(item) && typeof item.name === 'string' ? item.name : undefined;
      try {
        if (!isObject(item)) throw new ValidationError('VALIDATION_FAILED', null, 'must be a JSON object: a body of POST /v1/calendars');
        const spec = readCalendarCreate(item);
        const first = seen.get(spec.name);
        if (first !== undefined) throw new ValidationError('CONFLICTING_FIELDS', 'name', `calendars[${first}] already declares "${spec.name}"; each name once`);
        seen.set(spec.name, index);
        return { index, spec };
      } catch (error) {
        throw located(error, index, name);
      }
    });
  }

  /**
   * Plans the declared calendars against the namespace's, locking the rows it reads until the
   * apply ends: create, update (with its field changes) or unchanged.
   */
  async plan(tx: Tx, caller: CallerContext, declared: readonly DeclaredCalendar[]): Promise<CalendarPlan> {
    const stored = new Map<string, Omit<CalendarWrite, 'name'>>();
    // By name, so applies of two sources declaring the same calendars lock them in one order.
    for (const name of declared.map((d) => d.spec.name).sort()) {
      const row = await this.calendars.get(tx, caller.namespaceId, name, { lock: true });
      if (row !== null) stored.set(name, row);
    }
    const plan: CalendarPlanItem[] = [];
    const writes: CalendarSpec[] = [];
    for (const { spec } of declared) {
      const current = stored.get(spec.name);
      const changes = definitionChanges(current === undefined ? null : definition(current), definition(spec));
      const action = current === undefined ? 'create' : changes.length === 0 ? 'unchanged' : 'update';
      if (action !== 'unchanged') writes.push(spec);
      plan.push({ kind: 'calendar', name: spec.name, action, changes });
    }
    return {
      plan,
      declared: new Map(declared.map(({ spec }) => [spec.name, { name: spec.name, dates: spec.dates, holidays: spec.holidays }])),
      apply: async () => {
        for (const spec of writes) await this.service.write(tx, caller, spec);
        return writes.length > 0;
      },
    };
  }
}
