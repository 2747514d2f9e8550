/**
 * The worker registry over REST and GraphQL (its service also admits handler targets for schedules
 * and runs), and the worker credentials over REST.
 */
import { Module } from '@nestjs/common';
import { WorkerCredentialsController } from './worker-credentials.controller.js';
import { WorkerCredentialsService } from './worker-credentials.service.js';
import { WorkersController } from './workers.controller.js';
import { WorkersResolver } from './workers.resolver.js';
import { WorkersService } from './workers.service.js';

@Module({
  controllers: [WorkersController, WorkerCredentialsController],
  providers: [WorkersService, WorkersResolver, WorkerCredentialsService],
  exports: [WorkersService],
})
export class WorkersModule {}
