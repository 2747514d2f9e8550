/**
 * GraphQL object types of calendars and the dates they exclude, field for field the REST wire
 * shape of calendars/calendars.service.ts. Each class `implements` its view type, so a field added
 * to REST and not here fails to compile.
 */
import { Field, Int, ObjectType } from '@nestjs/graphql';
import type { CalendarDatesView, CalendarView } from './calendars.service.js';

type HolidaysView = NonNullable<CalendarView['holidays']>;
type CalendarDateView = CalendarDatesView['items'][number];

@ObjectType('CalendarHolidays', { description: 'Public holidays of a country, and of its state and region, computed for each year a slot falls in.' })
export class CalendarHolidaysType implements HolidaysView {
  @Field(() => String, { description: 'An ISO 3166-1 alpha-2 code, e.g. "DE".' }) country!: string;
  @Field(() => String, { nullable: true, description: 'A state (or province) of the country, e.g. "BY".' }) state!: string | null;
  @Field(() => String, { nullable: true, description: 'A region of that state, as the holiday data names it.' }) region!: string | null;
}

@ObjectType('Calendar', { description: 'A calendar: the local dates it excludes from the schedules that name it (GET /v1/calendars/:name).' })
export class CalendarType implements CalendarView {
  @Field(() => String) name!: string;
  @Field(() => [String], { description: 'Its own dates (YYYY-MM-DD), ascending.' }) dates!: string[];
  @Field(() => CalendarHolidaysType, { nullable: true }) holidays!: CalendarHolidaysType | null;
  @Field(() => String, { nullable: true }) description!: string | null;
  @Field(() => Int, { description: 'How many schedules name it; it cannot be deleted while any does.' }) schedules!: number;
  @Field(() => String) createdAt!: string;
  @Field(() => String) updatedAt!: string;
}

@ObjectType('CalendarPage')
export class CalendarPageType {
  @Field(() => [CalendarType]) items!: CalendarType[];
  @Field(() => String, { nullable: true, description: 'Pass as `cursor` for the next page; null on the last page.' }) nextCursor!: string | null;
}

@ObjectType('CalendarDate', { description: 'One date a calendar excludes.' })
export class CalendarDateType implements CalendarDateView {
  @Field(() => String, { description: 'YYYY-MM-DD.' }) date!: string;
  @Field(() => String, { nullable: true, description: "The public holiday's name; null for a date the calendar lists itself." }) holiday!: string | null;
}

@ObjectType('CalendarDates', { description: 'The dates a calendar excludes between from and to (inclusive), ascending (GET /v1/calendars/:name/dates).' })
export class CalendarDatesType implements CalendarDatesView {
  @Field(() => String) from!: string;
  @Field(() => String) to!: string;
  @Field(() => [CalendarDateType]) items!: CalendarDateType[];
}
