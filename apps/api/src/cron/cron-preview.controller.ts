/** POST /v1/cron/preview: the next fire instants of an ad-hoc spec, without storing anything. */
import { Body, Controller, HttpCode, Inject, Post } from '@nestjs/common';
import { formatInstant } from '@kairos/domain';
import type { DatabaseClock } from '@kairos/ledger';
import { DATABASE_CLOCK } from '@kairos/process';
import { RequiresScope } from '../auth/caller.guard.js';
import { Caller, type CallerContext } from '../auth/request-context.js';
import { dstView } from '../wire/policy.view.js';
import { CronPreviewService } from './cron-preview.service.js';

@Controller('v1/cron')
export class CronPreviewController {
  constructor(
    @Inject(DATABASE_CLOCK) private readonly clock: DatabaseClock,
    private readonly previews: CronPreviewService,
  ) {}

  @Post('preview')
  @RequiresScope('read')
  @HttpCode(200)
  async preview(@Caller() caller: CallerContext, @Body() body: unknown) {
    const preview = await this.previews.preview(caller, body);
    return { fireTimes: preview.fireTimes.map(formatInstant), ...(preview.excludedDates === null ? {} : { excludedDates: preview.excludedDates }), dst: dstView(preview.cron, preview.dst) };
  }
}
