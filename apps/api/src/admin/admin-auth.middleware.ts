/**
 * Bull Board shows and moves jobs of every namespace: every request to it, page, reads and actions
 * alike, needs the admin scope, from an API key or a browser session (whose actions must echo the
 * CSRF token, which Bull Board's HTTP client does from the XSRF-TOKEN cookie). Its actions are
 * state-changing requests like any other: JSON only, same site only. A browser without a session
 * is sent to the login page.
 */
import { Injectable, type NestMiddleware } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { AccessError } from '@kairos/domain';
import { Authenticator } from '../auth/authenticator.js';
import { writeRequestRefusal } from '../requests/request-shape.middleware.js';
import { BOARD_REQUESTS_SCRIPT_PATH } from './board-requests.controller.js';

@Injectable()
export class AdminAuthMiddleware implements NestMiddleware {
  constructor(private readonly authenticator: Authenticator) {}

  async use(request: Request, response: Response, next: NextFunction): Promise<void> {
    const refusal = writeRequestRefusal(request);
    if (refusal) {
      response.status(refusal[0]).json(refusal[1]);
      return;
    }
    try {
      await this.authenticator.authenticate(request, 'admin');
    } catch (error) {
      if (!(error instanceof AccessError)) return next(error);
      if (error.code === 'UNAUTHORIZED' && request.method === 'GET' && request.accepts(['json', 'html']) === 'html') {
        response.redirect(303, `/auth/login?next=${encodeURIComponent(request.originalUrl)}`);
        return;
      }
      response
        .status(error.code === 'UNAUTHORIZED' ? 401 : 403)
        .setHeader('www-authenticate', 'Bearer')
        .json({ code: error.code, message: error.message, field: null });
      return;
    }
    if (request.method === 'GET') withBoardRequestsScript(response);
    next();
  }
}

/** Adds the script that makes the board's bodyless actions JSON requests to the page Bull Board renders. */
function withBoardRequestsScript(response: Response): void {
  const send = response.send.bind(response);
  response.send = (body?: unknown) => {
    if (typeof body === 'string' && body.includes('</body>') && String(response.getHeader('content-type') ?? 'text/html').includes('html')) {
      return send(body.replace('</body>', `<script src="${BOARD_REQUESTS_SCRIPT_PATH}"></script></body>`));
    }
    return send(body);
  };
}
