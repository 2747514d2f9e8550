/** GraphQL for the worker registry, field for field GET /v1/workers. */
import { Args, Int, Query, Resolver } from '@nestjs/graphql';
import { PageQuery, readQuery } from '@kairos/domain/wire';
import { WorkerPageType } from './worker.types.js';
import { WorkersService } from './workers.service.js';

@Resolver()
export class WorkersResolver {
  constructor(private readonly registry: WorkersService) {}

  @Query(() => WorkerPageType, { description: 'GET /v1/workers' })
  workers(
    @Args('limit', { type: () => Int, nullable: true }) limit?: number | null,
    @Args('cursor', { type: () => String, nullable: true }) cursor?: string | null,
  ) {
    const query = readQuery(PageQuery, { limit, cursor });
    return this.registry.list(query.limit, query.cursor);
  }
}
