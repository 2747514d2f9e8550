/**
 * GraphQL object types of sensors and their ticks, field for field the REST wire shape of
 * sensors/sensor.view.ts. Each class `implements` its view type, so a field added to REST and not
 * here fails to compile.
 */
import { Field, Float, ID, Int, ObjectType } from '@nestjs/graphql';
import type { JsonValue } from '@kairos/domain';
import type { TargetView } from '../wire/policy.view.js';
import { JsonScalar } from '../graphql/json.scalar.js';
import { ReasonCodeEnum, SensorTickStateEnum } from '../graphql/wire.enums.js';
import { ConcurrencyType, FairnessType, RetryPolicyType } from '../runs/run.types.js';
import { StepType } from '../schedules/schedule.types.js';
import type { SensorRunView, SensorTickView, SensorView } from './sensor.view.js';

@ObjectType('SensorTick', { description: 'One evaluation of a sensor and what came of it (GET /v1/sensors/:id/ticks).' })
export class SensorTickType implements SensorTickView {
  @Field(() => ID) id!: string;
  @Field(() => ID) sensorId!: string;
  @Field(() => ID, { description: 'The evaluation run.' }) runId!: string;
  @Field(() => SensorTickStateEnum) state!: SensorTickView['state'];
  @Field(() => Int, { description: 'Runs the evaluation asked for.' }) requested!: number;
  @Field(() => Int, { description: 'Runs created for it.' }) created!: number;
  @Field(() => Int, { description: 'Runs asked for by a run key the sensor had already asked for.' }) deduplicated!: number;
  @Field(() => [ID]) runIds!: string[];
  @Field(() => JsonScalar, { nullable: true }) cursorBefore!: JsonValue | null;
  @Field(() => JsonScalar, { nullable: true }) cursorAfter!: JsonValue | null;
  @Field(() => ReasonCodeEnum, { nullable: true }) reasonCode!: SensorTickView['reasonCode'];
  @Field(() => String, { nullable: true }) reason!: string | null;
  @Field(() => String) startedAt!: string;
  @Field(() => String, { nullable: true }) finishedAt!: string | null;
  @Field(() => Float, { nullable: true, description: 'finishedAt - startedAt; null while evaluating.' }) durationMs!: number | null;
}

@ObjectType('SensorTickPage')
export class SensorTickPageType {
  @Field(() => [SensorTickType]) items!: SensorTickType[];
  @Field(() => String, { nullable: true, description: 'Pass as `cursor` for the next page; null on the last page.' }) nextCursor!: string | null;
}

@ObjectType('SensorRun', { description: 'What each run a sensor asks for executes, with its defaults filled in.' })
export class SensorRunType implements SensorRunView {
  @Field(() => JsonScalar, { nullable: true, description: 'What each run executes; null when it runs steps.' }) target!: TargetView | null;
  @Field(() => [StepType], { nullable: true, description: 'The graph of steps each run executes; null when it runs one target.' }) steps!: StepType[] | null;
  @Field(() => RetryPolicyType) retry!: RetryPolicyType;
  @Field(() => String) timeout!: string;
  @Field(() => ConcurrencyType, { nullable: true, description: "The key as declared, resolved over each run's payload; null: none." }) concurrency!: ConcurrencyType | null;
  @Field(() => Int, { description: "Each run's priority: 1 starts first, 5 last." }) priority!: number;
  @Field(() => FairnessType, { nullable: true, description: "The key as declared, resolved over each run's payload, and its weight; null: none." }) fairness!: FairnessType | null;
}

@ObjectType('Sensor', { description: 'A sensor: its definition with defaults filled in, its cursor and its newest evaluation (GET /v1/sensors/:id).' })
export class SensorType implements SensorView {
  @Field(() => ID) id!: string;
  @Field(() => String) name!: string;
  @Field(() => String) every!: string;
  @Field(() => JsonScalar, { description: 'The handler that evaluates the sensor.' }) target!: SensorView['target'];
  @Field(() => String, { description: 'Of one evaluation.' }) timeout!: string;
  @Field(() => SensorRunType) run!: SensorRunType;
  @Field(() => JsonScalar, { nullable: true }) payload!: JsonValue | null;
  @Field(() => Boolean) paused!: boolean;
  @Field(() => JsonScalar) labels!: Record<string, string>;
  @Field(() => JsonScalar, { nullable: true }) cursor!: JsonValue | null;
  /** A bigint in the ledger; Float (like the REST JSON number) is exact up to 2^53, where Int would stop at 2^31. */
  @Field(() => Float, { description: 'Rises with every commit, cursor move and reset.' }) cursorVersion!: number;
  @Field(() => String, { nullable: true, description: 'Null while paused.' }) nextEvaluationAt!: string | null;
  @Field(() => Boolean, { description: 'True while an evaluation is under way.' }) evaluating!: boolean;
  @Field(() => SensorTickType, { nullable: true }) lastTick!: SensorTickType | null;
  @Field(() => String, { nullable: true, description: 'The apply source that declares it; null when made through the API.' }) source!: string | null;
  @Field(() => String) createdAt!: string;
  @Field(() => String) updatedAt!: string;
}

@ObjectType('SensorPage')
export class SensorPageType {
  @Field(() => [SensorType]) items!: SensorType[];
  @Field(() => String, { nullable: true, description: 'Pass as `cursor` for the next page; null on the last page.' }) nextCursor!: string | null;
}
