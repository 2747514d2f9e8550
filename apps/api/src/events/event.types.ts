/**
 * GraphQL object types of events, field for field the REST wire shape of events/event.view.ts.
 * Each class `implements` its view type, so a field added to REST and not here fails to compile.
 */
import { Field, ID, ObjectType } from '@nestjs/graphql';
import type { JsonValue } from '@kairos/domain';
import { BatchErrorType } from '../graphql/batch.types.js';
import { JsonScalar } from '../graphql/json.scalar.js';
import { ReasonCodeEnum } from '../graphql/wire.enums.js';
import type { EventViewShape } from './event.view.js';

type EventSkipView = EventViewShape['skipped'][number];

@ObjectType('EventSkip', { description: 'A schedule the event matched that made no run for it, and why (SCHEDULE_PAUSED, OVERLAP_SKIPPED).' })
export class EventSkipType implements EventSkipView {
  @Field(() => ID) scheduleId!: string;
  @Field(() => ReasonCodeEnum) reasonCode!: EventSkipView['reasonCode'];
}

@ObjectType('Event', { description: 'An event, with the runs it started, the schedules it skipped and the waits it resumed (GET /v1/events/:id).' })
export class EventType implements EventViewShape {
  @Field(() => String, { description: "The producer's id, or the one Kairos gave it." }) id!: string;
  @Field(() => String) name!: string;
  @Field(() => JsonScalar, { nullable: true, description: 'As sent.' }) data!: JsonValue;
  @Field(() => String) receivedAt!: string;
  @Field(() => Boolean, { description: 'True when the id was seen before: this is the first event with it, and nothing ran again.' }) deduped!: boolean;
  @Field(() => [ID], { description: 'The runs it started, one per matching schedule.' }) runs!: string[];
  @Field(() => [EventSkipType]) skipped!: EventSkipType[];
  @Field(() => [ID], { description: 'The runs waiting for it (ctx.waitForEvent) that it resumed.' }) resumed!: string[];
}

@ObjectType('EventPage')
export class EventPageType {
  @Field(() => [EventType]) items!: EventType[];
  @Field(() => String, { nullable: true, description: 'Pass as `cursor` for the next page; null on the last page.' }) nextCursor!: string | null;
}

@ObjectType('EventBatchItem', { description: 'One answer of sendEvents, in the order of its items: the event, or the refusal.' })
export class EventBatchItemType {
  @Field(() => EventType, { nullable: true, description: 'The event stored, or the first with its id (deduped: true); null when refused.' }) event!: EventType | null;
  @Field(() => BatchErrorType, { nullable: true }) error!: BatchErrorType | null;
}
