/** GraphQL for the stateless preview of an ad-hoc timing spec. */
import { Inject } from '@nestjs/common';
import { Args, Query, Resolver } from '@nestjs/graphql';
import { type JsonValue, formatInstant } from '@kairos/domain';
import type { DatabaseClock } from '@kairos/ledger';
import { DATABASE_CLOCK } from '@kairos/process';
import { previewSpec } from '@kairos/domain/wire';
import { dstView, type DstView } from '../wire/policy.view.js';
import { JsonScalar } from '../graphql/json.scalar.js';
import { DstPolicyType } from '../schedules/schedule.types.js';

@Resolver()
export class CronPreviewResolver {
  constructor(@Inject(DATABASE_CLOCK) private readonly clock: DatabaseClock) {}

  @Query(() => [String], { description: 'POST /v1/cron/preview: the next fire instants of `input` (the same JSON body), storing nothing.' })
  cronPreview(@Args('input', { type: () => JsonScalar }) input: JsonValue) {
    return previewSpec(input, this.clock.now()).fireTimes.map(formatInstant);
  }

  @Query(() => DstPolicyType, { description: 'The `dst` of POST /v1/cron/preview: the DST policy of `input` as given or defaulted, and what it resolves to.' })
  cronPreviewDst(@Args('input', { type: () => JsonScalar }) input: JsonValue): DstView {
    const preview = previewSpec(input, this.clock.now());
    return dstView(preview.cron, preview.dst);
  }
}
