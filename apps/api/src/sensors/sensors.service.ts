/**
 * Sensor use cases: declare, change, pause, resume and delete sensors, list their ticks, and move
 * or reset their cursor. Each validates its input completely before touching the ledger and writes
 * in one transaction, under the sensor's row lock. Evaluating a sensor is the scheduler's; a
 * cursor moved here raises the cursor version, so an evaluation that started before commits nothing.
 */
import { Inject, Injectable } from '@nestjs/common';
import { AddressPolicy, isObject, newId, NotFoundError, ValidationError, type JsonObject, type Target } from '@kairos/domain';
import { readSensorCreate, readSensorCursor, readSensorPatch, readSensorReset, type SensorSpec } from '@kairos/domain/wire';
import { inTransaction, SensorRepository, type DatabaseClock, type Db, type NewSensor, type Page, type SensorRow, type Tx } from '@kairos/ledger';
import { DATABASE, DATABASE_CLOCK } from '@kairos/process';
import type { CallerContext } from '../auth/request-context.js';
import { assertTargetAddressAllowed } from '../targets/target-address.js';
import { WorkersService } from '../workers/workers.service.js';
import { sensorChanges, sensorDefinition, sensorSpecOf, sensorTickView, sensorView, type SensorTickView, type SensorView } from './sensor.view.js';

/** What admits a target: WorkersService.admission(), shared by the targets of one request. */
type Admission = (target: Target) => Promise<void>;

@Injectable()
export class SensorsService {
  constructor(
    @Inject(DATABASE) private readonly db: Db,
    @Inject(DATABASE_CLOCK) private readonly clock: DatabaseClock,
    private readonly sensors: SensorRepository,
    private readonly addresses: AddressPolicy,
    private readonly workers: WorkersService,
  ) {}

  /** POST /v1/sensors: 201 with the sensor, due at once unless created paused; a taken name is a 409 on `name`. */
  async create(caller: CallerContext, body: unknown): Promise<SensorView> {
    const { spec, paused } = readSensorCreate(body);
    await this.admit(spec);
    const row = await inTransaction(this.db, (tx) => this.insert(tx, this.newSensor(caller, spec, paused, null)));
    return sensorView(row, null);
  }

  /** The row to insert for a read definition (an apply's declared sensor carries its source). */
  newSensor(caller: CallerContext, spec: SensorSpec, paused: boolean, source: string | null): NewSensor {
    return { id: newId(this.clock.now()), namespaceId: caller.namespaceId, ...spec, paused, source };
  }

  /** Inserts a sensor in the caller's transaction and wakes the scheduler's sensor loop, which evaluates it at once. */
  async insert(tx: Tx, sensor: NewSensor): Promise<SensorRow> {
    const row = await this.sensors.create(tx, sensor);
    if (!row.paused) await this.sensors.notifyDue(tx, row.id);
    return row;
  }

  /**
   * Refuses a definition whose handlers no worker registered (UNKNOWN_HANDLER on `target.name`, or
   * `run.target.name`, `run.steps[i].target.name`) or whose run calls a forbidden address.
   */
  async admit(spec: SensorSpec, admission: Admission = this.workers.admission()): Promise<void> {
    await admission(spec.target);
    try {
      assertTargetAddressAllowed(this.addresses, spec.run.target);
      await admission(spec.run.target);
    } catch (error) {
      if (!(error instanceof ValidationError)) throw error;
      throw new ValidationError(error.code, `run.${error.field ?? 'target'}`, error.message);
    }
  }

  async get(caller: CallerContext, id: string): Promise<SensorView> {
    return this.view(this.db, await this.require(this.db, caller, id));
  }

  async list(caller: CallerContext, limit: number, cursor?: string): Promise<Page<SensorView>> {
    const page = await this.sensors.list(this.db, caller.namespaceId, limit, cursor);
    const ticks = await this.sensors.lastTicks(this.db, page.items.map((r) => r.id));
    return { items: page.items.map((r) => sensorView(r, ticks.get(r.id) ?? null)), nextCursor: page.nextCursor };
  }

  /**
   * PATCH: the given fields replace the stored ones (`run` field by field: a new target replaces
   * stored steps, new steps a stored target), read again as a whole definition; `paused` pauses or
   * resumes. The cursor is left alone. An unchanged definition writes nothing.
   */
  async patch(caller: CallerContext, id: string, body: unknown): Promise<SensorView> {
    const row = await this.require(this.db, caller, id);
    const { definition, paused } = readSensorPatch(body);
    const merged: JsonObject = { ...(sensorDefinition(sensorSpecOf(row)) as JsonObject) };
    const { run, ...rest } = definition;
    Object.assign(merged, rest);
    if (run !== undefined) {
      if (isObject(run)) {
        const stored = { ...(merged.run as JsonObject) };
        if (run.target != null) delete stored.steps;
        if (run.steps != null) delete stored.target;
        merged.run = { ...stored, ...run };
      } else {
        merged.run = run as JsonObject;
      }
    }
    const { spec } = readSensorCreate(merged);
    const changed = sensorChanges(sensorSpecOf(row), spec).length > 0;
    if (changed) await this.admit(spec);
    const updated = await inTransaction(this.db, async (tx) => {
      let current = await this.require(tx, caller, id, true);
      if (changed) current = await this.sensors.replaceDefinition(tx, id, spec, current.source);
      if (paused !== null) current = await this.pauseLocked(tx, current, paused);
      return current;
    });
    return this.view(this.db, updated);
  }

  /** Writes a declared definition over a locked sensor, which then belongs to `source`; its cursor and pause stay. */
  writeDefinition(tx: Tx, current: SensorRow, spec: SensorSpec, source: string): Promise<SensorRow> {
    return this.sensors.replaceDefinition(tx, current.id, spec, source);
  }

  async setPaused(caller: CallerContext, id: string, paused: boolean): Promise<SensorView> {
    const row = await inTransaction(this.db, async (tx) => this.pauseLocked(tx, await this.require(tx, caller, id, true), paused));
    return this.view(this.db, row);
  }

  /** Pauses or resumes a locked sensor; a resumed one is due at once. Pausing a paused sensor (or resuming an active one) changes nothing. */
  private async pauseLocked(tx: Tx, current: SensorRow, paused: boolean): Promise<SensorRow> {
    const changed = await this.sensors.setPaused(tx, current.id, paused);
    if (changed && !paused) await this.sensors.notifyDue(tx, current.id);
    return changed ?? current;
  }

  /** DELETE: the sensor, its ticks and its run keys; the runs it made stay (an evaluation under way runs to its end and commits nothing). */
  async remove(caller: CallerContext, id: string): Promise<void> {
    await inTransaction(this.db, async (tx) => this.deleteLocked(tx, await this.require(tx, caller, id, true)));
  }

  async deleteLocked(tx: Tx, row: SensorRow): Promise<void> {
    await this.sensors.delete(tx, row.id);
  }

  async ticks(caller: CallerContext, id: string, limit: number, cursor?: string): Promise<Page<SensorTickView>> {
    await this.require(this.db, caller, id);
    const page = await this.sensors.listTicks(this.db, id, limit, cursor);
    return { items: page.items.map(sensorTickView), nextCursor: page.nextCursor };
  }

  /** POST /v1/sensors/:id/cursor: sets the cursor and raises its version. */
  async setCursor(caller: CallerContext, id: string, body: unknown): Promise<SensorView> {
    const { cursor } = readSensorCursor(body);
    const row = await inTransaction(this.db, async (tx) => {
      await this.require(tx, caller, id, true);
      return this.sensors.moveCursor(tx, id, cursor);
    });
    return this.view(this.db, row);
  }

  /** POST /v1/sensors/:id/reset: sets the cursor (default null), raises its version and, with forgetRunKeys, forgets the run keys. */
  async reset(caller: CallerContext, id: string, body: unknown): Promise<SensorView> {
    const { cursor, forgetRunKeys } = readSensorReset(body);
    const row = await inTransaction(this.db, async (tx) => {
      await this.require(tx, caller, id, true);
      return this.sensors.moveCursor(tx, id, cursor, forgetRunKeys);
    });
    return this.view(this.db, row);
  }

  private async view(db: Db | Tx, row: SensorRow): Promise<SensorView> {
    return sensorView(row, (await this.sensors.lastTicks(db, [row.id])).get(row.id) ?? null);
  }

  private async require(db: Db | Tx, caller: CallerContext, id: string, lock = false): Promise<SensorRow> {
    const row = await this.sensors.get(db, caller.namespaceId, id, { lock });
    if (!row) throw new NotFoundError('sensor', id);
    return row;
  }
}
