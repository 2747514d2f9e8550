/**
 * The resources every role shares, opened once before Nest starts (so failures print one clear
 * line) and closed last on shutdown: the config, the Postgres pool, the repositories, the Redis
 * producer connection, the runs queue and its dispatcher.
 */
import { Global, Inject, Module, type DynamicModule, type OnApplicationShutdown } from '@nestjs/common';
import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import type { KairosConfig } from '@kairos/config';
import {
  ApiKeyRepository,
  LeaseRepository,
  NamespaceRepository,
  OutboxRepository,
  RunLeaseRepository,
  RunRecoveryRepository,
  RunRepository,
  ScheduleRepository,
  SessionRepository,
  SlotWriter,
  type Db,
} from '@kairos/ledger';
import { RUNS_QUEUE, RunDispatcher, type RunsQueue } from '@kairos/queue';
import { DATABASE, DEFAULT_NAMESPACE_ID, KAIROS_CONFIG, REDIS_PRODUCER, RUNS_QUEUE_TOKEN } from './tokens.js';

export interface CoreResources {
  config: KairosConfig;
  db: Db;
  redis: Redis;
  defaultNamespaceId: string;
}

@Global()
@Module({})
export class CoreModule implements OnApplicationShutdown {
  constructor(
    @Inject(DATABASE) private readonly db: Db,
    @Inject(REDIS_PRODUCER) private readonly redis: Redis,
    @Inject(RUNS_QUEUE_TOKEN) private readonly queue: RunsQueue,
  ) {}

  static forRoot(resources: CoreResources): DynamicModule {
    const providers = [
      { provide: KAIROS_CONFIG, useValue: resources.config },
      { provide: DATABASE, useValue: resources.db },
      { provide: REDIS_PRODUCER, useValue: resources.redis },
      { provide: DEFAULT_NAMESPACE_ID, useValue: resources.defaultNamespaceId },
      { provide: ApiKeyRepository, useValue: new ApiKeyRepository() },
      { provide: LeaseRepository, useValue: new LeaseRepository() },
      { provide: OutboxRepository, useValue: new OutboxRepository() },
      { provide: NamespaceRepository, useValue: new NamespaceRepository() },
      { provide: RunRepository, useValue: new RunRepository() },
      { provide: RunLeaseRepository, useValue: new RunLeaseRepository() },
      { provide: RunRecoveryRepository, useValue: new RunRecoveryRepository() },
      { provide: ScheduleRepository, useValue: new ScheduleRepository() },
      { provide: SessionRepository, useValue: new SessionRepository() },
      {
        provide: SlotWriter,
        inject: [ScheduleRepository, RunRepository],
        useFactory: (schedules: ScheduleRepository, runs: RunRepository) => new SlotWriter(schedules, runs),
      },
      {
        provide: RUNS_QUEUE_TOKEN,
        useFactory: (): RunsQueue =>
          new Queue(RUNS_QUEUE, { connection: resources.redis, prefix: resources.config.queuePrefix }) as RunsQueue,
      },
      {
        provide: RunDispatcher,
        inject: [RUNS_QUEUE_TOKEN, RunRecoveryRepository],
        useFactory: (queue: RunsQueue, runs: RunRecoveryRepository) => new RunDispatcher(queue, resources.db, runs),
      },
    ];
    return { module: CoreModule, providers, exports: providers.map((p) => p.provide) };
  }

  /** Runs after every role has stopped: nothing may use these connections any more. */
  async onApplicationShutdown(): Promise<void> {
    await this.queue.close().catch(() => undefined);
    this.redis.disconnect();
    await this.db.end().catch(() => undefined);
  }
}
