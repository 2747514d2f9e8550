/** GraphQL for schedules: each field reads its arguments like the REST route does and calls the same use case. */
import { Args, ID, Int, Mutation, Query, Resolver } from '@nestjs/graphql';
import type { JsonValue } from '@kairos/domain';
import { PageQuery, PreviewQuery, readQuery, ScheduleListQuery } from '@kairos/domain/wire';
import { Caller, type CallerContext } from '../auth/request-context.js';
import { refusalBody } from '../requests/batch.js';
import { tickView } from './schedule.view.js';
import { SchedulesService } from './schedules.service.js';
import { JsonScalar } from '../graphql/json.scalar.js';
import { ScheduleStatusEnum } from '../graphql/wire.enums.js';
import { RunType } from '../runs/run.types.js';
import { BackfillResultType, ScheduleBatchItemType, SchedulePageType, ScheduleType, ScheduleVersionPageType, TickPageType } from './schedule.types.js';

const id = () => ID;
const optionalInt = { type: () => Int, nullable: true } as const;
const optionalString = { type: () => String, nullable: true } as const;

@Resolver(() => ScheduleType)
export class SchedulesResolver {
  constructor(private readonly schedules: SchedulesService) {}

  @Query(() => ScheduleType, { description: 'GET /v1/schedules/:id' })
  schedule(@Caller() caller: CallerContext, @Args('id', { type: id }) scheduleId: string) {
    return this.schedules.get(caller, scheduleId);
  }

  @Query(() => SchedulePageType, { name: 'schedules', description: 'GET /v1/schedules. `label` filters on one label, written key:value.' })
  listSchedules(
    @Caller() caller: CallerContext,
    @Args('limit', optionalInt) limit?: number | null,
    @Args('cursor', optionalString) cursor?: string | null,
    @Args('status', { type: () => ScheduleStatusEnum, nullable: true }) status?: string | null,
    @Args('name', optionalString) name?: string | null,
    @Args('label', optionalString) label?: string | null,
  ) {
    const query = readQuery(ScheduleListQuery, { limit, cursor, status, name, label });
    return this.schedules.list(caller, { status: query.status, name: query.name, label: query.label }, query.limit, query.cursor);
  }

  @Query(() => [String], { description: 'GET /v1/schedules/:id/preview: the next fire instants (default 10) after `after` (default now).' })
  async schedulePreview(
    @Caller() caller: CallerContext,
    @Args('id', { type: id }) scheduleId: string,
    @Args('count', optionalInt) count?: number | null,
    @Args('after', optionalString) after?: string | null,
  ) {
    const query = readQuery(PreviewQuery, { count, after });
    return (await this.schedules.preview(caller, scheduleId, query.count, query.after)).fireTimes;
  }

  @Query(() => [String], {
    nullable: true,
    description: "The `excludedDates` of GET /v1/schedules/:id/preview: the local dates the schedule's calendar kept clear up to the last fire listed; null without a calendar.",
  })
  async schedulePreviewExcludedDates(
    @Caller() caller: CallerContext,
    @Args('id', { type: id }) scheduleId: string,
    @Args('count', optionalInt) count?: number | null,
    @Args('after', optionalString) after?: string | null,
  ) {
    const query = readQuery(PreviewQuery, { count, after });
    return (await this.schedules.preview(caller, scheduleId, query.count, query.after)).excludedDates ?? null;
  }

  @Query(() => TickPageType, { description: 'GET /v1/schedules/:id/ticks' })
  async scheduleTicks(
    @Caller() caller: CallerContext,
    @Args('id', { type: id }) scheduleId: string,
    @Args('limit', optionalInt) limit?: number | null,
    @Args('cursor', optionalString) cursor?: string | null,
  ) {
    const query = readQuery(PageQuery, { limit, cursor });
    const page = await this.schedules.ticks(caller, scheduleId, query.limit, query.cursor);
    return { items: page.items.map(tickView), nextCursor: page.nextCursor };
  }

  @Query(() => ScheduleVersionPageType, { description: 'GET /v1/schedules/:id/versions' })
  scheduleVersions(
    @Caller() caller: CallerContext,
    @Args('id', { type: id }) scheduleId: string,
    @Args('limit', optionalInt) limit?: number | null,
    @Args('cursor', optionalString) cursor?: string | null,
  ) {
    const query = readQuery(PageQuery, { limit, cursor });
    return this.schedules.versions(caller, scheduleId, query.limit, query.cursor);
  }

  @Mutation(() => ScheduleType, {
    description: 'POST /v1/schedules: `input` is the same JSON body. A repeated idempotencyKey returns the existing schedule with deduped: true.',
  })
  createSchedule(@Caller() caller: CallerContext, @Args('input', { type: () => JsonScalar }) input: JsonValue) {
    return this.schedules.create(caller, input);
  }

  @Mutation(() => [ScheduleBatchItemType], {
    description: 'POST /v1/schedules/batch: each of `items` (at most 1,000) is a createSchedule input; one answer per item, in order.',
  })
  async createSchedules(@Caller() caller: CallerContext, @Args('items', { type: () => [JsonScalar] }) items: JsonValue[]) {
    const settled = await this.schedules.createBatch(caller, { items });
    return settled.map((s) => (s.ok ? { schedule: s.value, error: null } : { schedule: null, error: refusalBody(s.refusal) }));
  }

  @Mutation(() => ScheduleType, { description: 'PUT /v1/schedules/by-name/:name: creates the schedule or replaces its definition.' })
  async upsertSchedule(@Caller() caller: CallerContext, @Args('name') name: string, @Args('input', { type: () => JsonScalar }) input: JsonValue) {
    return (await this.schedules.upsertByName(caller, name, input)).view;
  }

  @Mutation(() => ScheduleType, { description: 'PATCH /v1/schedules/:id: the given fields replace the stored ones.' })
  updateSchedule(@Caller() caller: CallerContext, @Args('id', { type: id }) scheduleId: string, @Args('input', { type: () => JsonScalar }) input: JsonValue) {
    return this.schedules.patch(caller, scheduleId, input);
  }

  @Mutation(() => Boolean, { description: 'DELETE /v1/schedules/:id: its queued runs are cancelled, running ones finish. Always true; an unknown id is an error.' })
  async deleteSchedule(@Caller() caller: CallerContext, @Args('id', { type: id }) scheduleId: string) {
    await this.schedules.remove(caller, scheduleId);
    return true;
  }

  @Mutation(() => ScheduleType, { description: 'POST /v1/schedules/:id/pause' })
  pauseSchedule(@Caller() caller: CallerContext, @Args('id', { type: id }) scheduleId: string) {
    return this.schedules.setPaused(caller, scheduleId, true);
  }

  @Mutation(() => ScheduleType, { description: 'POST /v1/schedules/:id/resume' })
  resumeSchedule(@Caller() caller: CallerContext, @Args('id', { type: id }) scheduleId: string) {
    return this.schedules.setPaused(caller, scheduleId, false);
  }

  @Mutation(() => RunType, { description: 'POST /v1/schedules/:id/trigger: runs it now; `input` may carry overlap and payload.' })
  triggerSchedule(
    @Caller() caller: CallerContext,
    @Args('id', { type: id }) scheduleId: string,
    @Args('input', { type: () => JsonScalar, nullable: true }) input?: JsonValue,
  ) {
    return this.schedules.trigger(caller, scheduleId, input ?? undefined);
  }

  @Mutation(() => BackfillResultType, { description: 'POST /v1/schedules/:id/backfill: `input` is { from, to, overlap? }.' })
  backfillSchedule(@Caller() caller: CallerContext, @Args('id', { type: id }) scheduleId: string, @Args('input', { type: () => JsonScalar }) input: JsonValue) {
    return this.schedules.backfill(caller, scheduleId, input);
  }
}
