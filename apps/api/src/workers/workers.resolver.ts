/** GraphQL for the worker registry, field for field GET /v1/workers. */
import { Args, Int, Query, Resolver } from '@nestjs/graphql';
import { optionalText, pageLimit } from '../wire/query.js';
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
    return this.registry.list(pageLimit(limit), optionalText(cursor, 'cursor'));
  }
}
