/**
 * Refusals every API request gets before a route, a guard or GraphQL sees it, so no handler walks a
 * malformed request:
 * - a state-changing request (POST, PUT, PATCH, DELETE) may not come from another site (403), and
 *   any body it carries must be `application/json` (415); a request with no body at all may leave
 *   the type out, as generated clients (openapi-fetch) do for `POST .../pause`. An HTML form always
 *   sends a typed body, and a browser marks every cross-site fetch with `Origin`, so browsers still
 *   cannot be made to write on a user's behalf;
 * - query parameters are single strings (`?state=a&state=b` and `?state[a]=b` are 400s naming them);
 * - JSON bodies and GraphQL documents nest at most MAX_JSON_DEPTH levels (400 PAYLOAD_TOO_DEEP).
 */
import { Injectable, type NestMiddleware } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { MAX_JSON_DEPTH, graphqlNestingDepth, tooDeepPath } from '@kairos/domain';
import type { ApiError } from '../errors/api-error.filter.js';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

type Refusal = [number, ApiError];

/** Why a state-changing request is refused before anything reads it, or null. */
export function writeRequestRefusal(request: Request): Refusal | null {
  if (SAFE_METHODS.has(request.method)) return null;
  if (isCrossSite(request)) {
    return [403, { code: 'CROSS_SITE_REQUEST', message: `requests from another site (Origin ${request.headers.origin ?? 'null'}) may not change anything`, field: null }];
  }
  const type = (request.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (type === '' && !carriesBody(request)) return null;
  if (type !== 'application/json') {
    return [
      415,
      {
        code: 'UNSUPPORTED_MEDIA_TYPE',
        message: `${request.method} request bodies must be sent as "Content-Type: application/json"${type ? `, not ${type}` : ''}`,
        field: null,
      },
    ];
  }
  return null;
}

function carriesBody(request: Request): boolean {
  return request.headers['transfer-encoding'] !== undefined || Number(request.headers['content-length'] ?? 0) > 0;
}

/** An Origin (or Sec-Fetch-Site) naming another site than the Host the request was sent to. */
function isCrossSite(request: Request): boolean {
  if (request.headers['sec-fetch-site'] === 'cross-site') return true;
  const origin = request.headers.origin;
  if (origin === undefined) return false;
  try {
    return new URL(origin).host !== request.headers.host;
  } catch {
    // "null" (sandboxed frames, file: pages) or garbage: not this site.
    return true;
  }
}

function queryRefusal(query: Record<string, unknown>): Refusal | null {
  for (const [key, value] of Object.entries(query)) {
    const bracket = key.indexOf('[');
    if (bracket >= 0 || typeof value !== 'string') {
      const field = bracket > 0 ? key.slice(0, bracket) : key;
      return [400, { code: 'VALIDATION_FAILED', message: `query parameter ${field} must be given once, as a plain value (not a list or an object)`, field }];
    }
  }
  return null;
}

function depthRefusal(request: Request): Refusal | null {
  const path = tooDeepPath(request.body);
  if (path !== null) {
    const field = path[0] === 'variables' ? path.slice(0, 2).join('.') : path.length > 0 ? String(path[0]) : null;
    return [400, { code: 'PAYLOAD_TOO_DEEP', message: `${field ?? 'the body'} nests deeper than ${MAX_JSON_DEPTH} levels; flatten it`, field }];
  }
  if (request.originalUrl.split('?')[0] === '/graphql') {
    const body = request.body as { query?: unknown } | undefined;
    const document = typeof body?.query === 'string' ? body.query : request.query.query;
    if (typeof document === 'string' && graphqlNestingDepth(document) > MAX_JSON_DEPTH) {
      return [400, { code: 'PAYLOAD_TOO_DEEP', message: `the GraphQL document nests deeper than ${MAX_JSON_DEPTH} levels; pass deep values as variables no deeper than that`, field: 'query' }];
    }
  }
  return null;
}

@Injectable()
export class RequestShapeMiddleware implements NestMiddleware {
  use(request: Request, response: Response, next: NextFunction): void {
    const refusal = writeRequestRefusal(request) ?? queryRefusal(request.query) ?? depthRefusal(request);
    if (refusal === null) return next();
    response.status(refusal[0]).json(refusal[1]);
  }
}
