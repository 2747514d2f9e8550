/**
 * Resolves who is calling and which namespace the request may see, for REST routes and GraphQL
 * operations alike, and checks the scope the request needs: reads need `read`, anything that
 * changes state needs `write` (a route may say otherwise with @RequiresScope).
 */
import { Injectable, SetMetadata, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { GqlExecutionContext, type GqlContextType } from '@nestjs/graphql';
import type { ApiScope } from '@kairos/domain';
import { PUBLIC_ROUTE } from '@kairos/process';
import { Authenticator } from './authenticator.js';
import { requestOf } from './request-context.js';

const REQUIRED_SCOPE = 'kairos:required-scope';

/** The scope a route needs when its HTTP method says otherwise (a POST that only reads). */
export const RequiresScope = (scope: ApiScope): MethodDecorator & ClassDecorator => SetMetadata(REQUIRED_SCOPE, scope);

@Injectable()
export class CallerGuard implements CanActivate {
  constructor(
    private readonly authenticator: Authenticator,
    private readonly reflector: Reflector,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const targets = [context.getHandler(), context.getClass()];
    if (this.reflector.getAllAndOverride<boolean>(PUBLIC_ROUTE, targets)) return true;
    const request = requestOf(context);
    if (!request) return true;
    const needed = this.reflector.getAllAndOverride<ApiScope>(REQUIRED_SCOPE, targets) ?? this.neededScope(context, request.method);
    request.caller = await this.authenticator.authenticate(request, needed);
    return true;
  }

  private neededScope(context: ExecutionContext, method: string): ApiScope {
    if (context.getType<GqlContextType>() === 'graphql') {
      const operation = GqlExecutionContext.create(context).getInfo<{ operation: { operation: string } }>().operation.operation;
      return operation === 'mutation' ? 'write' : 'read';
    }
    return method === 'GET' || method === 'HEAD' ? 'read' : 'write';
  }
}
