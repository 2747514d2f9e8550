/** Bull Board at /admin/queues, showing the runs queue registered beside it. */
import { Module } from '@nestjs/common';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { ExpressAdapter } from '@bull-board/express';
import { BullBoardModule } from '@bull-board/nestjs';
import { RUNS_QUEUE } from '@kairos/queue';

@Module({
  imports: [
    BullBoardModule.forRoot({ route: '/admin/queues', adapter: ExpressAdapter }),
    BullBoardModule.forFeature({ name: RUNS_QUEUE, adapter: BullMQAdapter }),
  ],
})
export class QueueBoardModule {}
