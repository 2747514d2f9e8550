/**
 * Bull Board at /admin/queues (admin scope). The default runs queue is registered beside it; the
 * queues workers register later are added as the registry names them, so the board shows every
 * queue without a restart of the API.
 */
import { Inject, Injectable, Logger, Module, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { ExpressAdapter } from '@bull-board/express';
import { BullBoardModule, InjectBullBoard, type BullBoardInstance } from '@bull-board/nestjs';
import { DEFAULT_QUEUE } from '@kairos/domain';
import { WorkerRepository, type Db } from '@kairos/ledger';
import { RUNS_QUEUE, RunQueues } from '@kairos/queue';
import { DATABASE, Loop } from '@kairos/runtime';
import { AdminAuthMiddleware } from './admin-auth.middleware.js';

const REFRESH_MS = 5_000;

@Injectable()
export class BoardQueues implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly shown = new Set<string>([DEFAULT_QUEUE]);
  private readonly loop = new Loop({ name: 'queue board refresh', logger: new Logger('QueueBoard'), pass: () => this.refresh() });

  constructor(
    @InjectBullBoard() private readonly board: BullBoardInstance,
    @Inject(DATABASE) private readonly db: Db,
    private readonly workers: WorkerRepository,
    private readonly queues: RunQueues,
  ) {}

  onApplicationBootstrap(): void {
    this.loop.start();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.loop.stop();
  }

  /** Adds the queues workers registered since the last pass. */
  async refresh(): Promise<number> {
    for (const queue of await this.workers.queues(this.db)) {
      if (this.shown.has(queue)) continue;
      this.board.addQueue(new BullMQAdapter(this.queues.get(queue)));
      this.shown.add(queue);
    }
    return REFRESH_MS;
  }
}

@Module({
  imports: [
    BullBoardModule.forRoot({ route: '/admin/queues', adapter: ExpressAdapter, middleware: AdminAuthMiddleware }),
    BullBoardModule.forFeature({ name: RUNS_QUEUE, adapter: BullMQAdapter }),
  ],
  providers: [BoardQueues],
})
export class QueueBoardModule {}
