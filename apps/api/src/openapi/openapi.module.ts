/** The OpenAPI document and Swagger UI under /docs. */
import { Module } from '@nestjs/common';
import { OpenApiController } from './openapi.controller.js';

@Module({ controllers: [OpenApiController] })
export class OpenApiModule {}
