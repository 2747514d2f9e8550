/** The API role: REST /v1, GraphQL /graphql, Bull Board, with one error shape and one caller resolution for every route and operation. */
import { Module, type MiddlewareConsumer, type NestModule } from '@nestjs/common';
import { APP_FILTER, APP_GUARD } from '@nestjs/core';
import { QueueBoardModule } from './admin/queue-board.module.js';
import { OPENAPI_DOCUMENT } from './api.openapi.js';
import { AuthModule } from './auth/auth.module.js';
import { CalendarsModule } from './calendars/calendars.module.js';
import { EventsModule } from './events/events.module.js';
import { CallerGuard } from './auth/caller.guard.js';
import { ClusterController } from './cluster/cluster.controller.js';
import { CronModule } from './cron/cron.module.js';
import { DeadLettersModule } from './dead-letters/dead-letters.module.js';
import { ApiErrorFilter } from './errors/api-error.filter.js';
import { GraphqlServerModule } from './graphql/graphql-server.js';
import { OpenApiModule } from './openapi/openapi.module.js';
import { QueuesModule } from './queues/queues.module.js';
import { RateLimitMiddleware } from './requests/rate-limit.middleware.js';
import { RequestShapeMiddleware } from './requests/request-shape.middleware.js';
import { SecurityHeadersMiddleware } from './requests/security-headers.middleware.js';
import { RunsModule } from './runs/runs.module.js';
import { RunStreamModule } from './runs/run-stream.module.js';
import { ApplyModule } from './schedules/apply.module.js';
import { SchedulesModule } from './schedules/schedules.module.js';
import { SensorsModule } from './sensors/sensors.module.js';
import { StatsModule } from './stats/stats.module.js';
import { SubscriptionsModule } from './subscriptions/subscriptions.module.js';
import { SigningSecretModule } from './signing-secret/signing-secret.module.js';
import { UiAssetsController } from './ui/ui-assets.controller.js';
import { VersionsModule } from './versions/versions.module.js';
import { WorkersModule } from './workers/workers.module.js';

@Module({
  imports: [
    AuthModule,
    QueueBoardModule,
    GraphqlServerModule,
    OpenApiModule.serving(OPENAPI_DOCUMENT),
    SchedulesModule,
    SensorsModule,
    SubscriptionsModule,
    CalendarsModule,
    EventsModule,
    ApplyModule,
    RunsModule,
    RunStreamModule,
    DeadLettersModule,
    WorkersModule,
    QueuesModule,
    VersionsModule,
    StatsModule,
    CronModule,
    SigningSecretModule,
  ],
  controllers: [ClusterController, UiAssetsController],
  providers: [
    { provide: APP_FILTER, useClass: ApiErrorFilter },
    { provide: APP_GUARD, useClass: CallerGuard },
  ],
})
export class ApiModule implements NestModule {
  configure(consumer: MiddlewareConsumer): void {
    consumer.apply(SecurityHeadersMiddleware, RateLimitMiddleware, RequestShapeMiddleware).forRoutes('*');
  }
}
