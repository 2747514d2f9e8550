/** GET /v1/versions: per queue and version, the live workers, the active runs and the runs waiting for their version. */
import { Controller, Get } from '@nestjs/common';
import { Caller, type CallerContext } from '../auth/request-context.js';
import { VersionsService } from './versions.service.js';

@Controller('v1/versions')
export class VersionsController {
  constructor(private readonly versions: VersionsService) {}

  @Get()
  list(@Caller() caller: CallerContext) {
    return this.versions.list(caller);
  }
}
