/**
 * Bull Board at /admin/queues (admin scope). The default runs queue is shown from the start; the
 * queues workers register later are added as the registry names them, so the board shows every
 * queue without a restart of the API. A queue split into shards (KAIROS_QUEUE_SHARDS) shows each
 * shard, `kairos-runs:shard-0` onwards, grouped under the queue's name. Its router is mounted ahead of the API's own middleware, so
 * it gets the same security headers and rate limit in its own chain.
 */
import { Inject, Injectable, Logger, Module, type OnApplicationBootstrap, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { ExpressAdapter } from '@bull-board/express';
import { BULL_BOARD_ADAPTER, BullBoardModule, InjectBullBoard, type BullBoardInstance } from '@bull-board/nestjs';
import { DEFAULT_QUEUE } from '@kairos/domain';
import { WorkerRepository, type Db } from '@kairos/ledger';
import { RunsQueues, type RunsQueue } from '@kairos/queue';
import { DATABASE, Loop } from '@kairos/process';
import { RateLimitMiddleware } from '../requests/rate-limit.middleware.js';
import { SecurityHeadersMiddleware } from '../requests/security-headers.middleware.js';
import { AdminAuthMiddleware } from './admin-auth.middleware.js';
import { BoardRequestsController } from './board-requests.controller.js';

const REFRESH_MS = 5_000;

@Injectable()
export class BoardQueues implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly shown = new Set<string>();
  private readonly loop = new Loop({ name: 'queue board refresh', logger: new Logger('QueueBoard'), pass: () => this.refresh() });

  constructor(
    @InjectBullBoard() private readonly board: BullBoardInstance,
    @Inject(DATABASE) private readonly db: Db,
    private readonly workers: WorkerRepository,
    private readonly queues: RunsQueues,
  ) {}

  onApplicationBootstrap(): void {
    this.show(DEFAULT_QUEUE);
    this.loop.start();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.loop.stop();
  }

  /** Adds the queues workers registered since the last pass. */
  async refresh(): Promise<number> {
    for (const queue of await this.workers.queues(this.db)) this.show(queue);
    return REFRESH_MS;
  }

  private show(queue: string): void {
    if (this.shown.has(queue)) return;
    const shards = this.queues.all(queue);
    for (const [n, shard] of shards.entries()) this.board.addQueue(shards.length === 1 ? new BullMQAdapter(shard) : new ShardAdapter(shard, n));
    this.shown.add(queue);
  }
}

/** A shard on the board: named after its queue and number, so the board groups a queue's shards under its name. */
class ShardAdapter extends BullMQAdapter {
  constructor(
    queue: RunsQueue,
    private readonly shard: number,
  ) {
    super(queue, { delimiter: ':' });
  }

  override getName(): string {
    return `${super.getName()}:shard-${this.shard}`;
  }
}

@Module({
  imports: [
    BullBoardModule.forRoot({ route: '/admin/queues', adapter: ExpressAdapter, middleware: [SecurityHeadersMiddleware, RateLimitMiddleware, AdminAuthMiddleware] }),
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
