/**
 * GET /docs/openapi.json serves the OpenAPI document; GET /docs serves Swagger UI from the
 * swagger-ui-dist package, so the page works without reaching the internet. Both are public: the
 * page is where a caller enters the API key the /v1 routes ask for.
 */
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { Controller, Get, Inject, NotFoundException, Param, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { PublicRoute } from '@kairos/process';
import type { OpenApiDocument } from './openapi.types.js';

/** The injection token of the document the controller serves. */
export const SERVED_DOCUMENT = Symbol('SERVED_DOCUMENT');

const SWAGGER_UI_DIR = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));

/** The files of swagger-ui-dist the page loads; nothing else in the package is served. */
const SWAGGER_UI_FILES = new Set(['swagger-ui.css', 'swagger-ui-bundle.js', 'favicon-32x32.png', 'favicon-16x16.png']);

// Asset URLs are relative, so the page also works behind a proxy that mounts Kairos under a prefix.
const PAGE = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Kairos REST API</title>
  <link rel="stylesheet" href="swagger-ui.css">
  <link rel="icon" type="image/png" href="favicon-32x32.png" sizes="32x32">
  <link rel="icon" type="image/png" href="favicon-16x16.png" sizes="16x16">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="swagger-ui-bundle.js"></script>
  <script src="swagger-initializer.js"></script>
</body>
</html>
`;

// validatorUrl: null keeps Swagger UI from sending the document to the public validator.
const INITIALIZER = `window.onload = function () {
  window.ui = SwaggerUIBundle({
    url: 'openapi.json',
    dom_id: '#swagger-ui',
    deepLinking: true,
    validatorUrl: null,
    presets: [SwaggerUIBundle.presets.apis],
    layout: 'BaseLayout',
    // The API takes state-changing requests only as JSON, bodyless ones (pause, trigger) included.
    requestInterceptor: function (request) {
      if (request.method !== 'GET' && !request.headers['Content-Type']) request.headers['Content-Type'] = 'application/json';
      return request;
    },
  });
};
`;

@Controller('docs')
@PublicRoute()
export class OpenApiController {
  constructor(@Inject(SERVED_DOCUMENT) private readonly openApiDocument: OpenApiDocument) {}

  @Get('openapi.json')
  document(): OpenApiDocument {
    return this.openApiDocument;
  }

  @Get()
  page(@Req() req: Request, @Res() res: Response): void {
    // The page's relative asset URLs resolve under /docs/ only with the trailing slash.
    if (!req.path.endsWith('/')) {
      res.redirect(301, 'docs/');
      return;
    }
    res.type('html').send(PAGE);
  }

  @Get(':file')
  asset(@Param('file') file: string, @Res() res: Response): void {
    if (file === 'swagger-initializer.js') {
      res.type('application/javascript').send(INITIALIZER);
      return;
    }
    if (!SWAGGER_UI_FILES.has(file)) throw new NotFoundException(`/docs/${file} does not exist; Swagger UI is at /docs and the document at /docs/openapi.json`);
    res.sendFile(file, { root: SWAGGER_UI_DIR, maxAge: '1d' });
  }
}
