/** A run as it changes: GET /v1/runs/:id/stream (server-sent events) and the GraphQL runUpdated subscription. */
import { Module } from '@nestjs/common';
import { RunStreamController } from './run-stream.controller.js';
import { RunStreamResolver } from './run-stream.resolver.js';
import { RunStreamService } from './run-stream.service.js';

@Module({ controllers: [RunStreamController], providers: [RunStreamService, RunStreamResolver] })
export class RunStreamModule {}
