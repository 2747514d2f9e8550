/** Run statistics over REST and GraphQL: the runs that ended in a window, by bucket. */
import { Module } from '@nestjs/common';
import { StatsController } from './stats.controller.js';
import { StatsResolver } from './stats.resolver.js';
import { StatsService } from './stats.service.js';

@Module({
  controllers: [StatsController],
  providers: [StatsService, StatsResolver],
})
export class StatsModule {}
