/** GET /v1/workers: the workers of the cluster, their queues and handlers. */
import { Controller, Get, Query } from '@nestjs/common';
import { PageQuery, readQuery } from '@kairos/domain/wire';
import { WorkersService } from './workers.service.js';

@Controller('v1/workers')
export class WorkersController {
  constructor(private readonly workers: WorkersService) {}

  @Get()
  list(@Query() params: Record<string, unknown>) {
    const { limit, cursor } = readQuery(PageQuery, params);
    return this.workers.list(limit, cursor);
  }
}
