/**
 * A server span per API request, named after its route template (`GET /v1/runs/:id`, never the
 * path, whose ids would make every name unique), continuing the caller's trace when the request
 * carries a `traceparent`. It is active while the request is served, so a run the request creates
 * records it as its trace. Installed only while the process traces.
 */
import type { NextFunction, Request, Response } from 'express';
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, context, propagation, trace } from '@opentelemetry/api';
import { ATTR_HTTP_REQUEST_METHOD, ATTR_HTTP_RESPONSE_STATUS_CODE, ATTR_HTTP_ROUTE, ATTR_URL_PATH } from '@opentelemetry/semantic-conventions';
import { tracer } from './trace-context.js';

export function requestSpans(): (req: Request, res: Response, next: NextFunction) => void {
  return (req, res, next) => {
    const parent = propagation.extract(ROOT_CONTEXT, req.headers);
    const span = tracer.startSpan(req.method, { kind: SpanKind.SERVER, attributes: { [ATTR_HTTP_REQUEST_METHOD]: req.method, [ATTR_URL_PATH]: req.path } }, parent);
    res.once('close', () => {
      const route = routeOf(req);
      if (route !== null) {
        span.updateName(`${req.method} ${route}`);
        span.setAttribute(ATTR_HTTP_ROUTE, route);
      }
      span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, res.statusCode);
      if (res.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    });
    context.with(trace.setSpan(parent, span), next);
  };
}

/** The template of the route that served the request; null when none matched (a 404, a mounted app like GraphQL's). */
function routeOf(req: Request): string | null {
  const path = (req.route as { path?: unknown } | undefined)?.path;
  return typeof path === 'string' ? `${req.baseUrl}${path}` : null;
}
