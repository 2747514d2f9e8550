/**
 * GraphQL object types of runs, field for field the REST wire shape of runs/run.view.ts. Each class
 * `implements` its view type, so a field added to REST and not here fails to compile.
 */
import { Field, Float, ID, Int, ObjectType } from '@nestjs/graphql';
import type { JsonValue } from '@kairos/domain';
import type { RetryView, TargetView } from '../wire/policy.view.js';
import type { AttemptView, CheckpointView, RunEventView, RunStepView, RunView } from './run.view.js';
import { BatchErrorType } from '../graphql/batch.types.js';
import { JsonScalar } from '../graphql/json.scalar.js';
import { AttemptOutcomeEnum, BackoffTypeEnum, CheckpointKindEnum, CheckpointStateEnum, ReasonCodeEnum, RunEventKindEnum, RunOriginEnum, RunStateEnum, StepStateEnum, StepWhenEnum } from '../graphql/wire.enums.js';

@ObjectType('Backoff')
export class BackoffType {
  @Field(() => BackoffTypeEnum) type!: RetryView['backoff']['type'];
  @Field(() => String) base!: string;
  @Field(() => String) max!: string;
  @Field(() => Float) jitter!: number;
}

@ObjectType('Concurrency', { description: 'A concurrency key and its limit: at most `limit` runs holding the key run at once in the namespace.' })
export class ConcurrencyType {
  @Field(() => String, { description: 'On a run, resolved from its payload; on a schedule or step, the template as declared.' }) key!: string;
  @Field(() => Int) limit!: number;
}

@ObjectType('Fairness', { description: 'A fairness key and its weight: within a priority, the keys with runs due on a queue take starts in proportion to their weights.' })
export class FairnessType {
  @Field(() => String, { description: 'On a schedule, sensor or step, the template as declared.' }) key!: string;
  @Field(() => Int, { description: '1 to 100.' }) weight!: number;
}

@ObjectType('RetryPolicy')
export class RetryPolicyType {
  @Field(() => Int) maxAttempts!: number;
  @Field(() => BackoffType) backoff!: BackoffType;
}

@ObjectType('RunEvent', { description: 'One transition of a run, as recorded in the ledger (GET /v1/runs/:id/events).' })
export class RunEventType implements RunEventView {
  /** A bigint in the ledger; Float (like the REST JSON number) is exact up to 2^53, where Int would stop at 2^31. */
  @Field(() => Float) id!: number;
  @Field(() => String) at!: string;
  @Field(() => RunEventKindEnum) kind!: RunEventView['kind'];
  @Field(() => RunStateEnum, { nullable: true }) fromState!: RunEventView['fromState'];
  @Field(() => RunStateEnum, { nullable: true }) toState!: RunEventView['toState'];
  @Field(() => Int, { nullable: true }) leaseEpoch!: number | null;
  @Field(() => String) actor!: string;
  @Field(() => ReasonCodeEnum, { nullable: true }) reasonCode!: RunEventView['reasonCode'];
  @Field(() => JsonScalar) detail!: Record<string, unknown>;
}

@ObjectType('Attempt', { description: 'One execution attempt: a claim at a new lease epoch and the event that ended it.' })
export class AttemptType implements AttemptView {
  @Field(() => Int) attempt!: number;
  @Field(() => Int) leaseEpoch!: number;
  @Field(() => String) worker!: string;
  @Field(() => String) startedAt!: string;
  @Field(() => String, { nullable: true }) finishedAt!: string | null;
  @Field(() => AttemptOutcomeEnum, { nullable: true }) outcome!: AttemptView['outcome'];
  @Field(() => ReasonCodeEnum, { nullable: true }) reasonCode!: AttemptView['reasonCode'];
  @Field(() => JsonScalar, { nullable: true }) error!: Record<string, unknown> | null;
  @Field(() => JsonScalar, { nullable: true }) response!: Record<string, unknown> | null;
}

@ObjectType('RunStep', { description: 'One step of a multi-step run, frozen when the run was created, and where it stands.' })
export class RunStepType implements RunStepView {
  @Field(() => String) name!: string;
  @Field(() => [String]) dependsOn!: string[];
  @Field(() => StepWhenEnum) when!: RunStepView['when'];
  @Field(() => StepStateEnum) state!: RunStepView['state'];
  @Field(() => Int) attempt!: number;
  @Field(() => Int) maxAttempts!: number;
  @Field(() => JsonScalar, { nullable: true, description: 'What the step returned, once succeeded: the `inputs` of the steps after it.' }) result!: JsonValue | null;
  @Field(() => JsonScalar, { nullable: true }) error!: Record<string, unknown> | null;
  @Field(() => ReasonCodeEnum, { nullable: true }) reasonCode!: RunStepView['reasonCode'];
  @Field(() => String, { nullable: true }) reasonText!: string | null;
  @Field(() => String, { nullable: true }) startedAt!: string | null;
  @Field(() => String, { nullable: true }) finishedAt!: string | null;
  @Field(() => ID, { description: "The step's own run (its events tell its story)." }) runId!: string;
}

@ObjectType('Checkpoint', { description: "One checkpoint of a run's durable function (ctx.step, ctx.sleep, ctx.waitForSignal)." })
export class CheckpointType implements CheckpointView {
  @Field(() => String) name!: string;
  @Field(() => CheckpointKindEnum) kind!: CheckpointView['kind'];
  @Field(() => CheckpointStateEnum) state!: CheckpointView['state'];
  @Field(() => JsonScalar, { nullable: true, description: "A step's stored result, or the signal's body." }) result!: JsonValue | null;
  @Field(() => String) startedAt!: string;
  @Field(() => String, { nullable: true }) finishedAt!: string | null;
  @Field(() => String, { nullable: true, description: "A sleep's wake instant, or a wait's timeout." }) wakeAt!: string | null;
}

@ObjectType('SignalResult', { description: 'A signal sent to a run (POST /v1/runs/:id/signals/:name).' })
export class SignalResultType {
  @Field(() => Boolean, { description: 'True when the run was waiting for it and resumes now; false when it is kept until the run asks.' }) delivered!: boolean;
}

@ObjectType('Run', { description: 'One execution of a target, or of a graph of steps (GET /v1/runs/:id).' })
export class RunType implements RunView {
  @Field(() => ID) id!: string;
  @Field(() => ID, { nullable: true }) scheduleId!: string | null;
  @Field(() => RunOriginEnum) origin!: RunView['origin'];
  @Field(() => ID, { nullable: true }) sourceRunId!: string | null;
  @Field(() => String) scheduledFor!: string;
  @Field(() => String, { nullable: true }) availableAt!: string | null;
  @Field(() => String, { nullable: true }) deferReason!: string | null;
  @Field(() => RunStateEnum) state!: RunView['state'];
  @Field(() => Int) attempt!: number;
  @Field(() => Int) maxAttempts!: number;
  @Field(() => JsonScalar, { nullable: true, description: 'What the run executes; null for a multi-step run.' }) target!: TargetView | null;
  @Field(() => [RunStepType], { nullable: true, description: 'The steps of a multi-step run, in declaration order; null for a single-target run.' })
  steps!: RunStepType[] | null;
  @Field(() => ID, { nullable: true, description: "For a step's own run: the multi-step run it belongs to." }) parentRunId!: string | null;
  @Field(() => String, { nullable: true, description: "For a step's own run: its step's name." }) stepName!: string | null;
  @Field(() => ConcurrencyType, { nullable: true, description: 'The concurrency key the run holds while running, and its limit.' }) concurrency!: ConcurrencyType | null;
  @Field(() => Int, { description: '1 starts first, 5 last: among the due runs of its queue, the next start goes to the best priority.' }) priority!: number;
  @Field(() => String, { nullable: true, description: 'The fairness key whose turns the run takes (resolved from its payload); null: the one key runs without a key share.' })
  fairnessKey!: string | null;
  @Field(() => ID, { nullable: true, description: 'For a run of a sensor: the sensor.' }) sensorId!: string | null;
  @Field(() => String, { nullable: true, description: 'For a run a sensor asked for: its run key.' }) runKey!: string | null;
  @Field(() => String, { nullable: true, description: 'For a run an event started (origin event): the event.' }) eventId!: string | null;
  @Field(() => [CheckpointType], { description: "The checkpoints of the run's durable function, in the order they began." }) checkpoints!: CheckpointType[];
  @Field(() => RetryPolicyType) retry!: RetryPolicyType;
  @Field(() => JsonScalar, { nullable: true }) payload!: JsonValue | null;
  @Field(() => JsonScalar, { nullable: true }) result!: JsonValue | null;
  @Field(() => JsonScalar, { nullable: true }) error!: Record<string, unknown> | null;
  @Field(() => ReasonCodeEnum, { nullable: true }) reasonCode!: RunView['reasonCode'];
  @Field(() => String, { nullable: true }) reasonText!: string | null;
  @Field(() => Int) crashCount!: number;
  @Field(() => String, { nullable: true }) cancelRequestedAt!: string | null;
  @Field(() => String, { nullable: true }) idempotencyKey!: string | null;
  @Field(() => String) createdAt!: string;
  @Field(() => String, { nullable: true }) startedAt!: string | null;
  @Field(() => String, { nullable: true }) finishedAt!: string | null;
  @Field(() => Int) leaseEpoch!: number;
  @Field(() => JsonScalar, { nullable: true, description: 'The last progress its handler reported (ctx.progress); null when it reported none.' }) progress!: JsonValue | null;
  @Field(() => String, {
    nullable: true,
    description: 'The version of the worker that claimed it; null before its first claim. Once it stored a checkpoint it is pinned to it: only workers of that version (or upgrade "auto" ones) claim it.',
  })
  version!: string | null;
  @Field(() => Boolean, {
    nullable: true,
    description: 'Set only by createRun: true when the idempotency key named an existing run, which is returned instead.',
  })
  deduped?: boolean;
}

@ObjectType('RunPage')
export class RunPageType {
  @Field(() => [RunType]) items!: RunType[];
  @Field(() => String, { nullable: true, description: 'Pass as `cursor` for the next page; null on the last page.' }) nextCursor!: string | null;
}

@ObjectType('RunBatchItem', { description: 'One answer of createRuns, in the order of its items: the run, or the refusal.' })
export class RunBatchItemType {
  @Field(() => RunType, { nullable: true, description: 'The run created, or found by its idempotency key; null when refused.' }) run!: RunType | null;
  @Field(() => Boolean, { nullable: true, description: 'True when a repeated idempotencyKey returned an existing run; null when refused.' }) deduped!: boolean | null;
  @Field(() => BatchErrorType, { nullable: true }) error!: BatchErrorType | null;
}
