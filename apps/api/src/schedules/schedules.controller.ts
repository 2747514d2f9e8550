/** REST for schedules: thin handlers that read the request, call one use case and shape the answer. */
import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Put, Query, Res } from '@nestjs/common';
import type { Response } from 'express';
import { PageQuery, PreviewQuery, readQuery, ScheduleListQuery } from '@kairos/domain/wire';
import { Caller, type CallerContext } from '../auth/request-context.js';
import { tickView } from './schedule.view.js';
import { batchAnswers } from '../requests/batch.js';
import { SchedulesService } from './schedules.service.js';

@Controller('v1/schedules')
export class SchedulesController {
  constructor(private readonly schedules: SchedulesService) {}

  /** 201 with the new schedule; 200 with `deduped: true` when the idempotency key was seen before. */
  @Post()
  async create(@Caller() caller: CallerContext, @Body() body: unknown, @Res({ passthrough: true }) res: Response) {
    const view = await this.schedules.create(caller, body);
    res.status(view.deduped ? 200 : 201);
    return view;
  }

  /** 200 with one answer per item, in order: its schedule (deduped or not) or its refusal. */
  @Post('batch')
  @HttpCode(200)
  async createBatch(@Caller() caller: CallerContext, @Body() body: unknown) {
    return batchAnswers(await this.schedules.createBatch(caller, body));
  }

  @Put('by-name/:name')
  async upsert(@Caller() caller: CallerContext, @Param('name') name: string, @Body() body: unknown, @Res({ passthrough: true }) res: Response) {
    const { view, created } = await this.schedules.upsertByName(caller, name, body);
    res.status(created ? 201 : 200);
    return view;
  }

  @Get()
  list(@Caller() caller: CallerContext, @Query() params: Record<string, unknown>) {
    const { limit, cursor, ...filter } = readQuery(ScheduleListQuery, params);
    return this.schedules.list(caller, filter, limit, cursor);
  }

  @Get(':id')
  get(@Caller() caller: CallerContext, @Param('id') id: string) {
    return this.schedules.get(caller, id);
  }

  @Patch(':id')
  patch(@Caller() caller: CallerContext, @Param('id') id: string, @Body() body: unknown) {
    return this.schedules.patch(caller, id, body);
  }

  @Delete(':id')
  @HttpCode(204)
  async remove(@Caller() caller: CallerContext, @Param('id') id: string): Promise<void> {
    await this.schedules.remove(caller, id);
  }

  @Post(':id/pause')
  @HttpCode(200)
  pause(@Caller() caller: CallerContext, @Param('id') id: string) {
    return this.schedules.setPaused(caller, id, true);
  }

  @Post(':id/resume')
  @HttpCode(200)
  resume(@Caller() caller: CallerContext, @Param('id') id: string) {
    return this.schedules.setPaused(caller, id, false);
  }

  @Post(':id/trigger')
  @HttpCode(201)
  trigger(@Caller() caller: CallerContext, @Param('id') id: string, @Body() body: unknown) {
    return this.schedules.trigger(caller, id, body);
  }

  @Post(':id/backfill')
  @HttpCode(201)
  backfill(@Caller() caller: CallerContext, @Param('id') id: string, @Body() body: unknown) {
    return this.schedules.backfill(caller, id, body);
  }

  @Get(':id/preview')
  async preview(@Caller() caller: CallerContext, @Param('id') id: string, @Query() params: Record<string, unknown>) {
    const { count, after } = readQuery(PreviewQuery, params);
    return this.schedules.preview(caller, id, count, after);
  }

  @Get(':id/ticks')
  async ticks(@Caller() caller: CallerContext, @Param('id') id: string, @Query() params: Record<string, unknown>) {
    const { limit, cursor } = readQuery(PageQuery, params);
    const page = await this.schedules.ticks(caller, id, limit, cursor);
    return { items: page.items.map(tickView), nextCursor: page.nextCursor };
  }

  @Get(':id/versions')
  versions(@Caller() caller: CallerContext, @Param('id') id: string, @Query() params: Record<string, unknown>) {
    const { limit, cursor } = readQuery(PageQuery, params);
    return this.schedules.versions(caller, id, limit, cursor);
  }
}
