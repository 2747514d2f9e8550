/** GraphQL for queue limits: each field reads its arguments like the REST route does and calls the same use case. */
import { Args, Int, Mutation, Query, Resolver } from '@nestjs/graphql';
import type { JsonValue } from '@kairos/domain';
import { Caller, type CallerContext } from '../auth/request-context.js';
import { JsonScalar } from '../graphql/json.scalar.js';
import { QueuePageType, QueueType } from './queue.types.js';
import { QueuesService } from './queues.service.js';

@Resolver(() => QueueType)
export class QueuesResolver {
  constructor(private readonly service: QueuesService) {}

  @Query(() => QueuePageType, { description: 'GET /v1/queues' })
  queues(@Caller() caller: CallerContext) {
    return this.service.list(caller);
  }

  @Query(() => QueueType, { description: 'GET /v1/queues/:name: any valid name (zero counts when unknown).' })
  queue(@Caller() caller: CallerContext, @Args('name') name: string) {
    return this.service.get(caller, name);
  }

  @Mutation(() => QueueType, {
    description: 'PUT /v1/queues/:name: `rate` is { max, per } (per a duration such as "1m"); null or absent lifts that limit, both lift every limit.',
  })
  setQueueLimits(
    @Caller() caller: CallerContext,
    @Args('name') name: string,
    @Args('maxRunning', { type: () => Int, nullable: true }) maxRunning?: number | null,
    @Args('rate', { type: () => JsonScalar, nullable: true }) rate?: JsonValue | null,
  ) {
    return this.service.set(caller, name, { maxRunning: maxRunning ?? null, rate: rate ?? null });
  }
}
