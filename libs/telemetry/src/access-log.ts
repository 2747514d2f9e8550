/**
 * One access-log line per HTTP request, written when the response is finished: method, path (no
 * query string, which may carry filters a user considers private), status, duration and the
 * request id, which is also in the log context of everything logged while serving the request.
 * A caller's X-Request-Id is kept when it looks like an id, so a request can be followed across
 * services; otherwise one is made up.
 */
import { randomUUID } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import { Logger } from '@nestjs/common';
import { withLogContext } from './log-context.js';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export function accessLog(): (req: Request, res: Response, next: NextFunction) => void {
  const logger = new Logger('Http');
  return (req, res, next) => {
    const startedAt = performance.now();
    const offered = req.get('x-request-id');
    const requestId = offered !== undefined && REQUEST_ID.test(offered) ? offered : randomUUID();
    res.once('finish', () => {
      const caller = (req as Request & { caller?: { namespaceId: string } }).caller;
      const durationMs = Math.round((performance.now() - startedAt) * 10) / 10;
      logger.log({
        msg: `${req.method} ${req.path} ${res.statusCode} ${durationMs} ms`,
        requestId,
        method: req.method,
        path: req.path,
        status: res.statusCode,
        durationMs,
        ...(caller && { namespace: caller.namespaceId }),
      });
    });
    withLogContext({ requestId }, next);
  };
}
