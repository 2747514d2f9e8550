/**
 * GraphQL object types of schedules and their ticks, field for field the REST wire shape of
 * schedules/schedule.view.ts. Each class `implements` its view type, so a field added to REST and
 * not here fails to compile.
 */
import { Field, ID, Int, ObjectType } from '@nestjs/graphql';
import type { JsonValue, ResolvedDstPolicy } from '@kairos/domain';
import type { ScheduleView, TickView } from './schedule.view.js';
import type { BackfillResult } from './schedules.service.js';
import type { ApplyResult, PlanItem } from './apply.service.js';
import type { DstView, StepDefinitionView, TargetView } from '../wire/policy.view.js';
import { BatchErrorType } from '../graphql/batch.types.js';
import { JsonScalar } from '../graphql/json.scalar.js';
import {
  CatchupModeEnum,
  DstGapPolicyEnum,
  DstOverlapPolicyEnum,
  OnExcludedEnum,
  OverlapPolicyEnum,
  ReasonCodeEnum,
  ScheduleStatusEnum,
  StepWhenEnum,
  TickOriginEnum,
  TickOutcomeEnum,
} from '../graphql/wire.enums.js';
import { ConcurrencyType, FairnessType, RetryPolicyType, RunType } from '../runs/run.types.js';

@ObjectType('ResolvedDstPolicy', { description: 'The DST policy fire instants are computed with: `auto` decided for the cron expression.' })
export class ResolvedDstPolicyType implements ResolvedDstPolicy {
  @Field(() => String) gap!: ResolvedDstPolicy['gap'];
  @Field(() => String) overlap!: ResolvedDstPolicy['overlap'];
}

@ObjectType('DstPolicy')
export class DstPolicyType implements DstView {
  @Field(() => DstGapPolicyEnum) gap!: DstView['gap'];
  @Field(() => DstOverlapPolicyEnum) overlap!: DstView['overlap'];
  @Field(() => ResolvedDstPolicyType, { nullable: true, description: 'Null for intervals and one-shot timers, which DST does not touch.' })
  resolved!: ResolvedDstPolicyType | null;
  @Field(() => String, { description: 'What the policy means for this schedule, e.g. "gap auto (skip), overlap auto (both): ...".' })
  description!: string;
}

@ObjectType('CatchupPolicy')
export class CatchupPolicyType {
  @Field(() => CatchupModeEnum) mode!: ScheduleView['catchup']['mode'];
  @Field(() => String, { nullable: true }) window!: string | null;
  @Field(() => Int, { nullable: true }) limit!: number | null;
}

@ObjectType('Step', { description: 'One step of a multi-step definition, with its defaults filled in.' })
export class StepType implements StepDefinitionView {
  @Field(() => String) name!: string;
  @Field(() => [String]) dependsOn!: string[];
  @Field(() => StepWhenEnum) when!: StepDefinitionView['when'];
  @Field(() => JsonScalar) target!: TargetView;
  @Field(() => RetryPolicyType, { nullable: true, description: "Null: the run's (the schedule's)." }) retry!: RetryPolicyType | null;
  @Field(() => String, { nullable: true, description: "Null: the run's (the schedule's)." }) timeout!: string | null;
  @Field(() => ConcurrencyType, { nullable: true, description: 'Null: none.' }) concurrency!: ConcurrencyType | null;
  @Field(() => Int, { nullable: true, description: "1 (first) to 5; null: the run's." }) priority!: number | null;
  @Field(() => FairnessType, { nullable: true, description: "Null: the run's." }) fairness!: FairnessType | null;
}

@ObjectType('ScheduleExpectation', { description: "What each slot's run must do." })
export class ScheduleExpectationType {
  @Field(() => String, { description: 'Succeed within this long after the slot.' }) succeededWithin!: string;
}

@ObjectType('CalendarRule', { description: 'The local dates a schedule does not fire on.' })
export class CalendarRuleType {
  @Field(() => [String], { description: "The namespace's calendars whose dates hold no slot." }) exclude!: string[];
  @Field(() => Boolean, { description: 'Saturdays and Sundays are excluded too.' }) weekdaysOnly!: boolean;
  @Field(() => OnExcludedEnum) onExcluded!: 'skip' | 'previous' | 'next';
}

@ObjectType('EventTrigger', { description: 'The events that start a schedule.' })
export class EventTriggerType {
  @Field(() => String, { description: 'The event name.' }) event!: string;
  @Field(() => JsonScalar, { description: 'Dotted paths into the event and the JSON value each must equal; {}: every event of the name.' })
  match!: Record<string, JsonValue>;
}

@ObjectType('Debounce', { description: 'One run per key once `period` passed without a new event (the last wins), at most `maxWait` after the first.' })
export class DebounceType {
  @Field(() => String, { nullable: true, description: 'A template over the event; null: one key for the schedule.' }) key!: string | null;
  @Field(() => String) period!: string;
  @Field(() => String, { nullable: true }) maxWait!: string | null;
}

@ObjectType('WindowLimit', { description: 'At most `limit` runs per key in any window of `period` (throttle: start; rateLimit: made).' })
export class WindowLimitType {
  @Field(() => String, { nullable: true, description: 'A template over the event; null: one key for the schedule.' }) key!: string | null;
  @Field(() => Int) limit!: number;
  @Field(() => String) period!: string;
}

@ObjectType('Batch', { description: 'Events gathered per key into one run when `maxSize` are in, or `timeout` after the first.' })
export class BatchType {
  @Field(() => String, { nullable: true, description: 'A template over the event; null: one key for the schedule.' }) key!: string | null;
  @Field(() => Int) maxSize!: number;
  @Field(() => String) timeout!: string;
}

@ObjectType('Schedule', { description: 'A schedule: its definition with defaults filled in, and its cursor (GET /v1/schedules/:id).' })
export class ScheduleType implements ScheduleView {
  @Field(() => ID) id!: string;
  @Field(() => String) name!: string;
  @Field(() => String, { nullable: true }) cron!: string | null;
  @Field(() => String, { nullable: true }) every!: string | null;
  @Field(() => String, { nullable: true }) at!: string | null;
  @Field(() => EventTriggerType, { nullable: true, description: 'The events that start it; null for a schedule of the clock.' }) on!: EventTriggerType | null;
  @Field(() => DebounceType, { nullable: true }) debounce!: DebounceType | null;
  @Field(() => WindowLimitType, { nullable: true }) throttle!: WindowLimitType | null;
  @Field(() => WindowLimitType, { nullable: true }) rateLimit!: WindowLimitType | null;
  @Field(() => BatchType, { nullable: true }) batch!: BatchType | null;
  @Field(() => String) timezone!: string;
  @Field(() => DstPolicyType) dst!: DstPolicyType;
  @Field(() => CatchupPolicyType) catchup!: CatchupPolicyType;
  @Field(() => OverlapPolicyEnum) overlap!: ScheduleView['overlap'];
  @Field(() => JsonScalar, { nullable: true, description: 'What each run executes; null when it runs steps.' }) target!: TargetView | null;
  @Field(() => [StepType], { nullable: true, description: 'The graph of steps each run executes; null when it runs one target.' }) steps!: StepType[] | null;
  @Field(() => JsonScalar, { nullable: true }) payload!: JsonValue | null;
  @Field(() => RetryPolicyType) retry!: RetryPolicyType;
  @Field(() => String) timeout!: string;
  @Field(() => ConcurrencyType, { nullable: true, description: "Each run's concurrency key (a template over the payload) and limit." }) concurrency!: ConcurrencyType | null;
  @Field(() => Int, { description: "Each run's priority: 1 starts first, 5 last." }) priority!: number;
  @Field(() => FairnessType, { nullable: true, description: "Each run's fairness key (a template over the payload) and weight; null: none." }) fairness!: FairnessType | null;
  @Field(() => String, { nullable: true }) startAt!: string | null;
  @Field(() => String, { nullable: true }) endAt!: string | null;
  @Field(() => Int, { nullable: true }) maxRuns!: number | null;
  @Field(() => ScheduleExpectationType, { nullable: true, description: 'Null: nothing is expected.' }) expect!: ScheduleExpectationType | null;
  @Field(() => CalendarRuleType, { nullable: true, description: 'Null: every date.' }) calendar!: CalendarRuleType | null;
  @Field(() => String, { nullable: true, description: 'The first late slot of a lateness under way; null while deadlines are kept.' }) lateSince!: string | null;
  @Field(() => String) jitter!: string;
  @Field(() => Boolean) paused!: boolean;
  @Field(() => String, { nullable: true }) idempotencyKey!: string | null;
  @Field(() => JsonScalar) labels!: Record<string, string>;
  @Field(() => ScheduleStatusEnum) status!: ScheduleView['status'];
  @Field(() => String, { nullable: true }) nextFireAt!: string | null;
  @Field(() => String, { nullable: true }) lastFireAt!: string | null;
  @Field(() => Int) fireCount!: number;
  @Field(() => String) createdAt!: string;
  @Field(() => String) updatedAt!: string;
  @Field(() => Boolean, { description: 'True when createSchedule found an existing schedule with the same idempotencyKey and returned it.' })
  deduped!: boolean;
}

@ObjectType('SchedulePage')
export class SchedulePageType {
  @Field(() => [ScheduleType]) items!: ScheduleType[];
  @Field(() => String, { nullable: true, description: 'Pass as `cursor` for the next page; null on the last page.' }) nextCursor!: string | null;
}

@ObjectType('Tick', { description: 'One evaluated slot of a schedule and what came of it.' })
export class TickType implements TickView {
  @Field(() => String) scheduledFor!: string;
  @Field(() => TickOutcomeEnum) outcome!: TickView['outcome'];
  @Field(() => ReasonCodeEnum) reasonCode!: TickView['reasonCode'];
  @Field(() => String, { nullable: true }) reasonText!: string | null;
  @Field(() => ID, { nullable: true }) runId!: string | null;
  @Field(() => TickOriginEnum) origin!: TickView['origin'];
  @Field(() => String) createdAt!: string;
}

@ObjectType('TickPage')
export class TickPageType {
  @Field(() => [TickType]) items!: TickType[];
  @Field(() => String, { nullable: true, description: 'Pass as `cursor` for the next page; null on the last page.' }) nextCursor!: string | null;
}

@ObjectType('BackfillResult')
export class BackfillResultType implements BackfillResult {
  @Field(() => Int, { description: 'Slots of the schedule inside the range.' }) slots!: number;
  @Field(() => Int, { description: 'Runs created by this request.' }) created!: number;
  @Field(() => Int, { description: 'Slots skipped because a tick for them already existed.' }) alreadyTicked!: number;
  @Field(() => [RunType]) runs!: RunType[];
}

@ObjectType('ScheduleBatchItem', { description: 'One answer of createSchedules, in the order of its items: the schedule, or the refusal.' })
export class ScheduleBatchItemType {
  @Field(() => ScheduleType, { nullable: true, description: 'The schedule created, or found by its idempotency key (deduped: true); null when refused.' })
  schedule!: ScheduleType | null;
  @Field(() => BatchErrorType, { nullable: true }) error!: BatchErrorType | null;
}

@ObjectType('FieldChange', { description: 'One changed field of a definition, as a dotted path, with its value before and after (null when absent).' })
export class FieldChangeType {
  @Field(() => String) field!: string;
  @Field(() => JsonScalar, { nullable: true }) from!: JsonValue;
  @Field(() => JsonScalar, { nullable: true }) to!: JsonValue;
}

@ObjectType('ApplyPlanItem', { description: 'What an apply does, or would do, to one schedule (POST /v1/apply).' })
export class ApplyPlanItemType implements PlanItem {
  @Field(() => String) kind!: PlanItem['kind'];
  @Field(() => String) name!: string;
  @Field(() => String, { description: 'create, update, unchanged or delete.' }) action!: PlanItem['action'];
  @Field(() => [FieldChangeType]) changes!: FieldChangeType[];
}

@ObjectType('ApplyResult', { description: 'The plan of an apply and whether it was applied (false for a dry run).' })
export class ApplyResultType implements ApplyResult {
  @Field(() => [ApplyPlanItemType]) plan!: ApplyPlanItemType[];
  @Field(() => Boolean) applied!: boolean;
}

@ObjectType('ScheduleVersion', { description: "One version of a schedule's definition and the change that made it." })
export class ScheduleVersionType {
  @Field(() => Int) version!: number;
  @Field(() => String) specHash!: string;
  @Field(() => String, { nullable: true, description: 'The apply source that made it; null for a change through the API.' }) source!: string | null;
  @Field(() => String) actor!: string;
  @Field(() => String) appliedAt!: string;
  @Field(() => [FieldChangeType]) changes!: FieldChangeType[];
}

@ObjectType('ScheduleVersionPage')
export class ScheduleVersionPageType {
  @Field(() => [ScheduleVersionType]) items!: ScheduleVersionType[];
  @Field(() => String, { nullable: true, description: 'Pass as `cursor` for the next page; null on the last page.' }) nextCursor!: string | null;
}
