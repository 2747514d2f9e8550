/** REST for events: thin handlers that read the request, call one use case and shape the answer. */
import { Body, Controller, Get, HttpCode, Param, Post, Query, Res } from '@nestjs/common';
import type { Response } from 'express';
import { EventListQuery, readQuery } from '@kairos/domain/wire';
import { Caller, type CallerContext } from '../auth/request-context.js';
import { batchAnswers } from '../requests/batch.js';
import { EventsService } from './events.service.js';

@Controller('v1/events')
export class EventsController {
  constructor(private readonly events: EventsService) {}

  /** 202 for a new event (its runs are started, not finished); 200 for a repeated id. */
  @Post()
  async send(@Caller() caller: CallerContext, @Body() body: unknown, @Res({ passthrough: true }) res: Response) {
    const view = await this.events.send(caller, body);
    res.status(view.deduped ? 200 : 202);
    return view;
  }

  /** 200 with one answer per item, in order: its event (deduped or not) or its refusal. */
  @Post('batch')
  @HttpCode(200)
  async sendBatch(@Caller() caller: CallerContext, @Body() body: unknown) {
    return batchAnswers(await this.events.sendBatch(caller, body));
  }

  @Get()
  list(@Caller() caller: CallerContext, @Query() params: Record<string, unknown>) {
    const { limit, cursor, name } = readQuery(EventListQuery, params);
    return this.events.list(caller, name ?? undefined, limit, cursor);
  }

  @Get(':id')
  get(@Caller() caller: CallerContext, @Param('id') id: string) {
    return this.events.get(caller, id);
  }
}
