/**
 * The sensors of POST /v1/apply: a source's declared sensors read (all of them before anything is
 * written), planned against the ledger by name, and applied in the apply's transaction, beside its
 * schedules. A sensor whose definition and source are unchanged is left alone; an update keeps its
 * id, cursor, pause and ticks; with prune, the source's sensors no longer declared are deleted.
 */
import { Injectable } from '@nestjs/common';
import { isObject, ValidationError, type FieldChange } from '@kairos/domain';
import { readSensorCreate, type SensorSpec } from '@kairos/domain/wire';
import { SensorRepository, type SensorRow, type Tx } from '@kairos/ledger';
import type { CallerContext } from '../auth/request-context.js';
import { locatedIn } from '../schedules/apply-refusal.js';
import { WorkersService } from '../workers/workers.service.js';
import { sensorChanges, sensorSpecOf } from './sensor.view.js';
import { SensorsService } from './sensors.service.js';

export interface SensorPlanItem {
  kind: 'sensor';
  name: string;
  action: 'create' | 'update' | 'unchanged' | 'delete';
  changes: FieldChange[];
}

/** A sensor of the declaration, read and admitted. */
export interface DeclaredSensor {
  index: number;
  name: string;
  spec: SensorSpec;
}

/** The sensors' part of an apply's plan, and what applying it writes (in the apply's transaction). */
export interface SensorPlan {
  plan: SensorPlanItem[];
  apply(): Promise<void>;
}

/** Fields a declaration may not carry: pausing is an operation, not part of the declaration. */
const NOT_DECLARABLE: Record<string, string> = {
  paused: 'pausing is an operation, not part of the declaration: POST /v1/sensors/:id/pause',
};

/** A refusal of sensor `index` (`name`), said under `sensors[i]`. */
const located = (error: unknown, index: number, name: string | undefined): unknown => locatedIn('sensors', error, index, name);

@Injectable()
export class SensorApply {
  constructor(
    private readonly sensors: SensorRepository,
    private readonly service: SensorsService,
    private readonly workers: WorkersService,
  ) {}

  /** Reads every declared sensor before anything is written: one refusal refuses the whole apply. */
  async read(items: readonly unknown[]): Promise<DeclaredSensor[]> {
    const admission = this.workers.admission();
    const seen = new Map<string, number>();
    const declared: DeclaredSensor[] = [];
    for (const [index, item] of items.entries()) {
      const name = isObject(item) && typeof item.name === 'string' ? item.name : undefined;
      try {
        if (!isObject(item)) throw new ValidationError('VALIDATION_FAILED', null, 'must be a JSON object: a body of POST /v1/sensors with its name');
        for (const [field, why] of Object.entries(NOT_DECLARABLE)) {
          if (item[field] !== undefined) throw new ValidationError('UNKNOWN_FIELD', field, why);
        }
        const { spec } = readSensorCreate(item);
        const first = seen.get(spec.name);
        if (first !== undefined) throw new ValidationError('CONFLICTING_FIELDS', 'name', `sensors[${first}] already declares "${spec.name}"; each name once`);
        await this.service.admit(spec, admission);
        seen.set(spec.name, index);
        declared.push({ index, name: spec.name, spec });
      } catch (error) {
        throw located(error, index, name);
      }
    }
    return declared;
  }

  /**
   * Plans the declared sensors of `source` against the sensors of the namespace, locking the rows
   * it reads (those it names and the source's own): create, update (with its field changes),
   * unchanged, and with `prune`, delete for the source's sensors it no longer names.
   */
  async plan(tx: Tx, caller: CallerContext, source: string, declared: readonly DeclaredSensor[], prune: boolean): Promise<SensorPlan> {
    const names = new Set(declared.map((d) => d.name));
    const rows = await this.sensors.lockForApply(tx, caller.namespaceId, source, [...names]);
    const byName = new Map(rows.map((r) => [r.name, r]));
    const plan: SensorPlanItem[] = [];
    const creates: DeclaredSensor[] = [];
    const updates: { row: SensorRow; declared: DeclaredSensor }[] = [];
    for (const d of declared) {
      const row = byName.get(d.name);
      if (!row) {
        creates.push(d);
        plan.push({ kind: 'sensor', name: d.name, action: 'create', changes: sensorChanges(null, d.spec) });
        continue;
      }
      const changes = sensorChanges(sensorSpecOf(row), d.spec);
      if (row.source !== source) changes.push({ field: 'source', from: row.source, to: source });
      if (changes.length === 0) {
        plan.push({ kind: 'sensor', name: d.name, action: 'unchanged', changes: [] });
        continue;
      }
      updates.push({ row, declared: d });
      plan.push({ kind: 'sensor', name: d.name, action: 'update', changes });
    }
    const deletes = prune ? rows.filter((r) => r.source === source && !names.has(r.name)) : [];
    for (const row of deletes) plan.push({ kind: 'sensor', name: row.name, action: 'delete', changes: [] });
    return {
      plan,
      apply: async () => {
        for (const d of creates) {
          try {
            await this.service.insert(tx, this.service.newSensor(caller, d.spec, false, source));
          } catch (error) {
            // A sensor of that name made through the API since the plan read the names.
            throw located(error, d.index, d.name);
          }
        }
        for (const u of updates) await this.service.writeDefinition(tx, u.row, u.declared.spec, source);
        for (const row of deletes) await this.service.deleteLocked(tx, row);
      },
    };
  }
}
