/** Schedules over REST and GraphQL: declare, change, trigger, backfill and preview them. */
import { Module } from '@nestjs/common';
import { TargetsModule } from '../targets/targets.module.js';
import { SchedulesController } from './schedules.controller.js';
import { SchedulesResolver } from './schedules.resolver.js';
import { SchedulesService } from './schedules.service.js';

@Module({ imports: [TargetsModule], controllers: [SchedulesController], providers: [SchedulesService, SchedulesResolver] })
export class SchedulesModule {}
