/** Bull Board shows and moves jobs of every namespace: it needs an API key with the admin scope. */
import { Injectable, type NestMiddleware } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { AccessError } from '@kairos/domain';
import { Authenticator } from '../auth/authenticator.js';

@Injectable()
export class AdminAuthMiddleware implements NestMiddleware {
  constructor(private readonly authenticator: Authenticator) {}

  async use(request: Request, response: Response, next: NextFunction): Promise<void> {
    try {
      await this.authenticator.authenticate(request.headers.authorization, 'admin');
      next();
    } catch (error) {
      if (!(error instanceof AccessError)) return next(error);
      response
        .status(error.code === 'UNAUTHORIZED' ? 401 : 403)
        .setHeader('www-authenticate', 'Bearer')
        .json({ code: error.code, message: error.message, field: null });
    }
  }
}
