/** REST for subscriptions: thin handlers that read the request, call one use case and shape the answer. */
import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { PageQuery, readQuery } from '@kairos/domain/wire';
import { Caller, type CallerContext } from '../auth/request-context.js';
import { SubscriptionsService } from './subscriptions.service.js';

@Controller('v1/subscriptions')
export class SubscriptionsController {
  constructor(private readonly subscriptions: SubscriptionsService) {}

  @Post()
  @HttpCode(201)
  create(@Caller() caller: CallerContext, @Body() body: unknown) {
    return this.subscriptions.create(caller, body);
  }

  @Get()
  list(@Caller() caller: CallerContext, @Query() params: Record<string, unknown>) {
    const { limit, cursor } = readQuery(PageQuery, params);
    return this.subscriptions.list(caller, limit, cursor);
  }

  @Get(':id')
  get(@Caller() caller: CallerContext, @Param('id') id: string) {
    return this.subscriptions.get(caller, id);
  }

  @Patch(':id')
  patch(@Caller() caller: CallerContext, @Param('id') id: string, @Body() body: unknown) {
    return this.subscriptions.patch(caller, id, body);
  }

  @Delete(':id')
  @HttpCode(204)
  async remove(@Caller() caller: CallerContext, @Param('id') id: string): Promise<void> {
    await this.subscriptions.remove(caller, id);
  }

  @Post(':id/pause')
  @HttpCode(200)
  pause(@Caller() caller: CallerContext, @Param('id') id: string) {
    return this.subscriptions.setPaused(caller, id, true);
  }

  @Post(':id/resume')
  @HttpCode(200)
  resume(@Caller() caller: CallerContext, @Param('id') id: string) {
    return this.subscriptions.setPaused(caller, id, false);
  }

  @Post(':id/test')
  @HttpCode(202)
  test(@Caller() caller: CallerContext, @Param('id') id: string) {
    return this.subscriptions.test(caller, id);
  }

  @Get(':id/deliveries')
  deliveries(@Caller() caller: CallerContext, @Param('id') id: string, @Query() params: Record<string, unknown>) {
    const { limit, cursor } = readQuery(PageQuery, params);
    return this.subscriptions.deliveries(caller, id, limit, cursor);
  }
}
