/** GET /v1/workers: the workers of the cluster, their queues and handlers. */
import { Controller, Get, Query } from '@nestjs/common';
import { optionalText, pageLimit } from '../wire/query.js';
import { WorkersService } from './workers.service.js';

@Controller('v1/workers')
export class WorkersController {
  constructor(private readonly workers: WorkersService) {}

  @Get()
  list(@Query('limit') limit?: string, @Query('cursor') cursor?: string) {
    return this.workers.list(pageLimit(limit), optionalText(cursor, 'cursor'));
  }
}
