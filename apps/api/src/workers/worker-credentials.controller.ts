/** REST for worker credentials (admin scope): POST/GET /v1/worker-credentials, DELETE /v1/worker-credentials/:role. */
import { Body, Controller, Delete, Get, HttpCode, Param, Post } from '@nestjs/common';
import { RequiresScope } from '../auth/caller.guard.js';
import { Caller, type CallerContext } from '../auth/request-context.js';
import { WorkerCredentialsService } from './worker-credentials.service.js';

@Controller('v1/worker-credentials')
@RequiresScope('admin')
export class WorkerCredentialsController {
  constructor(private readonly credentials: WorkerCredentialsService) {}

  @Post()
  grant(@Caller() caller: CallerContext, @Body() body: unknown) {
    return this.credentials.grant(caller, body);
  }

  @Get()
  list(@Caller() caller: CallerContext) {
    return this.credentials.list(caller);
  }

  @Delete(':role')
  @HttpCode(204)
  async revoke(@Caller() caller: CallerContext, @Param('role') role: string): Promise<void> {
    await this.credentials.revoke(caller, role);
  }
}
