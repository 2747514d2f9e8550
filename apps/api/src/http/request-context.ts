/** Who is calling: the namespace every query is scoped to. Set by the auth guard on each request. */
import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { Request } from 'express';

export interface CallerContext {
  namespaceId: string;
  /** Recorded as the actor of what the request changes. */
  actor: string;
}

export type KairosRequest = Request & { caller?: CallerContext };

export const Caller = createParamDecorator((_: unknown, ctx: ExecutionContext): CallerContext => {
  const request = ctx.switchToHttp().getRequest<KairosRequest>();
  return request.caller!;
});
