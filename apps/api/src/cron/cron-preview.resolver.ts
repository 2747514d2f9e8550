/** GraphQL for the stateless preview of an ad-hoc timing spec. */
import { Args, Query, Resolver } from '@nestjs/graphql';
import { type JsonValue, formatInstant } from '@kairos/domain';
import { Caller, type CallerContext } from '../auth/request-context.js';
import { dstView, type DstView } from '../wire/policy.view.js';
import { JsonScalar } from '../graphql/json.scalar.js';
import { DstPolicyType } from '../schedules/schedule.types.js';
import { CronPreviewService } from './cron-preview.service.js';

@Resolver()
export class CronPreviewResolver {
  constructor(private readonly previews: CronPreviewService) {}

  @Query(() => [String], { description: 'POST /v1/cron/preview: the next fire instants of `input` (the same JSON body), storing nothing.' })
  async cronPreview(@Caller() caller: CallerContext, @Args('input', { type: () => JsonScalar }) input: JsonValue) {
    return (await this.previews.preview(caller, input)).fireTimes.map(formatInstant);
  }

  @Query(() => [String], {
    nullable: true,
    description: 'The `excludedDates` of POST /v1/cron/preview: the local dates the calendar of `input` kept clear up to the last fire listed; null without a calendar.',
  })
  async cronPreviewExcludedDates(@Caller() caller: CallerContext, @Args('input', { type: () => JsonScalar }) input: JsonValue) {
    return (await this.previews.preview(caller, input)).excludedDates;
  }

  @Query(() => DstPolicyType, { description: 'The `dst` of POST /v1/cron/preview: the DST policy of `input` as given or defaulted, and what it resolves to.' })
  async cronPreviewDst(@Caller() caller: CallerContext, @Args('input', { type: () => JsonScalar }) input: JsonValue): Promise<DstView> {
    const preview = await this.previews.preview(caller, input);
    return dstView(preview.cron, preview.dst);
  }
}
