/** GraphQL for events: each field reads its arguments like the REST route does and calls the same use case. */
import { Args, Int, Mutation, Query, Resolver } from '@nestjs/graphql';
import type { JsonValue } from '@kairos/domain';
import { EventListQuery, readQuery } from '@kairos/domain/wire';
import { Caller, type CallerContext } from '../auth/request-context.js';
import { JsonScalar } from '../graphql/json.scalar.js';
import { refusalBody } from '../requests/batch.js';
import { EventBatchItemType, EventPageType, EventType } from './event.types.js';
import { EventsService } from './events.service.js';

const optionalInt = { type: () => Int, nullable: true } as const;
const optionalString = { type: () => String, nullable: true } as const;

@Resolver(() => EventType)
export class EventsResolver {
  constructor(private readonly events: EventsService) {}

  @Query(() => EventType, { description: 'GET /v1/events/:id' })
  event(@Caller() caller: CallerContext, @Args('id') id: string) {
    return this.events.get(caller, id);
  }

  @Query(() => EventPageType, { name: 'events', description: 'GET /v1/events: newest first; `name` keeps the events of that exact name.' })
  listEvents(
    @Caller() caller: CallerContext,
    @Args('name', optionalString) name?: string | null,
    @Args('limit', optionalInt) limit?: number | null,
    @Args('cursor', optionalString) cursor?: string | null,
  ) {
    const query = readQuery(EventListQuery, { name, limit, cursor });
    return this.events.list(caller, query.name ?? undefined, query.limit, query.cursor);
  }

  @Mutation(() => EventType, {
    description:
      'POST /v1/events: stores the event and starts a run of each schedule whose `on` matches it, and resumes the runs waiting for it. A repeated `id` answers the first event with deduped: true and starts nothing.',
  })
  sendEvent(
    @Caller() caller: CallerContext,
    @Args('name') name: string,
    @Args('data', { type: () => JsonScalar, nullable: true }) data?: JsonValue | null,
    @Args('id', optionalString) id?: string | null,
  ) {
    return this.events.send(caller, { name, ...(data === undefined ? {} : { data }), ...(id == null ? {} : { id }) });
  }

  @Mutation(() => [EventBatchItemType], {
    description: 'POST /v1/events/batch: each of `items` (at most 1,000) is a POST /v1/events body ({ name, data, id }); one answer per item, in order.',
  })
  async sendEvents(@Caller() caller: CallerContext, @Args('items', { type: () => [JsonScalar] }) items: JsonValue[]) {
    const settled = await this.events.sendBatch(caller, { items });
    return settled.map((s) => (s.ok ? { event: s.value, error: null } : { event: null, error: refusalBody(s.refusal) }));
  }
}
