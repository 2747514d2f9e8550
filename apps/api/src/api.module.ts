/** The API role: REST /v1, GraphQL /graphql, Bull Board, with one error shape and one caller resolution for every route and operation. */
import { Module } from '@nestjs/common';
import { APP_FILTER, APP_GUARD } from '@nestjs/core';
import { QueueBoardModule } from './admin/queue-board.module.js';
import { CronPreviewController } from './cron/cron-preview.controller.js';
import { DeadLettersController } from './dead-letters/dead-letters.controller.js';
import { GRAPHQL_RESOLVERS, GraphqlServerModule } from './graphql/graphql-server.js';
import { ApiErrorFilter } from './http/api-error.filter.js';
import { AuthModule } from './http/auth.module.js';
import { CallerGuard } from './http/caller.guard.js';
import { OpenApiModule } from './openapi/openapi.module.js';
import { RunsController } from './runs/runs.controller.js';
import { RunsService } from './runs/runs.service.js';
import { SchedulesController } from './schedules/schedules.controller.js';
import { SchedulesService } from './schedules/schedules.service.js';
import { WorkersController } from './workers/workers.controller.js';
import { WorkersService } from './workers/workers.service.js';

@Module({
  imports: [AuthModule, QueueBoardModule, GraphqlServerModule, OpenApiModule],
  controllers: [SchedulesController, RunsController, DeadLettersController, WorkersController, CronPreviewController],
  providers: [
    SchedulesService,
    RunsService,
    WorkersService,
    ...GRAPHQL_RESOLVERS,
    { provide: APP_FILTER, useClass: ApiErrorFilter },
    { provide: APP_GUARD, useClass: CallerGuard },
  ],
})
export class ApiModule {}
