/** The OpenAPI document and Swagger UI under /docs; the API module hands in the document its features describe. */
import { Module, type DynamicModule } from '@nestjs/common';
import { OpenApiController, SERVED_DOCUMENT } from './openapi.controller.js';
import type { OpenApiDocument } from './openapi.types.js';

@Module({})
export class OpenApiModule {
  static serving(document: OpenApiDocument): DynamicModule {
    return { module: OpenApiModule, controllers: [OpenApiController], providers: [{ provide: SERVED_DOCUMENT, useValue: document }] };
  }
}
