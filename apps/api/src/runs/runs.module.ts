/** Runs over REST and GraphQL: ad-hoc runs, their history and events, cancellation and retry. */
import { Module } from '@nestjs/common';
import { TargetsModule } from '../targets/targets.module.js';
import { WorkersModule } from '../workers/workers.module.js';
import { RunsController } from './runs.controller.js';
import { RunsResolver } from './runs.resolver.js';
import { RunsBulkService } from './runs-bulk.service.js';
import { RunsService } from './runs.service.js';

@Module({ imports: [TargetsModule, WorkersModule], controllers: [RunsController], providers: [RunsService, RunsBulkService, RunsResolver], exports: [RunsService] })
export class RunsModule {}
