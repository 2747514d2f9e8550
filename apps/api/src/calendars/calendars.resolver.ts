/** GraphQL for calendars: each field reads its arguments like the REST route does and calls the same use case. */
import { Args, Int, Mutation, Query, Resolver } from '@nestjs/graphql';
import type { JsonValue } from '@kairos/domain';
import { CalendarDatesQuery, PageQuery, readQuery } from '@kairos/domain/wire';
import { Caller, type CallerContext } from '../auth/request-context.js';
import { JsonScalar } from '../graphql/json.scalar.js';
import { CalendarDatesType, CalendarPageType, CalendarType } from './calendar.types.js';
import { CalendarsService } from './calendars.service.js';

const optionalInt = { type: () => Int, nullable: true } as const;
const optionalString = { type: () => String, nullable: true } as const;

@Resolver(() => CalendarType)
export class CalendarsResolver {
  constructor(private readonly calendars: CalendarsService) {}

  @Query(() => CalendarType, { description: 'GET /v1/calendars/:name' })
  calendar(@Caller() caller: CallerContext, @Args('name') name: string) {
    return this.calendars.get(caller, name);
  }

  @Query(() => CalendarPageType, { name: 'calendars', description: 'GET /v1/calendars: by name.' })
  listCalendars(@Caller() caller: CallerContext, @Args('limit', optionalInt) limit?: number | null, @Args('cursor', optionalString) cursor?: string | null) {
    const query = readQuery(PageQuery, { limit, cursor });
    return this.calendars.list(caller, query.limit, query.cursor);
  }

  @Query(() => CalendarDatesType, { description: 'GET /v1/calendars/:name/dates: the dates it excludes from `from` to `to` (YYYY-MM-DD, inclusive; default the twelve months from today).' })
  calendarDates(@Caller() caller: CallerContext, @Args('name') name: string, @Args('from', optionalString) from?: string | null, @Args('to', optionalString) to?: string | null) {
    const query = readQuery(CalendarDatesQuery, { from, to });
    return this.calendars.dates(caller, name, query.from, query.to);
  }

  @Mutation(() => CalendarType, { description: 'POST /v1/calendars: `input` is the same JSON body.' })
  createCalendar(@Caller() caller: CallerContext, @Args('input', { type: () => JsonScalar }) input: JsonValue) {
    return this.calendars.create(caller, input);
  }

  @Mutation(() => CalendarType, { description: 'PUT /v1/calendars/:name: creates the calendar or replaces it; the schedules naming it are re-planned.' })
  async putCalendar(@Caller() caller: CallerContext, @Args('name') name: string, @Args('input', { type: () => JsonScalar }) input: JsonValue) {
    return (await this.calendars.upsert(caller, name, input)).view;
  }

  @Mutation(() => Boolean, { description: 'DELETE /v1/calendars/:name: CALENDAR_IN_USE while a schedule names it. Always true; an unknown name is an error.' })
  async deleteCalendar(@Caller() caller: CallerContext, @Args('name') name: string) {
    await this.calendars.remove(caller, name);
    return true;
  }
}
