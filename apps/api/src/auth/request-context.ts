/** Who is calling: the namespace every query is scoped to. Set by the auth guard on each request, REST or GraphQL. */
import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import { GqlExecutionContext, type GqlContextType } from '@nestjs/graphql';
import type { Request } from 'express';
import type { ApiScope } from '@kairos/domain';

export interface CallerContext {
  namespaceId: string;
  /** Recorded as the actor of what the request changes. */
  actor: string;
  scopes: ApiScope[];
}

export type KairosRequest = Request & { caller?: CallerContext };

/** The GraphQL context: the HTTP request of a query or mutation, the WebSocket upgrade request of a subscription. */
export interface GraphqlContext {
  req: KairosRequest;
}

/** The request behind a REST route or a GraphQL operation; undefined for any other kind of context. */
export function requestOf(ctx: ExecutionContext): KairosRequest | undefined {
  const type = ctx.getType<GqlContextType>();
  if (type === 'http') return ctx.switchToHttp().getRequest<KairosRequest>();
  if (type === 'graphql') return GqlExecutionContext.create(ctx).getContext<GraphqlContext>().req;
  return undefined;
}

export const Caller = createParamDecorator((_: unknown, ctx: ExecutionContext): CallerContext => requestOf(ctx)!.caller!);
