/** POST /v1/apply: a source's declared schedules, planned and (unless a dry run) applied in one transaction. */
import { Body, Controller, HttpCode, Post } from '@nestjs/common';
import { Caller, type CallerContext } from '../auth/request-context.js';
import { ApplyService } from './apply.service.js';

@Controller('v1/apply')
export class ApplyController {
  constructor(private readonly applies: ApplyService) {}

  @Post()
  @HttpCode(200)
  apply(@Caller() caller: CallerContext, @Body() body: unknown) {
    return this.applies.apply(caller, body);
  }
}
