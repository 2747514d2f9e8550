/** REST for queue limits: GET /v1/queues, GET and PUT /v1/queues/:name. */
import { Body, Controller, Get, Param, Put } from '@nestjs/common';
import { Caller, type CallerContext } from '../auth/request-context.js';
import { QueuesService } from './queues.service.js';

@Controller('v1/queues')
export class QueuesController {
  constructor(private readonly queues: QueuesService) {}

  @Get()
  list(@Caller() caller: CallerContext) {
    return this.queues.list(caller);
  }

  @Get(':name')
  get(@Caller() caller: CallerContext, @Param('name') name: string) {
    return this.queues.get(caller, name);
  }

  @Put(':name')
  set(@Caller() caller: CallerContext, @Param('name') name: string, @Body() body: unknown) {
    return this.queues.set(caller, name, body);
  }
}
