/** GraphQL for subscriptions: each field reads its arguments like the REST route does and calls the same use case. */
import { Args, ID, Int, Mutation, Query, Resolver } from '@nestjs/graphql';
import type { JsonValue } from '@kairos/domain';
import { PageQuery, readQuery } from '@kairos/domain/wire';
import { Caller, type CallerContext } from '../auth/request-context.js';
import { JsonScalar } from '../graphql/json.scalar.js';
import { SubscriptionDeliveryPageType, SubscriptionPageType, SubscriptionTestResultType, SubscriptionType } from './subscription.types.js';
import { SubscriptionsService } from './subscriptions.service.js';

const id = () => ID;
const optionalInt = { type: () => Int, nullable: true } as const;
const optionalString = { type: () => String, nullable: true } as const;

@Resolver(() => SubscriptionType)
export class SubscriptionsResolver {
  constructor(private readonly subscriptions: SubscriptionsService) {}

  @Query(() => SubscriptionType, { description: 'GET /v1/subscriptions/:id' })
  subscription(@Caller() caller: CallerContext, @Args('id', { type: id }) subscriptionId: string) {
    return this.subscriptions.get(caller, subscriptionId);
  }

  @Query(() => SubscriptionPageType, { name: 'subscriptions', description: 'GET /v1/subscriptions' })
  listSubscriptions(@Caller() caller: CallerContext, @Args('limit', optionalInt) limit?: number | null, @Args('cursor', optionalString) cursor?: string | null) {
    const query = readQuery(PageQuery, { limit, cursor });
    return this.subscriptions.list(caller, query.limit, query.cursor);
  }

  @Query(() => SubscriptionDeliveryPageType, { description: 'GET /v1/subscriptions/:id/deliveries: newest first, each with its attempts.' })
  subscriptionDeliveries(
    @Caller() caller: CallerContext,
    @Args('id', { type: id }) subscriptionId: string,
    @Args('limit', optionalInt) limit?: number | null,
    @Args('cursor', optionalString) cursor?: string | null,
  ) {
    const query = readQuery(PageQuery, { limit, cursor });
    return this.subscriptions.deliveries(caller, subscriptionId, query.limit, query.cursor);
  }

  @Mutation(() => SubscriptionType, { description: 'POST /v1/subscriptions: `input` is the same JSON body.' })
  createSubscription(@Caller() caller: CallerContext, @Args('input', { type: () => JsonScalar }) input: JsonValue) {
    return this.subscriptions.create(caller, input);
  }

  @Mutation(() => SubscriptionType, { description: 'PATCH /v1/subscriptions/:id: the given fields replace the stored ones.' })
  updateSubscription(@Caller() caller: CallerContext, @Args('id', { type: id }) subscriptionId: string, @Args('input', { type: () => JsonScalar }) input: JsonValue) {
    return this.subscriptions.patch(caller, subscriptionId, input);
  }

  @Mutation(() => Boolean, { description: 'DELETE /v1/subscriptions/:id: with its deliveries. Always true; an unknown id is an error.' })
  async deleteSubscription(@Caller() caller: CallerContext, @Args('id', { type: id }) subscriptionId: string) {
    await this.subscriptions.remove(caller, subscriptionId);
    return true;
  }

  @Mutation(() => SubscriptionType, { description: 'POST /v1/subscriptions/:id/pause' })
  pauseSubscription(@Caller() caller: CallerContext, @Args('id', { type: id }) subscriptionId: string) {
    return this.subscriptions.setPaused(caller, subscriptionId, true);
  }

  @Mutation(() => SubscriptionType, { description: 'POST /v1/subscriptions/:id/resume: a disabled subscription is enabled again.' })
  resumeSubscription(@Caller() caller: CallerContext, @Args('id', { type: id }) subscriptionId: string) {
    return this.subscriptions.setPaused(caller, subscriptionId, false);
  }

  @Mutation(() => SubscriptionTestResultType, { description: 'POST /v1/subscriptions/:id/test: a `ping` event for this subscription alone.' })
  testSubscription(@Caller() caller: CallerContext, @Args('id', { type: id }) subscriptionId: string) {
    return this.subscriptions.test(caller, subscriptionId);
  }
}
