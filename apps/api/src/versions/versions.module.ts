/** The versions of the code in flight over REST and GraphQL (GET /v1/versions, query versions). */
import { Module } from '@nestjs/common';
import { VersionsController } from './versions.controller.js';
import { VersionsResolver } from './versions.resolver.js';
import { VersionsService } from './versions.service.js';

@Module({ controllers: [VersionsController], providers: [VersionsService, VersionsResolver] })
export class VersionsModule {}
