/** Calendars over REST and GraphQL: the local dates schedules keep clear of, and the dates each excludes. */
import { Module } from '@nestjs/common';
import { SchedulesModule } from '../schedules/schedules.module.js';
import { CalendarsController } from './calendars.controller.js';
import { CalendarsResolver } from './calendars.resolver.js';
import { CalendarsService } from './calendars.service.js';

@Module({
  imports: [SchedulesModule],
  controllers: [CalendarsController],
  providers: [CalendarsService, CalendarsResolver],
  exports: [CalendarsService],
})
export class CalendarsModule {}
