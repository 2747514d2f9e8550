/** Calendars over REST and GraphQL: the local dates schedules keep clear of, and the dates each excludes; and their part of an apply. */
import { Module } from '@nestjs/common';
import { SchedulesModule } from '../schedules/schedules.module.js';
import { CalendarApply } from './calendar-apply.js';
import { CalendarsController } from './calendars.controller.js';
import { CalendarsResolver } from './calendars.resolver.js';
import { CalendarsService } from './calendars.service.js';

@Module({
  imports: [SchedulesModule],
  controllers: [CalendarsController],
  providers: [CalendarsService, CalendarsResolver, CalendarApply],
  exports: [CalendarApply],
})
export class CalendarsModule {}
