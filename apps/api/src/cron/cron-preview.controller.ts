/** POST /v1/cron/preview: the next fire instants of an ad-hoc spec, without storing anything. */
import { Body, Controller, HttpCode, Post } from '@nestjs/common';
import { formatInstant } from '@kairos/domain';
import { previewSpec } from '@kairos/domain/wire';
import { RequiresScope } from '../auth/caller.guard.js';
import { dstView } from '../wire/policy.view.js';

@Controller('v1/cron')
export class CronPreviewController {
  @Post('preview')
  @RequiresScope('read')
  @HttpCode(200)
  preview(@Body() body: unknown) {
    const preview = previewSpec(body, Date.now());
    return { fireTimes: preview.fireTimes.map(formatInstant), dst: dstView(preview.cron, preview.dst) };
  }
}
