/** Bull Board at /admin/queues (admin scope), showing the runs queue registered beside it. */
import { Module } from '@nestjs/common';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { ExpressAdapter } from '@bull-board/express';
import { BullBoardModule } from '@bull-board/nestjs';
import { RUNS_QUEUE } from '@kairos/queue';
import { AdminAuthMiddleware } from './admin-auth.middleware.js';

@Module({
  imports: [
    BullBoardModule.forRoot({ route: '/admin/queues', adapter: ExpressAdapter, middleware: AdminAuthMiddleware }),
    BullBoardModule.forFeature({ name: RUNS_QUEUE, adapter: BullMQAdapter }),
  ],
})
export class QueueBoardModule {}
