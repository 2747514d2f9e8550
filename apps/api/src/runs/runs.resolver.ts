/** GraphQL for runs, their events (a field and a subscription) and ad-hoc runs; the same use cases as REST. */
import { Args, ID, Int, Mutation, Parent, Query, ResolveField, Resolver, Subscription } from '@nestjs/graphql';
import type { JsonValue } from '@kairos/domain';
import { readQuery, RunListQuery } from '@kairos/domain/wire';
import { Caller, type CallerContext } from '../auth/request-context.js';
import { refusalBody } from '../requests/batch.js';
import type { RunEventView } from './run.view.js';
import { RunsBulkService } from './runs-bulk.service.js';
import { RunsService } from './runs.service.js';
import { RunBulkResultType } from './run-bulk.types.js';
import { JsonScalar } from '../graphql/json.scalar.js';
import { RunStateEnum } from '../graphql/wire.enums.js';
import { AttemptType, RunBatchItemType, RunEventType, RunPageType, RunType, SignalResultType } from './run.types.js';

const id = () => ID;

@Resolver(() => RunType)
export class RunsResolver {
  constructor(
    private readonly runs: RunsService,
    private readonly bulk: RunsBulkService,
  ) {}

  @Query(() => RunType, { description: 'GET /v1/runs/:id' })
  run(@Caller() caller: CallerContext, @Args('id', { type: id }) runId: string) {
    return this.runs.get(caller, runId);
  }

  @Query(() => RunPageType, { name: 'runs', description: 'GET /v1/runs, newest first.' })
  listRuns(
    @Caller() caller: CallerContext,
    @Args('scheduleId', { type: id, nullable: true }) scheduleId?: string | null,
    @Args('state', { type: () => RunStateEnum, nullable: true }) state?: string | null,
    @Args('limit', { type: () => Int, nullable: true }) limit?: number | null,
    @Args('cursor', { type: () => String, nullable: true }) cursor?: string | null,
  ) {
    const query = readQuery(RunListQuery, { scheduleId, state, limit, cursor });
    return this.runs.list(caller, { scheduleId: query.scheduleId, state: query.state }, query.limit, query.cursor);
  }

  /** GET /v1/runs/:id/events, read only when asked for. */
  @ResolveField(() => [RunEventType], { description: 'The run\'s transition history, oldest first (GET /v1/runs/:id/events).' })
  async events(@Caller() caller: CallerContext, @Parent() run: RunType) {
    return (await this.runs.events(caller, run.id)).items;
  }

  /** The attempts GET /v1/runs/:id carries, read only when asked for. */
  @ResolveField(() => [AttemptType], { description: 'Each execution attempt, read from the run events.' })
  attempts(@Caller() caller: CallerContext, @Parent() run: RunType) {
    return this.runs.attempts(caller, run.id);
  }

  @Mutation(() => RunType, {
    description: 'POST /v1/runs: `input` is the same JSON body (target or steps, payload, retry, timeout, availableAt, idempotencyKey).',
  })
  createRun(@Caller() caller: CallerContext, @Args('input', { type: () => JsonScalar }) input: JsonValue) {
    return this.runs.create(caller, input);
  }

  @Mutation(() => [RunBatchItemType], {
    description: 'POST /v1/runs/batch: each of `items` (at most 1,000) is a createRun input; one answer per item, in order.',
  })
  async createRuns(@Caller() caller: CallerContext, @Args('items', { type: () => [JsonScalar] }) items: JsonValue[]) {
    const settled = await this.runs.createBatch(caller, { items });
    return settled.map((s) => (s.ok ? { run: s.value, deduped: s.value.deduped, error: null } : { run: null, deduped: null, error: refusalBody(s.refusal) }));
  }

  @Mutation(() => RunType, { description: 'POST /v1/runs/:id/cancel' })
  cancelRun(@Caller() caller: CallerContext, @Args('id', { type: id }) runId: string) {
    return this.runs.cancel(caller, runId);
  }

  @Mutation(() => SignalResultType, { description: 'POST /v1/runs/:id/signals/:name: `body` (any JSON) goes to the run\'s ctx.waitForSignal(name).' })
  sendSignal(
    @Caller() caller: CallerContext,
    @Args('runId', { type: id }) runId: string,
    @Args('name', { type: () => String }) name: string,
    @Args('body', { type: () => JsonScalar, nullable: true }) body?: JsonValue | null,
  ) {
    return this.runs.signal(caller, runId, name, body ?? null);
  }

  @Mutation(() => RunType, { description: 'POST /v1/runs/:id/version: the version whose workers may claim the run from now on; null: any version.' })
  moveRunVersion(
    @Caller() caller: CallerContext,
    @Args('id', { type: id }) runId: string,
    @Args('version', { type: () => String, nullable: true }) version: string | null,
  ) {
    return this.runs.moveVersion(caller, runId, { version });
  }

  @Mutation(() => RunType, { description: 'POST /v1/runs/:id/retry: a fresh run of a failed, dead or cancelled run.' })
  retryRun(@Caller() caller: CallerContext, @Args('id', { type: id }) runId: string) {
    return this.runs.retry(caller, runId);
  }

  @Mutation(() => RunBulkResultType, {
    description:
      'POST /v1/runs/bulk: `action` is "cancel" or "retry"; `filter` the same JSON object (scheduleId, state, reasonCode, queue, createdAfter, createdBefore; at least one set); `dryRun` counts and changes nothing.',
  })
  bulkRuns(
    @Caller() caller: CallerContext,
    @Args('action', { type: () => String }) action: string,
    @Args('filter', { type: () => JsonScalar }) filter: JsonValue,
    @Args('dryRun', { type: () => Boolean, nullable: true }) dryRun?: boolean | null,
  ) {
    return this.bulk.bulk(caller, { action, filter, dryRun: dryRun ?? false });
  }

  @Subscription(() => RunEventType, {
    description: 'The run\'s events as they are recorded: those so far, then each new one; completes after the event of its terminal transition.',
    resolve: (event: RunEventView) => event,
  })
  runEvents(@Caller() caller: CallerContext, @Args('runId', { type: id }) runId: string) {
    return this.runs.followEvents(caller, runId);
  }
}
