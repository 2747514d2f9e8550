/**
 * Schedules as code: POST /v1/apply plans a source's declared schedules (and its sensors and
 * calendars) against the ledger and, unless it is a dry run, applies the plan in one transaction,
 * every change or none. Each schedule is found by its name; one whose spec hash and source are
 * unchanged is left alone (no version, no cursor reset). With `prune`, schedules of the same
 * source the declaration no longer names are deleted. The declared calendars are written first,
 * so the schedules may name them; calendars are never pruned. Applies of one source are
 * serialized by a transaction-scoped advisory lock; the rows a plan reads are locked, so an apply
 * of another source, or a change through the API, never interleaves with it.
 */
import { Inject, Injectable } from '@nestjs/common';
import {
  AddressPolicy,
  ValidationError,
  definitionChanges,
  formatOptionalInstant,
  isObject,
  specHash,
  type CalendarDefinition,
  type FieldChange,
  type ScheduleSpec,
} from '@kairos/domain';
import { readApplyRequest, readScheduleCreate } from '@kairos/domain/wire';
import { ScheduleRepository, inTransaction, specOf, type DatabaseClock, type Db, type ScheduleRow } from '@kairos/ledger';
import { DATABASE, DATABASE_CLOCK } from '@kairos/process';
import type { CallerContext } from '../auth/request-context.js';
import { CalendarApply } from '../calendars/calendar-apply.js';
import { assertTargetAddressAllowed } from '../targets/target-address.js';
import { WorkersService } from '../workers/workers.service.js';
import { locatedIn } from './apply-refusal.js';
import { specDefinition } from './schedule.view.js';
import { SchedulesService } from './schedules.service.js';
import { SensorApply } from '../sensors/sensor-apply.js';

export interface PlanItem {
  kind: 'schedule' | 'sensor' | 'calendar';
  name: string;
  action: 'create' | 'update' | 'unchanged' | 'delete';
  changes: FieldChange[];
}

export interface ApplyResult {
  plan: PlanItem[];
  applied: boolean;
}

/** A schedule of the declaration, read and admitted. */
interface Declared {
  index: number;
  name: string;
  spec: ScheduleSpec;
}

/** Fields a declaration may not carry: apply finds a schedule by its name, `in` would change at every apply, and pausing is an operation. */
const NOT_DECLARABLE: Record<string, string> = {
  idempotencyKey: 'apply finds each schedule by its name; drop idempotencyKey',
  in: 'a declaration says when, not how long from now (each apply would move it): use at or cron',
  paused: 'pausing is an operation, not part of the declaration: POST /v1/schedules/:id/pause',
};

/** A refusal of schedule `index` (`name`), said under `schedules[i]`. */
const located = (error: unknown, index: number, name: string | undefined): unknown => locatedIn('schedules', error, index, name);

@Injectable()
export class ApplyService {
  constructor(
    @Inject(DATABASE) private readonly db: Db,
    @Inject(DATABASE_CLOCK) private readonly clock: DatabaseClock,
    private readonly schedules: ScheduleRepository,
    private readonly service: SchedulesService,
    private readonly workers: WorkersService,
    private readonly addresses: AddressPolicy,
    private readonly sensorApply: SensorApply,
    private readonly calendarApply: CalendarApply,
  ) {}

  async apply(caller: CallerContext, body: unknown): Promise<ApplyResult> {
    const request = readApplyRequest(body);
    const nowMs = this.clock.now();
    const declaredCalendars = this.calendarApply.read(request.calendars);
    const declared = await this.read(request.schedules, nowMs);
    const declaredSensors = await this.sensorApply.read(request.sensors);
    return inTransaction(this.db, async (tx) => {
      // One apply of a source at a time; the second waits for the first to commit, then plans against what it wrote.
      await tx.query('SELECT pg_advisory_xact_lock(hashtext($1), hashtext($2))', [caller.namespaceId, request.source]);
      const calendars = await this.calendarApply.plan(tx, caller, declaredCalendars);
      const names = new Set(declared.map((d) => d.name));
      const rows = await this.schedules.lockForApply(tx, caller.namespaceId, request.source, [...names]);
      const byName = new Map(rows.map((r) => [r.name, r]));
      const calendarsOf = new Map<Declared, CalendarDefinition[]>();
      for (const d of declared) {
        try {
          calendarsOf.set(d, await this.service.calendarsOf(tx, caller.namespaceId, d.spec.calendar?.exclude ?? [], { lock: true, declared: calendars.declared }));
        } catch (error) {
          throw located(error, d.index, d.name);
        }
      }
      const plan: PlanItem[] = [...calendars.plan];
      const creates: Declared[] = [];
      const updates: { row: ScheduleRow; declared: Declared }[] = [];
      for (const d of declared) {
        const row = byName.get(d.name);
        if (!row) {
          creates.push(d);
          plan.push({ kind: 'schedule', name: d.name, action: 'create', changes: definitionChanges(null, specDefinition(d.spec)) });
          continue;
        }
        if (row.specHash === specHash(d.spec) && row.source === request.source) {
          plan.push({ kind: 'schedule', name: d.name, action: 'unchanged', changes: [] });
          continue;
        }
        const changes = definitionChanges(specDefinition(specOf(row)), specDefinition(d.spec));
        if (row.source !== request.source) changes.push({ field: 'source', from: row.source, to: request.source });
        const next = this.service.nextFireAfterChange(row, d.spec, nowMs, calendarsOf.get(d)!);
        if (next !== row.nextFireAt?.getTime() && changes.some((c) => c.field !== 'source')) {
          changes.push({ field: 'nextFireAt', from: formatOptionalInstant(row.nextFireAt), to: next === null ? null : formatOptionalInstant(new Date(next)) });
        }
        updates.push({ row, declared: d });
        plan.push({ kind: 'schedule', name: d.name, action: 'update', changes });
      }
      const deletes = request.prune ? rows.filter((r) => r.source === request.source && !names.has(r.name)) : [];
      for (const row of deletes) plan.push({ kind: 'schedule', name: row.name, action: 'delete', changes: [] });
      const sensors = await this.sensorApply.plan(tx, caller, request.source, declaredSensors, request.prune);
      plan.push(...sensors.plan);
      if (request.dryRun) return { plan, applied: false };

      // Changed calendars re-planned the schedules naming them: their updates start from the rows as re-planned.
      if (await calendars.apply()) {
        const replanned = new Map((await this.schedules.lockForApply(tx, caller.namespaceId, request.source, [...names])).map((r) => [r.id, r]));
        for (const u of updates) u.row = replanned.get(u.row.id) ?? u.row;
      }
      const fresh = creates.map((d) => {
        try {
          return this.service.newSchedule(caller, { spec: d.spec, paused: false, idempotencyKey: null }, null, nowMs, request.source, calendarsOf.get(d)!);
        } catch (error) {
          throw located(error, d.index, d.name);
        }
      });
      const created = await this.service.insertNew(tx, caller, fresh);
      for (const [i, answer] of created.entries()) {
        if ('refusal' in answer) throw located(answer.refusal, creates[i]!.index, creates[i]!.name);
      }
      for (const u of updates) await this.service.writeDefinition(tx, caller, u.row, u.declared.spec, nowMs, request.source);
      for (const row of deletes) await this.service.deleteLocked(tx, caller, row);
      await sensors.apply();
      return { plan, applied: true };
    });
  }

  /** Reads every declared schedule before anything is written: one refusal refuses the whole apply. */
  private async read(items: readonly unknown[], nowMs: number): Promise<Declared[]> {
    const admit = this.workers.admission();
    const seen = new Map<string, number>();
    const declared: Declared[] = [];
    for (const [index, item] of items.entries()) {
      const name = isObject(item) && typeof item.name === 'string' ? item.name : undefined;
      try {
        if (!isObject(item)) throw new ValidationError('VALIDATION_FAILED', null, 'must be a JSON object: a body of POST /v1/schedules with its name');
        if (item.name === undefined) throw new ValidationError('MISSING_FIELD', 'name', 'name is required: apply finds each schedule by its name');
        for (const [field, why] of Object.entries(NOT_DECLARABLE)) {
          if (item[field] !== undefined) throw new ValidationError('UNKNOWN_FIELD', field, why);
        }
        const { spec } = readScheduleCreate(item, nowMs);
        const first = seen.get(spec.name!);
        if (first !== undefined) throw new ValidationError('CONFLICTING_FIELDS', 'name', `schedules[${first}] already declares "${spec.name}"; each name once`);
        assertTargetAddressAllowed(this.addresses, spec.target);
        await admit(spec.target);
        seen.set(spec.name!, index);
        declared.push({ index, name: spec.name!, spec });
      } catch (error) {
        throw located(error, index, name);
      }
    }
    return declared;
  }
}
