/** The stateless preview of an ad-hoc spec, with the namespace's calendars its `calendar` names. */
import { Inject, Injectable } from '@nestjs/common';
import { previewOf, type SpecPreview } from '@kairos/domain';
import { readPreviewRequest } from '@kairos/domain/wire';
import type { DatabaseClock, Db } from '@kairos/ledger';
import { DATABASE, DATABASE_CLOCK } from '@kairos/process';
import type { CallerContext } from '../auth/request-context.js';
import { SchedulesService } from '../schedules/schedules.service.js';

@Injectable()
export class CronPreviewService {
  constructor(
    @Inject(DATABASE) private readonly db: Db,
    @Inject(DATABASE_CLOCK) private readonly clock: DatabaseClock,
    private readonly schedules: SchedulesService,
  ) {}

  async preview(caller: CallerContext, body: unknown): Promise<SpecPreview> {
    const { spec, afterMs, count } = readPreviewRequest(body, this.clock.now());
    const calendars = await this.schedules.calendarsOf(this.db, caller.namespaceId, spec.calendar?.exclude ?? []);
    return previewOf(spec, afterMs, count, calendars);
  }
}
