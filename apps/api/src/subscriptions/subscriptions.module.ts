/** Subscriptions over REST and GraphQL: declare, change, pause and delete them, list their deliveries, send a test event. */
import { Module } from '@nestjs/common';
import { OutboxRepository, SubscriptionRepository } from '@kairos/ledger';
import { TargetsModule } from '../targets/targets.module.js';
import { SubscriptionsController } from './subscriptions.controller.js';
import { SubscriptionsResolver } from './subscriptions.resolver.js';
import { SubscriptionsService } from './subscriptions.service.js';

@Module({
  imports: [TargetsModule],
  controllers: [SubscriptionsController],
  providers: [
    { provide: SubscriptionRepository, useValue: new SubscriptionRepository() },
    { provide: OutboxRepository, useValue: new OutboxRepository() },
    SubscriptionsService,
    SubscriptionsResolver,
  ],
})
export class SubscriptionsModule {}
