/** GraphQL for run statistics: runStats reads its arguments as GET /v1/stats/runs reads its query. */
import { Args, ID, Query, Resolver } from '@nestjs/graphql';
import { Caller, type CallerContext } from '../auth/request-context.js';
import { StatsService } from './stats.service.js';
import { RunStatsType } from './stats.types.js';

@Resolver(() => RunStatsType)
export class StatsResolver {
  constructor(private readonly stats: StatsService) {}

  @Query(() => RunStatsType, { description: 'GET /v1/stats/runs: since and until are ISO 8601 instants, bucket is 1m, 1h or 1d.' })
  runStats(
    @Caller() caller: CallerContext,
    @Args('scheduleId', { type: () => ID, nullable: true }) scheduleId?: string | null,
    @Args('queue', { type: () => String, nullable: true }) queue?: string | null,
    @Args('since', { type: () => String, nullable: true }) since?: string | null,
    @Args('until', { type: () => String, nullable: true }) until?: string | null,
    @Args('bucket', { type: () => String, nullable: true }) bucket?: string | null,
  ) {
    return this.stats.runs(caller, { scheduleId, queue, since, until, bucket });
  }
}
