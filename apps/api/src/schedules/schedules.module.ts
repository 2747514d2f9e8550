/** Schedules over REST and GraphQL: declare, change, trigger, backfill and preview them (a source's declaration is applied by ApplyModule). */
import { Module } from '@nestjs/common';
import { RunsModule } from '../runs/runs.module.js';
import { TargetsModule } from '../targets/targets.module.js';
import { WorkersModule } from '../workers/workers.module.js';
import { ScheduleRunsResolver } from './schedule-runs.resolver.js';
import { SchedulesController } from './schedules.controller.js';
import { SchedulesResolver } from './schedules.resolver.js';
import { SchedulesService } from './schedules.service.js';

@Module({
  imports: [TargetsModule, RunsModule, WorkersModule],
  controllers: [SchedulesController],
  providers: [SchedulesService, SchedulesResolver, ScheduleRunsResolver],
  exports: [SchedulesService],
})
export class SchedulesModule {}
