/**
 * GraphQL object types of run statistics, field for field the REST wire shape RunStats; each class
 * `implements` its view type, so the two cannot drift.
 */
import { Field, Float, Int, ObjectType } from '@nestjs/graphql';
import type { RunStatsView } from './stats.service.js';

type BucketView = RunStatsView['buckets'][number];

@ObjectType('RunStatsBucket', { description: 'The runs that finished from `start` to the next bucket.' })
export class RunStatsBucketType implements BucketView {
  @Field(() => String, { description: 'The start of the bucket (ISO 8601, UTC).' }) start!: string;
  @Field(() => Int) succeeded!: number;
  @Field(() => Int, { description: 'Runs that ended in the terminal state failed (not an attempt that failed and retried).' }) failed!: number;
  @Field(() => Int) dead!: number;
  @Field(() => Int) cancelled!: number;
  @Field(() => Float, { nullable: true, description: 'Median of finishedAt − startedAt; null without a run that started.' }) durationP50Ms!: number | null;
  @Field(() => Float, { nullable: true, description: '95th percentile of finishedAt − startedAt.' }) durationP95Ms!: number | null;
  @Field(() => Float, { nullable: true, description: '95th percentile of startedAt − scheduledFor (an early start counts as 0).' }) latenessP95Ms!: number | null;
}

@ObjectType('RunStats')
export class RunStatsType implements RunStatsView {
  @Field(() => [RunStatsBucketType], { description: 'Every bucket of the window, oldest first, empty ones included.' }) buckets!: RunStatsBucketType[];
}
