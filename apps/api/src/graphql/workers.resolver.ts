/** GraphQL for the worker registry, field for field GET /v1/workers. */
import { Args, Field, Int, ObjectType, Query, Resolver } from '@nestjs/graphql';
import { pageLimit, optionalText } from '../http/query.js';
import { WorkersService, type WorkerView } from '../workers/workers.service.js';

@ObjectType('Worker', { description: 'A worker that registered with the cluster; kept after it stops.' })
export class WorkerType implements WorkerView {
  @Field(() => String) id!: string;
  @Field(() => String) queue!: string;
  @Field(() => [String]) handlers!: string[];
  @Field(() => String) version!: string;
  @Field(() => String) startedAt!: string;
  @Field(() => String) lastSeenAt!: string;
}

@ObjectType('WorkerPage')
export class WorkerPageType {
  @Field(() => [WorkerType]) items!: WorkerType[];
  @Field(() => String, { nullable: true }) nextCursor!: string | null;
}

@Resolver()
export class WorkersResolver {
  constructor(private readonly registry: WorkersService) {}

  @Query(() => WorkerPageType, { description: 'GET /v1/workers' })
  workers(
    @Args('limit', { type: () => Int, nullable: true }) limit?: number | null,
    @Args('cursor', { type: () => String, nullable: true }) cursor?: string | null,
  ) {
    return this.registry.list(pageLimit(limit), optionalText(cursor));
  }
}
