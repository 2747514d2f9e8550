/** Resolves who is calling and which namespace the request may see, for REST routes and GraphQL operations alike. */
import { Inject, Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { DEFAULT_NAMESPACE_ID } from '@kairos/runtime';
import { requestOf } from './request-context.js';

@Injectable()
export class CallerGuard implements CanActivate {
  constructor(@Inject(DEFAULT_NAMESPACE_ID) private readonly defaultNamespaceId: string) {}

  canActivate(context: ExecutionContext): boolean {
    const request = requestOf(context);
    if (request) request.caller = { namespaceId: this.defaultNamespaceId, actor: 'api' };
    return true;
  }
}
