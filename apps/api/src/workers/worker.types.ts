/**
 * GraphQL object types of the worker registry, field for field the REST wire shape of
 * workers/worker.view.ts; each class `implements` its view type, so the two cannot drift.
 */
import { Field, Float, ObjectType } from '@nestjs/graphql';
import type { WorkerView } from './worker.view.js';

@ObjectType('Worker', { description: 'A worker that registered with the cluster; kept after it stops.' })
export class WorkerType implements WorkerView {
  @Field(() => String) id!: string;
  @Field(() => String) queue!: string;
  @Field(() => [String]) handlers!: string[];
  @Field(() => String) version!: string;
  @Field(() => String) startedAt!: string;
  @Field(() => String) lastSeenAt!: string;
  @Field(() => Float, { nullable: true, description: "The database's clock minus the worker host's, in ms, at its last heartbeat; null before it measured." })
  clockOffsetMs!: number | null;
}

@ObjectType('WorkerPage')
export class WorkerPageType {
  @Field(() => [WorkerType]) items!: WorkerType[];
  @Field(() => String, { nullable: true }) nextCursor!: string | null;
}
