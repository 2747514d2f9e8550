/** Dead letters: runs that ended dead (retries exhausted, not retryable, or poisoned), and republishing them. */
import { Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { DeadLetterListQuery, readQuery } from '@kairos/domain/wire';
import { Caller, type CallerContext } from '../auth/request-context.js';
import { RunsService } from '../runs/runs.service.js';

@Controller('v1/dead-letters')
export class DeadLettersController {
  constructor(private readonly runs: RunsService) {}

  @Get()
  list(@Caller() caller: CallerContext, @Query() params: Record<string, unknown>) {
    const { scheduleId, limit, cursor } = readQuery(DeadLetterListQuery, params);
    return this.runs.list(caller, { scheduleId, state: 'dead' }, limit, cursor);
  }

  /** Creates a fresh run (origin republish) of the dead run's target and payload. */
  @Post(':id/republish')
  @HttpCode(201)
  republish(@Caller() caller: CallerContext, @Param('id') id: string) {
    return this.runs.rerun(caller, id, 'republish');
  }
}
