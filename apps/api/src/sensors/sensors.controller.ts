/** REST for sensors: thin handlers that read the request, call one use case and shape the answer. */
import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { PageQuery, readQuery } from '@kairos/domain/wire';
import { Caller, type CallerContext } from '../auth/request-context.js';
import { SensorsService } from './sensors.service.js';

@Controller('v1/sensors')
export class SensorsController {
  constructor(private readonly sensors: SensorsService) {}

  @Post()
  @HttpCode(201)
  create(@Caller() caller: CallerContext, @Body() body: unknown) {
    return this.sensors.create(caller, body);
  }

  @Get()
  list(@Caller() caller: CallerContext, @Query() params: Record<string, unknown>) {
    const { limit, cursor } = readQuery(PageQuery, params);
    return this.sensors.list(caller, limit, cursor);
  }

  @Get(':id')
  get(@Caller() caller: CallerContext, @Param('id') id: string) {
    return this.sensors.get(caller, id);
  }

  @Patch(':id')
  patch(@Caller() caller: CallerContext, @Param('id') id: string, @Body() body: unknown) {
    return this.sensors.patch(caller, id, body);
  }

  @Delete(':id')
  @HttpCode(204)
  async remove(@Caller() caller: CallerContext, @Param('id') id: string): Promise<void> {
    await this.sensors.remove(caller, id);
  }

  @Post(':id/pause')
  @HttpCode(200)
  pause(@Caller() caller: CallerContext, @Param('id') id: string) {
    return this.sensors.setPaused(caller, id, true);
  }

  @Post(':id/resume')
  @HttpCode(200)
  resume(@Caller() caller: CallerContext, @Param('id') id: string) {
    return this.sensors.setPaused(caller, id, false);
  }

  @Get(':id/ticks')
  ticks(@Caller() caller: CallerContext, @Param('id') id: string, @Query() params: Record<string, unknown>) {
    const { limit, cursor } = readQuery(PageQuery, params);
    return this.sensors.ticks(caller, id, limit, cursor);
  }

  @Post(':id/cursor')
  @HttpCode(200)
  setCursor(@Caller() caller: CallerContext, @Param('id') id: string, @Body() body: unknown) {
    return this.sensors.setCursor(caller, id, body);
  }

  @Post(':id/reset')
  @HttpCode(200)
  reset(@Caller() caller: CallerContext, @Param('id') id: string, @Body() body: unknown) {
    return this.sensors.reset(caller, id, body);
  }
}
