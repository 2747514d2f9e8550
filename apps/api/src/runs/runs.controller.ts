/** REST for runs. */
import { Body, Controller, Get, HttpCode, Param, Post, Query, Res } from '@nestjs/common';
import type { Response } from 'express';
import { readQuery, RunListQuery } from '@kairos/domain/wire';
import { Caller, type CallerContext } from '../auth/request-context.js';
import { batchAnswers } from '../requests/batch.js';
import { RunsBulkService } from './runs-bulk.service.js';
import { RunsService } from './runs.service.js';

@Controller('v1/runs')
export class RunsController {
  constructor(
    private readonly runs: RunsService,
    private readonly bulkRuns: RunsBulkService,
  ) {}

  @Post()
  async create(@Caller() caller: CallerContext, @Body() body: unknown, @Res({ passthrough: true }) res: Response) {
    const view = await this.runs.create(caller, body);
    res.status(view.deduped ? 200 : 201);
    return view;
  }

  /** 200 with one answer per item, in order: its run (deduped or not) or its refusal. */
  @Post('batch')
  @HttpCode(200)
  async createBatch(@Caller() caller: CallerContext, @Body() body: unknown) {
    return batchAnswers(await this.runs.createBatch(caller, body));
  }

  /** 200 with what the filter matched and what was done: cancel or retry every matching run, in pages (or count them, dryRun). */
  @Post('bulk')
  @HttpCode(200)
  bulk(@Caller() caller: CallerContext, @Body() body: unknown) {
    return this.bulkRuns.bulk(caller, body);
  }

  @Get()
  list(@Caller() caller: CallerContext, @Query() params: Record<string, unknown>) {
    const { limit, cursor, ...filter } = readQuery(RunListQuery, params);
    return this.runs.list(caller, filter, limit, cursor);
  }

  @Get(':id')
  get(@Caller() caller: CallerContext, @Param('id') id: string) {
    return this.runs.get(caller, id);
  }

  @Get(':id/events')
  events(@Caller() caller: CallerContext, @Param('id') id: string) {
    return this.runs.events(caller, id);
  }

  @Post(':id/cancel')
  @HttpCode(200)
  cancel(@Caller() caller: CallerContext, @Param('id') id: string) {
    return this.runs.cancel(caller, id);
  }

  @Post(':id/signals/:name')
  @HttpCode(202)
  signal(@Caller() caller: CallerContext, @Param('id') id: string, @Param('name') name: string, @Body() body: unknown) {
    return this.runs.signal(caller, id, name, body);
  }

  /** 200 with the run moved to another version of the code (null: any version). */
  @Post(':id/version')
  @HttpCode(200)
  moveVersion(@Caller() caller: CallerContext, @Param('id') id: string, @Body() body: unknown) {
    return this.runs.moveVersion(caller, id, body);
  }

  @Post(':id/retry')
  @HttpCode(201)
  retry(@Caller() caller: CallerContext, @Param('id') id: string) {
    return this.runs.retry(caller, id);
  }
}
