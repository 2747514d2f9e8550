/**
 * The resources every role shares, opened once before Nest starts (so failures print one clear
 * line) and closed last on shutdown: the config, the Postgres pool and its clock, the
 * repositories, the transport, the runs queues and their dispatcher.
 */
import { Global, Inject, Module, type DynamicModule, type OnApplicationShutdown } from '@nestjs/common';
import type { KairosConfig } from '@kairos/config';
import {
  ApiKeyRepository,
  DatabaseClock,
  LeaseRepository,
  NamespaceRepository,
  OutboxRepository,
  RunRecoveryRepository,
  RunRepository,
  ScheduleRepository,
  CalendarRepository,
  SessionRepository,
  SlotWriter,
  WorkerRepository,
  type Db,
  type EmbeddedPostgres,
} from '@kairos/ledger';
import { RunsQueues, type Transport } from '@kairos/queue';
import { JobDelays, RunDispatcher } from './run-dispatcher.js';
import { DATABASE, DATABASE_CLOCK, DEFAULT_NAMESPACE_ID, KAIROS_CONFIG, TRANSPORT } from './tokens.js';

export interface CoreResources {
  config: KairosConfig;
  db: Db;
  /** Started: its first reading is taken. */
  clock: DatabaseClock;
  transport: Transport;
  /** The server Kairos started itself (DATABASE_URL unset), stopped after everything else. */
  embedded: EmbeddedPostgres | null;
  defaultNamespaceId: string;
}

/** The embedded server, if any, under its own token so shutdown can stop it last. */
const EMBEDDED_POSTGRES = Symbol('EMBEDDED_POSTGRES');

@Global()
@Module({})
export class CoreModule implements OnApplicationShutdown {
  constructor(
    @Inject(DATABASE) private readonly db: Db,
    @Inject(DATABASE_CLOCK) private readonly clock: DatabaseClock,
    @Inject(TRANSPORT) private readonly transport: Transport,
    private readonly queues: RunsQueues,
    @Inject(EMBEDDED_POSTGRES) private readonly embedded: EmbeddedPostgres | null,
  ) {}

  static forRoot(resources: CoreResources): DynamicModule {
    const providers = [
      { provide: KAIROS_CONFIG, useValue: resources.config },
      { provide: DATABASE, useValue: resources.db },
      { provide: DATABASE_CLOCK, useValue: resources.clock },
      { provide: TRANSPORT, useValue: resources.transport },
      { provide: DEFAULT_NAMESPACE_ID, useValue: resources.defaultNamespaceId },
      { provide: EMBEDDED_POSTGRES, useValue: resources.embedded },
      { provide: ApiKeyRepository, useValue: new ApiKeyRepository() },
      { provide: LeaseRepository, useValue: new LeaseRepository() },
      { provide: OutboxRepository, useValue: new OutboxRepository() },
      { provide: NamespaceRepository, useValue: new NamespaceRepository() },
      { provide: RunRepository, useValue: new RunRepository() },
      { provide: RunRecoveryRepository, useValue: new RunRecoveryRepository() },
      { provide: ScheduleRepository, useValue: new ScheduleRepository() },
      { provide: CalendarRepository, useValue: new CalendarRepository() },
      { provide: SessionRepository, useValue: new SessionRepository() },
      {
        provide: SlotWriter,
        inject: [ScheduleRepository, RunRepository],
        useFactory: (schedules: ScheduleRepository, runs: RunRepository) => new SlotWriter(schedules, runs),
      },
      { provide: WorkerRepository, useValue: new WorkerRepository() },
      { provide: RunsQueues, useValue: new RunsQueues(resources.transport) },
      {
        provide: RunDispatcher,
        inject: [RunsQueues, RunRecoveryRepository, WorkerRepository],
        useFactory: (queues: RunsQueues, runs: RunRecoveryRepository, workers: WorkerRepository) => {
          const ledger = {
            consumerClockOffsets: () => workers.consumerClockOffsets(resources.db),
            markUndispatched: (ids: readonly string[]) => runs.markUndispatched(resources.db, ids),
          };
          return new RunDispatcher(queues, ledger, new JobDelays(resources.clock, ledger, resources.config.worker.startMarginMs), resources.config.worker.dispatchBatch);
        },
      },
    ];
    return { module: CoreModule, providers, exports: providers.map((p) => p.provide) };
  }

  /** Runs after every role has stopped: nothing may use these connections any more. */
  async onApplicationShutdown(): Promise<void> {
    this.clock.stop();
    await this.queues.close();
    await this.transport.close();
    await this.db.end().catch(() => undefined);
    await this.embedded?.stop();
  }
}
