/** Queue limits over REST and GraphQL: list the queues of the namespace, set or clear a queue's limits. */
import { Module } from '@nestjs/common';
import { QueueLimitRepository } from '@kairos/ledger';
import { QueuesController } from './queues.controller.js';
import { QueuesResolver } from './queues.resolver.js';
import { QueuesService } from './queues.service.js';

@Module({
  controllers: [QueuesController],
  providers: [{ provide: QueueLimitRepository, useValue: new QueueLimitRepository() }, QueuesService, QueuesResolver],
})
export class QueuesModule {}
