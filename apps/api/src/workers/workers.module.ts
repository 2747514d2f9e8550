/** The worker registry over REST and GraphQL; its service also admits handler targets for schedules and runs. */
import { Module } from '@nestjs/common';
import { WorkersController } from './workers.controller.js';
import { WorkersResolver } from './workers.resolver.js';
import { WorkersService } from './workers.service.js';

@Module({ controllers: [WorkersController], providers: [WorkersService, WorkersResolver], exports: [WorkersService] })
export class WorkersModule {}
