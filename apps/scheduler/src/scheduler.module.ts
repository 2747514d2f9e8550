/** The scheduler role: leader election, and the loops only the leader runs. */
import { Module } from '@nestjs/common';
import { LeadershipService } from './leadership/leadership.service.js';
import { ReaperService } from './reaper/reaper.service.js';
import { ReconcilerService } from './recovery/reconciler.service.js';
import { OutboxPublisher } from './relay/outbox-publisher.service.js';
import { RelayService } from './relay/relay.service.js';
import { RetentionService } from './retention/retention.service.js';
import { TickService } from './tick/tick.service.js';

@Module({
  providers: [LeadershipService, TickService, RelayService, ReaperService, ReconcilerService, OutboxPublisher, RetentionService],
  exports: [LeadershipService, TickService],
})
export class SchedulerModule {}
