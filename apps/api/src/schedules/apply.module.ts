/**
 * POST /v1/apply and its GraphQL mutation: a source's declaration of calendars, schedules and
 * sensors, planned and applied in one transaction. A module of its own: the calendars' module
 * imports the schedules' (a changed calendar re-plans schedules), and the apply imports both.
 */
import { Module } from '@nestjs/common';
import { CalendarsModule } from '../calendars/calendars.module.js';
import { SensorsModule } from '../sensors/sensors.module.js';
import { TargetsModule } from '../targets/targets.module.js';
import { WorkersModule } from '../workers/workers.module.js';
import { ApplyController } from './apply.controller.js';
import { ApplyResolver } from './apply.resolver.js';
import { ApplyService } from './apply.service.js';
import { SchedulesModule } from './schedules.module.js';

@Module({
  imports: [SchedulesModule, CalendarsModule, SensorsModule, TargetsModule, WorkersModule],
  controllers: [ApplyController],
  providers: [ApplyService, ApplyResolver],
})
export class ApplyModule {}
