/** GraphQL runUpdated: the run view now and at each change, completing after the run ends (as GET /v1/runs/:id/stream). */
import { Args, ID, Resolver, Subscription } from '@nestjs/graphql';
import { Caller, type CallerContext } from '../auth/request-context.js';
import { RunStreamService } from './run-stream.service.js';
import { RunType } from './run.types.js';
import type { RunView } from './run.view.js';

@Resolver()
export class RunStreamResolver {
  constructor(private readonly streams: RunStreamService) {}

  @Subscription(() => RunType, {
    description: 'The run now, then again at each change (state, progress, steps, checkpoints); completes after the run has ended (GET /v1/runs/:id/stream).',
    resolve: (view: RunView) => view,
  })
  runUpdated(@Caller() caller: CallerContext, @Args('id', { type: () => ID }) id: string) {
    return this.streams.follow(caller, id);
  }
}
