/** GraphQL for apply: its input is the body of POST /v1/apply, and it calls the same use case. */
import { Args, Mutation, Resolver } from '@nestjs/graphql';
import type { JsonValue } from '@kairos/domain';
import { Caller, type CallerContext } from '../auth/request-context.js';
import { JsonScalar } from '../graphql/json.scalar.js';
import { ApplyService } from './apply.service.js';
import { ApplyResultType } from './schedule.types.js';

@Resolver()
export class ApplyResolver {
  constructor(private readonly applies: ApplyService) {}

  @Mutation(() => ApplyResultType, {
    description: 'POST /v1/apply: `input` is its body ({ source, schedules, sensors, calendars, prune, dryRun }); the plan, applied in one transaction unless a dry run.',
  })
  apply(@Caller() caller: CallerContext, @Args('input', { type: () => JsonScalar }) input: JsonValue) {
    return this.applies.apply(caller, input);
  }
}
