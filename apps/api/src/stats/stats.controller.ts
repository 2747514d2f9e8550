/** REST for run statistics: GET /v1/stats/runs. */
import { Controller, Get, Query } from '@nestjs/common';
import { Caller, type CallerContext } from '../auth/request-context.js';
import { StatsService } from './stats.service.js';

@Controller('v1/stats')
export class StatsController {
  constructor(private readonly stats: StatsService) {}

  @Get('runs')
  runs(@Caller() caller: CallerContext, @Query() params: Record<string, unknown>) {
    return this.stats.runs(caller, params);
  }
}
