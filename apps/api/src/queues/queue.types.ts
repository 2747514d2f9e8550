/**
 * GraphQL object types of queues, field for field the REST wire shape of queues/queue.view.ts; each
 * class `implements` its view type, so the two cannot drift.
 */
import { Field, Int, ObjectType } from '@nestjs/graphql';
import type { QueueView } from './queue.view.js';

type RateView = NonNullable<QueueView['rate']>;

@ObjectType('QueueRate', { description: 'At most `max` runs of the queue start in any window of `per`.' })
export class QueueRateType implements RateView {
  @Field(() => Int) max!: number;
  @Field(() => String, { description: 'A duration, e.g. "1m".' }) per!: string;
}

@ObjectType('QueuePriorityCount', { description: "A queue's runs in state queued at one priority." })
export class QueuePriorityCountType {
  @Field(() => Int, { description: '1 (starts first) to 5.' }) priority!: number;
  @Field(() => Int) queued!: number;
}

@ObjectType('QueueFairnessKeyCount', { description: "A fairness key's runs in state queued on a queue." })
export class QueueFairnessKeyCountType {
  @Field(() => String) key!: string;
  @Field(() => Int) queued!: number;
}

@ObjectType('Queue', { description: "A queue of the caller's namespace: its limits, its runs running, queued and held, its queued runs by priority and fairness key, and its live workers." })
export class QueueType implements QueueView {
  @Field(() => String) name!: string;
  @Field(() => Int, { nullable: true, description: 'At most this many of its runs run at once; null: no limit.' }) maxRunning!: number | null;
  @Field(() => QueueRateType, { nullable: true, description: 'Null: no rate limit.' }) rate!: QueueRateType | null;
  @Field(() => Int) running!: number;
  @Field(() => Int, { description: 'Due and waiting for a worker, not held back.' }) queued!: number;
  @Field(() => Int, { description: "Held back by a limit until a place frees, until a worker of their version runs (VERSION_UNAVAILABLE), or until their fairness key's turn (FAIR_SHARE)." })
  held!: number;
  @Field(() => [QueuePriorityCountType], { description: 'Its runs in state queued (due or not, held or not) by priority: five items, priority 1 first.' })
  queuedByPriority!: QueuePriorityCountType[];
  @Field(() => [QueueFairnessKeyCountType], { description: 'The (at most 10) fairness keys with the most of its queued runs, most first, ties by key; runs without a key are left out.' })
  fairnessKeys!: QueueFairnessKeyCountType[];
  @Field(() => Int, { description: 'Live workers of the queue: seen in the last minute and not stopped.' }) workers!: number;
  @Field(() => String, { nullable: true, description: 'When its limits were last set; null without limits.' }) updatedAt!: string | null;
}

@ObjectType('QueuePage')
export class QueuePageType {
  @Field(() => [QueueType]) items!: QueueType[];
  @Field(() => String, { nullable: true, description: 'Always null: every queue is on the one page.' }) nextCursor!: string | null;
}
