/**
 * GraphQL object types of subscriptions (EventSubscription: GraphQL's own Subscription is its root of
 * live events) and their deliveries, field for field the REST wire shape
 * of subscriptions/subscription.view.ts. Each class `implements` its view type, so a field added
 * to REST and not here fails to compile.
 */
import { Field, ID, Int, ObjectType } from '@nestjs/graphql';
import { JsonScalar } from '../graphql/json.scalar.js';
import { DeliveryStateEnum, SubscriptionFormatEnum, SubscriptionStateEnum } from '../graphql/wire.enums.js';
import type { DeliveryAttemptView, SubscriptionDeliveryView, SubscriptionView } from './subscription.view.js';

@ObjectType('EventSubscriptionFilter', { description: 'Which events of the listed types are delivered: empty lists and maps let everything through.' })
export class SubscriptionFilterType {
  @Field(() => [ID]) scheduleIds!: string[];
  @Field(() => JsonScalar) labels!: Record<string, string>;
}

@ObjectType('EventSubscription', { description: 'A webhook told of the namespace\'s events (GET /v1/subscriptions/:id).' })
export class SubscriptionType implements SubscriptionView {
  @Field(() => ID) id!: string;
  @Field(() => String) url!: string;
  @Field(() => [String], { description: 'The event types delivered.' }) events!: SubscriptionView['events'];
  @Field(() => SubscriptionFilterType) filter!: SubscriptionFilterType;
  @Field(() => SubscriptionFormatEnum) format!: SubscriptionView['format'];
  @Field(() => String, { nullable: true }) description!: string | null;
  @Field(() => SubscriptionStateEnum) state!: SubscriptionView['state'];
  @Field(() => String, { nullable: true, description: 'Why it was disabled; null unless disabled.' }) disabledReason!: string | null;
  @Field(() => String, { nullable: true, description: 'Since when its oldest undelivered event has been failing.' }) failingSince!: string | null;
  @Field(() => String) createdAt!: string;
  @Field(() => String) updatedAt!: string;
}

@ObjectType('EventSubscriptionPage')
export class SubscriptionPageType {
  @Field(() => [SubscriptionType]) items!: SubscriptionType[];
  @Field(() => String, { nullable: true, description: 'Pass as `cursor` for the next page; null on the last page.' }) nextCursor!: string | null;
}

@ObjectType('DeliveryAttempt', { description: 'One HTTP attempt of a delivery.' })
export class DeliveryAttemptType implements DeliveryAttemptView {
  @Field(() => Int) attempt!: number;
  @Field(() => String) attemptedAt!: string;
  @Field(() => Int, { nullable: true, description: "The endpoint's HTTP status; null without an answer." }) statusCode!: number | null;
  @Field(() => Int) latencyMs!: number;
  @Field(() => String, { nullable: true }) error!: string | null;
}

@ObjectType('SubscriptionDelivery', { description: 'One event delivered (or being delivered) to a subscription (GET /v1/subscriptions/:id/deliveries).' })
export class SubscriptionDeliveryType implements SubscriptionDeliveryView {
  @Field(() => ID) id!: string;
  @Field(() => String, { description: "The body's id and the Idempotency-Key header." }) eventId!: string;
  @Field(() => String) eventType!: SubscriptionDeliveryView['eventType'];
  @Field(() => DeliveryStateEnum) state!: SubscriptionDeliveryView['state'];
  @Field(() => [DeliveryAttemptType]) attempts!: DeliveryAttemptType[];
  @Field(() => String, { nullable: true }) nextAttemptAt!: string | null;
  @Field(() => JsonScalar) body!: Record<string, unknown>;
  @Field(() => String) createdAt!: string;
  @Field(() => String, { nullable: true }) finishedAt!: string | null;
}

@ObjectType('SubscriptionDeliveryPage')
export class SubscriptionDeliveryPageType {
  @Field(() => [SubscriptionDeliveryType]) items!: SubscriptionDeliveryType[];
  @Field(() => String, { nullable: true, description: 'Pass as `cursor` for the next page; null on the last page.' }) nextCursor!: string | null;
}

@ObjectType('SubscriptionTestResult')
export class SubscriptionTestResultType {
  @Field(() => String, { description: 'The ping event; its delivery appears among the deliveries.' }) eventId!: string;
}
