/**
 * Bull Board at /admin/queues (admin scope), showing the runs queue registered beside it. Its router
 * is mounted ahead of the API's own middleware, so it gets the same security headers and rate
 * limit in its own chain.
 */
import { Inject, Module, type OnModuleInit } from '@nestjs/common';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { ExpressAdapter } from '@bull-board/express';
import { BULL_BOARD_ADAPTER, BullBoardModule } from '@bull-board/nestjs';
import { RUNS_QUEUE } from '@kairos/queue';
import { RateLimitMiddleware } from '../requests/rate-limit.middleware.js';
import { SecurityHeadersMiddleware } from '../requests/security-headers.middleware.js';
import { AdminAuthMiddleware } from './admin-auth.middleware.js';
import { BoardRequestsController } from './board-requests.controller.js';

@Module({
  imports: [
    BullBoardModule.forRoot({ route: '/admin/queues', adapter: ExpressAdapter, middleware: [SecurityHeadersMiddleware, RateLimitMiddleware, AdminAuthMiddleware] }),
    BullBoardModule.forFeature({ name: RUNS_QUEUE, adapter: BullMQAdapter }),
  ],
  controllers: [BoardRequestsController],
})
export class QueueBoardModule implements OnModuleInit {
  constructor(@Inject(BULL_BOARD_ADAPTER) private readonly adapter: ExpressAdapter) {}

  /** The board is an Express app of its own, announcing itself unless told not to. */
  onModuleInit(): void {
    this.adapter.getRouter().disable('x-powered-by');
  }
}
