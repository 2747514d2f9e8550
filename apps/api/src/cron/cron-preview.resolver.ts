/** GraphQL for the stateless preview of an ad-hoc timing spec. */
import { Args, Query, Resolver } from '@nestjs/graphql';
import { previewSpec, type JsonValue, formatInstant } from '@kairos/domain';
import { JsonScalar } from '../graphql/json.scalar.js';

@Resolver()
export class CronPreviewResolver {
  @Query(() => [String], { description: 'POST /v1/cron/preview: the next fire instants of `input` (the same JSON body), storing nothing.' })
  cronPreview(@Args('input', { type: () => JsonScalar }) input: JsonValue) {
    return previewSpec(input, Date.now()).map(formatInstant);
  }
}
