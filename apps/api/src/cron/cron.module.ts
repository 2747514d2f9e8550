/** The stateless cron and interval preview over REST and GraphQL. */
import { Module } from '@nestjs/common';
import { CronPreviewController } from './cron-preview.controller.js';
import { CronPreviewResolver } from './cron-preview.resolver.js';

@Module({ controllers: [CronPreviewController], providers: [CronPreviewResolver] })
export class CronModule {}
