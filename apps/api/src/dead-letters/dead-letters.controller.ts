/** Dead letters: runs that ended dead (retries exhausted, not retryable, or poisoned), and republishing them. */
import { Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { Caller, type CallerContext } from '../auth/request-context.js';
import { deadLetterListQuery } from '../wire/query.js';
import { RunsService } from '../runs/runs.service.js';

@Controller('v1/dead-letters')
export class DeadLettersController {
  constructor(private readonly runs: RunsService) {}

  @Get()
  list(@Caller() caller: CallerContext, @Query('scheduleId') scheduleId?: string, @Query('limit') limit?: string, @Query('cursor') cursor?: string) {
    const query = deadLetterListQuery({ scheduleId, limit, cursor });
    return this.runs.list(caller, query.filter, query.limit, query.cursor);
  }

  /** Creates a fresh run (origin republish) of the dead run's target and payload. */
  @Post(':id/republish')
  @HttpCode(201)
  republish(@Caller() caller: CallerContext, @Param('id') id: string) {
    return this.runs.rerun(caller, id, 'republish');
  }
}
