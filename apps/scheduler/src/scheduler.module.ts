/** The scheduler role: leader election and the loops only the leader runs; partition ownership and the tick every scheduler runs. */
import { Module } from '@nestjs/common';
import { PartitionLeaseRepository } from '@kairos/ledger';
import { DeadlineService } from './alerts/deadline.service.js';
import { SubscriptionDeliveryService } from './alerts/subscription-delivery.service.js';
import { LeadershipService } from './leadership/leadership.service.js';
import { LimitsService } from './limits/limits.service.js';
import { PartitionService } from './partitions/partition.service.js';
import { ReaperService } from './reaper/reaper.service.js';
import { ReconcilerService } from './recovery/reconciler.service.js';
import { OutboxPublisher } from './relay/outbox-publisher.service.js';
import { RelayService } from './relay/relay.service.js';
import { RetentionService } from './retention/retention.service.js';
import { SensorService } from './sensors/sensor.service.js';
import { TickService } from './tick/tick.service.js';

@Module({
  providers: [
    LeadershipService,
    PartitionService,
    { provide: PartitionLeaseRepository, useValue: new PartitionLeaseRepository() },
    TickService,
    RelayService,
    ReaperService,
    ReconcilerService,
    OutboxPublisher,
    RetentionService,
    LimitsService,
    SensorService,
    SubscriptionDeliveryService,
    DeadlineService,
  ],
  exports: [LeadershipService, PartitionService, TickService],
})
export class SchedulerModule {}
