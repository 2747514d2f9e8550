/** The stateless cron and interval preview over REST and GraphQL. */
import { Module } from '@nestjs/common';
import { SchedulesModule } from '../schedules/schedules.module.js';
import { CronPreviewController } from './cron-preview.controller.js';
import { CronPreviewResolver } from './cron-preview.resolver.js';
import { CronPreviewService } from './cron-preview.service.js';

@Module({ imports: [SchedulesModule], controllers: [CronPreviewController], providers: [CronPreviewService, CronPreviewResolver] })
export class CronModule {}
