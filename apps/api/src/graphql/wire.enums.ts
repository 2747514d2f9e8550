/**
 * The closed sets of the wire as GraphQL enums, built from the same zod declarations as the REST
 * document's enum components, values and descriptions alike, so a new run state or policy reaches
 * GraphQL and the OpenAPI document together. Each value keeps its REST spelling.
 */
import { registerEnumType } from '@nestjs/graphql';
import {
  AttemptOutcome,
  BackoffType,
  CatchupMode,
  DstGapPolicy,
  DstOverlapPolicy,
  ErrorCode,
  OverlapPolicy,
  ReasonCodeSchema,
  RunEventKind,
  RunOrigin,
  RunState,
  ScheduleStatus,
  StepState,
  StepWhen,
  TickOrigin,
  TickOutcome, CheckpointKind, CheckpointState, SensorTickState, SubscriptionStateShape, SubscriptionFormatShape, DeliveryStateShape, OnExcludedShape } from '@kairos/domain/wire';
import { z } from 'zod';

function wireEnum<T extends string>(name: string, shape: z.ZodEnum<{ [K in T]: K }>): Record<T, T> {
  const enumObject = Object.fromEntries(shape.options.map((value) => [value, value])) as Record<T, T>;
  registerEnumType(enumObject, { name, description: z.globalRegistry.get(shape)?.description });
  return enumObject;
}

export const RunStateEnum = wireEnum('RunState', RunState);
export const RunOriginEnum = wireEnum('RunOrigin', RunOrigin);
export const RunEventKindEnum = wireEnum('RunEventKind', RunEventKind);
export const AttemptOutcomeEnum = wireEnum('AttemptOutcome', AttemptOutcome);
export const ReasonCodeEnum = wireEnum('ReasonCode', ReasonCodeSchema);
export const ScheduleStatusEnum = wireEnum('ScheduleStatus', ScheduleStatus);
export const TickOutcomeEnum = wireEnum('TickOutcome', TickOutcome);
export const TickOriginEnum = wireEnum('TickOrigin', TickOrigin);
export const OverlapPolicyEnum = wireEnum('OverlapPolicy', OverlapPolicy);
export const CatchupModeEnum = wireEnum('CatchupMode', CatchupMode);
export const BackoffTypeEnum = wireEnum('BackoffType', BackoffType);
export const DstGapPolicyEnum = wireEnum('DstGapPolicy', DstGapPolicy);
export const DstOverlapPolicyEnum = wireEnum('DstOverlapPolicy', DstOverlapPolicy);
export const ErrorCodeEnum = wireEnum('ErrorCode', ErrorCode);
export const StepWhenEnum = wireEnum('StepWhen', StepWhen);
export const StepStateEnum = wireEnum('StepState', StepState);
export const CheckpointKindEnum = wireEnum('CheckpointKind', CheckpointKind);
export const CheckpointStateEnum = wireEnum('CheckpointState', CheckpointState);
export const SensorTickStateEnum = wireEnum('SensorTickState', SensorTickState);
export const SubscriptionStateEnum = wireEnum('SubscriptionState', SubscriptionStateShape);
export const SubscriptionFormatEnum = wireEnum('SubscriptionFormat', SubscriptionFormatShape);
export const DeliveryStateEnum = wireEnum('DeliveryState', DeliveryStateShape);
export const OnExcludedEnum = wireEnum('OnExcluded', OnExcludedShape);
