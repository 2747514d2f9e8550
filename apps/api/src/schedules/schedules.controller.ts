/** REST for schedules: thin handlers that read the request, call one use case and shape the answer. */
import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Put, Query, Res } from '@nestjs/common';
import type { Response } from 'express';
import { MAX_PREVIEW_COUNT, SCHEDULE_STATUSES, ValidationError, parseInstant } from '@kairos/domain';
import { Caller, type CallerContext } from '../http/request-context.js';
import { boundedInteger, optionalEnum, pageLimit } from '../http/query.js';
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

  @Put('by-name/:name')
  async upsert(@Caller() caller: CallerContext, @Param('name') name: string, @Body() body: unknown, @Res({ passthrough: true }) res: Response) {
    const { view, created } = await this.schedules.upsertByName(caller, name, body);
    res.status(created ? 201 : 200);
    return view;
  }

  @Get()
  list(
    @Caller() caller: CallerContext,
    @Query('limit') limit?: string,
    @Query('cursor') cursor?: string,
    @Query('status') status?: string,
    @Query('name') name?: string,
    @Query('label') label?: string,
  ) {
    return this.schedules.list(
      caller,
      { status: optionalEnum(status, 'status', SCHEDULE_STATUSES), name: name || undefined, label: parseLabel(label) },
      pageLimit(limit),
      cursor || undefined,
    );
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
  async preview(@Caller() caller: CallerContext, @Param('id') id: string, @Query('count') count?: string, @Query('after') after?: string) {
    const fireTimes = await this.schedules.preview(
      caller,
      id,
      boundedInteger(count, 'count', 10, 1, MAX_PREVIEW_COUNT),
      after ? parseInstant(after, 'after') : undefined,
    );
    return { fireTimes };
  }

  @Get(':id/ticks')
  async ticks(@Caller() caller: CallerContext, @Param('id') id: string, @Query('limit') limit?: string, @Query('cursor') cursor?: string) {
    const page = await this.schedules.ticks(caller, id, pageLimit(limit), cursor || undefined);
    return {
      items: page.items.map((t) => ({
        scheduledFor: t.scheduledFor.toISOString(),
        outcome: t.outcome,
        reasonCode: t.reasonCode,
        reasonText: t.reasonText,
        runId: t.runId,
        origin: t.origin,
        createdAt: t.createdAt.toISOString(),
      })),
      nextCursor: page.nextCursor,
    };
  }
}

/** `label=team:billing` filters on one label. */
function parseLabel(value: string | undefined): { key: string; value: string } | undefined {
  if (value === undefined || value === '') return undefined;
  const at = value.indexOf(':');
  if (at <= 0) throw new ValidationError('VALIDATION_FAILED', 'label', 'label must look like key:value');
  return { key: value.slice(0, at), value: value.slice(at + 1) };
}
