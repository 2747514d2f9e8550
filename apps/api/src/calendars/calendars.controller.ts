/** REST for calendars: thin handlers that read the request, call one use case and shape the answer. */
import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put, Query, Res } from '@nestjs/common';
import type { Response } from 'express';
import { CalendarDatesQuery, PageQuery, readQuery } from '@kairos/domain/wire';
import { Caller, type CallerContext } from '../auth/request-context.js';
import { CalendarsService } from './calendars.service.js';

@Controller('v1/calendars')
export class CalendarsController {
  constructor(private readonly calendars: CalendarsService) {}

  @Post()
  @HttpCode(201)
  create(@Caller() caller: CallerContext, @Body() body: unknown) {
    return this.calendars.create(caller, body);
  }

  @Get()
  list(@Caller() caller: CallerContext, @Query() params: Record<string, unknown>) {
    const { limit, cursor } = readQuery(PageQuery, params);
    return this.calendars.list(caller, limit, cursor);
  }

  @Get(':name')
  get(@Caller() caller: CallerContext, @Param('name') name: string) {
    return this.calendars.get(caller, name);
  }

  @Put(':name')
  async upsert(@Caller() caller: CallerContext, @Param('name') name: string, @Body() body: unknown, @Res({ passthrough: true }) res: Response) {
    const { view, created } = await this.calendars.upsert(caller, name, body);
    res.status(created ? 201 : 200);
    return view;
  }

  @Delete(':name')
  @HttpCode(204)
  async remove(@Caller() caller: CallerContext, @Param('name') name: string): Promise<void> {
    await this.calendars.remove(caller, name);
  }

  @Get(':name/dates')
  dates(@Caller() caller: CallerContext, @Param('name') name: string, @Query() params: Record<string, unknown>) {
    const { from, to } = readQuery(CalendarDatesQuery, params);
    return this.calendars.dates(caller, name, from, to);
  }
}
