/** GraphQL for dead letters: runs that ended dead, and republishing them. */
import { Args, ID, Int, Mutation, Query, Resolver } from '@nestjs/graphql';
import { DeadLetterListQuery, readQuery } from '@kairos/domain/wire';
import { Caller, type CallerContext } from '../auth/request-context.js';
import { RunsService } from '../runs/runs.service.js';
import { RunPageType, RunType } from '../runs/run.types.js';

@Resolver()
export class DeadLettersResolver {
  constructor(private readonly runs: RunsService) {}

  @Query(() => RunPageType, { description: 'GET /v1/dead-letters' })
  deadLetters(
    @Caller() caller: CallerContext,
    @Args('scheduleId', { type: () => ID, nullable: true }) scheduleId?: string | null,
    @Args('limit', { type: () => Int, nullable: true }) limit?: number | null,
    @Args('cursor', { type: () => String, nullable: true }) cursor?: string | null,
  ) {
    const query = readQuery(DeadLetterListQuery, { scheduleId, limit, cursor });
    return this.runs.list(caller, { scheduleId: query.scheduleId, state: 'dead' }, query.limit, query.cursor);
  }

  @Mutation(() => RunType, { description: 'POST /v1/dead-letters/:id/republish: a fresh run (origin republish) of the dead run\'s target and payload.' })
  republishDeadLetter(@Caller() caller: CallerContext, @Args('id', { type: () => ID }) runId: string) {
    return this.runs.rerun(caller, runId, 'republish');
  }
}
