/** The API role: REST /v1, GraphQL /graphql, Bull Board, with one error shape and one caller resolution for every route and operation. */
import { Module, type MiddlewareConsumer, type NestModule } from '@nestjs/common';
import { APP_FILTER, APP_GUARD } from '@nestjs/core';
import { BoardRequestsController } from './admin/board-requests.controller.js';
import { QueueBoardModule } from './admin/queue-board.module.js';
import { FirstAdminKeyService } from './auth/first-admin-key.service.js';
import { LoginController } from './auth/login.controller.js';
import { ClusterController } from './cluster/cluster.controller.js';
import { CronPreviewController } from './cron/cron-preview.controller.js';
import { DeadLettersController } from './dead-letters/dead-letters.controller.js';
import { GRAPHQL_RESOLVERS, GraphqlServerModule } from './graphql/graphql-server.js';
import { ApiErrorFilter } from './http/api-error.filter.js';
import { AuthModule } from './http/auth.module.js';
import { CallerGuard } from './http/caller.guard.js';
import { ScheduleRunsResolver } from './live/schedule-runs.resolver.js';
import { OpenApiModule } from './openapi/openapi.module.js';
import { RateLimitMiddleware } from './requests/rate-limit.middleware.js';
import { RequestShapeMiddleware } from './requests/request-shape.middleware.js';
import { RunsController } from './runs/runs.controller.js';
import { RunsService } from './runs/runs.service.js';
import { SchedulesController } from './schedules/schedules.controller.js';
import { SchedulesService } from './schedules/schedules.service.js';
import { SigningSecretController } from './signing-secret/signing-secret.controller.js';
import { SigningSecretResolver } from './signing-secret/signing-secret.resolver.js';
import { SigningSecretService } from './signing-secret/signing-secret.service.js';
import { UiAssetsController } from './ui/ui-assets.controller.js';
import { ADDRESS_POLICY_PROVIDER } from './targets/target-address.js';

@Module({
  imports: [AuthModule, QueueBoardModule, GraphqlServerModule, OpenApiModule],
  controllers: [SchedulesController, RunsController, DeadLettersController, CronPreviewController, LoginController, BoardRequestsController, SigningSecretController, ClusterController, UiAssetsController],
  providers: [
    SchedulesService,
    RunsService,
    SigningSecretService,
    SigningSecretResolver,
    ADDRESS_POLICY_PROVIDER,
    FirstAdminKeyService,
    ...GRAPHQL_RESOLVERS,
    ScheduleRunsResolver,
    { provide: APP_FILTER, useClass: ApiErrorFilter },
    { provide: APP_GUARD, useClass: CallerGuard },
  ],
})
export class ApiModule implements NestModule {
  configure(consumer: MiddlewareConsumer): void {
    consumer.apply(RateLimitMiddleware, RequestShapeMiddleware).forRoutes('*');
  }
}
