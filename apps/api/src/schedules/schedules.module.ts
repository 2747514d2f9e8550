/** Schedules over REST and GraphQL: declare, change, trigger, backfill and preview them, and apply a source's declaration. */
import { Module } from '@nestjs/common';
import { ApplyController } from './apply.controller.js';
import { ApplyService } from './apply.service.js';
import { RunsModule } from '../runs/runs.module.js';
import { SensorsModule } from '../sensors/sensors.module.js';
import { TargetsModule } from '../targets/targets.module.js';
import { WorkersModule } from '../workers/workers.module.js';
import { ScheduleRunsResolver } from './schedule-runs.resolver.js';
import { SchedulesController } from './schedules.controller.js';
import { SchedulesResolver } from './schedules.resolver.js';
import { SchedulesService } from './schedules.service.js';

@Module({
  imports: [TargetsModule, RunsModule, WorkersModule, SensorsModule],
  controllers: [SchedulesController, ApplyController],
  providers: [SchedulesService, ApplyService, SchedulesResolver, ScheduleRunsResolver],
  exports: [SchedulesService],
})
export class SchedulesModule {}
