/** Schedules over REST and GraphQL: declare, change, trigger, backfill and preview them. */
import { Module } from '@nestjs/common';
import { SchedulesController } from './schedules.controller.js';
import { SchedulesResolver } from './schedules.resolver.js';
import { SchedulesService } from './schedules.service.js';

@Module({ controllers: [SchedulesController], providers: [SchedulesService, SchedulesResolver] })
export class SchedulesModule {}
