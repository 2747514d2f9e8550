/** Resolves who is calling and which namespace the request may see. */
import { Inject, Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { DEFAULT_NAMESPACE_ID } from '@kairos/runtime';
import type { KairosRequest } from './request-context.js';

@Injectable()
export class CallerGuard implements CanActivate {
  constructor(@Inject(DEFAULT_NAMESPACE_ID) private readonly defaultNamespaceId: string) {}

  canActivate(context: ExecutionContext): boolean {
    if (context.getType() !== 'http') return true;
    const request = context.switchToHttp().getRequest<KairosRequest>();
    request.caller = { namespaceId: this.defaultNamespaceId, actor: 'api' };
    return true;
  }
}
