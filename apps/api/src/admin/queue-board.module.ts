/**
 * Bull Board at /admin/queues (admin scope). The default runs queue is registered beside it; the
 * queues workers register later are added as the registry names them, so the board shows every
 * queue without a restart of the API. Its router is mounted ahead of the API's own middleware, so
 * it gets the same security headers and rate limit in its own chain.
 */
import { Inject, Injectable, Logger, Module, type OnApplicationBootstrap, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { ExpressAdapter } from '@bull-board/express';
import { BULL_BOARD_ADAPTER, BullBoardModule, InjectBullBoard, type BullBoardInstance } from '@bull-board/nestjs';
import { DEFAULT_QUEUE } from '@kairos/domain';
import { WorkerRepository, type Db } from '@kairos/ledger';
import { DEFAULT_RUNS_QUEUE_NAME, RunsQueues } from '@kairos/queue';
import { DATABASE, Loop } from '@kairos/process';
import { RateLimitMiddleware } from '../requests/rate-limit.middleware.js';
import { SecurityHeadersMiddleware } from '../requests/security-headers.middleware.js';
import { AdminAuthMiddleware } from './admin-auth.middleware.js';
import { BoardRequestsController } from './board-requests.controller.js';

const REFRESH_MS = 5_000;

@Injectable()
export class BoardQueues implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly shown = new Set<string>([DEFAULT_QUEUE]);
  private readonly loop = new Loop({ name: 'queue board refresh', logger: new Logger('QueueBoard'), pass: () => this.refresh() });

  constructor(
    @InjectBullBoard() private readonly board: BullBoardInstance,
    @Inject(DATABASE) private readonly db: Db,
    private readonly workers: WorkerRepository,
    private readonly queues: RunsQueues,
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
    BullBoardModule.forRoot({ route: '/admin/queues', adapter: ExpressAdapter, middleware: [SecurityHeadersMiddleware, RateLimitMiddleware, AdminAuthMiddleware] }),
    BullBoardModule.forFeature({ name: DEFAULT_RUNS_QUEUE_NAME, adapter: BullMQAdapter }),
  ],
  controllers: [BoardRequestsController],
  providers: [BoardQueues],
})
export class QueueBoardModule implements OnModuleInit {
  constructor(@Inject(BULL_BOARD_ADAPTER) private readonly adapter: ExpressAdapter) {}

  /** The board is an Express app of its own, announcing itself unless told not to. */
  onModuleInit(): void {
    this.adapter.getRouter().disable('x-powered-by');
  }
}
