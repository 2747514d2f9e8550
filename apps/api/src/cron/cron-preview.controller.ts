/** POST /v1/cron/preview: the next fire instants of an ad-hoc spec, without storing anything. */
import { Body, Controller, HttpCode, Inject, Post } from '@nestjs/common';
import { formatInstant } from '@kairos/domain';
import type { DatabaseClock } from '@kairos/ledger';
import { DATABASE_CLOCK } from '@kairos/process';
import { previewSpec } from '@kairos/domain/wire';
import { RequiresScope } from '../auth/caller.guard.js';
import { dstView } from '../wire/policy.view.js';

@Controller('v1/cron')
export class CronPreviewController {
  constructor(@Inject(DATABASE_CLOCK) private readonly clock: DatabaseClock) {}

  @Post('preview')
  @RequiresScope('read')
  @HttpCode(200)
  preview(@Body() body: unknown) {
    const preview = previewSpec(body, this.clock.now());
    return { fireTimes: preview.fireTimes.map(formatInstant), dst: dstView(preview.cron, preview.dst) };
  }
}
