/**
 * The closed sets of the wire as GraphQL enums, built from the domain's own lists, so a new run
 * state or policy reaches GraphQL (and REST's OpenAPI document) without an edit here. Each value
 * keeps its REST spelling.
 */
import { registerEnumType } from '@nestjs/graphql';
import {
  ATTEMPT_OUTCOMES,
  BACKOFF_TYPES,
  CATCHUP_MODES,
  DST_GAP_POLICIES,
  DST_OVERLAP_POLICIES,
  OVERLAP_POLICIES,
  REASON_CODES,
  RUN_EVENT_KINDS,
  RUN_ORIGINS,
  RUN_STATES,
  SCHEDULE_STATUSES,
  TICK_ORIGINS,
  TICK_OUTCOMES,
} from '@kairos/domain';

function wireEnum<T extends string>(name: string, values: readonly T[], description: string): Record<T, T> {
  const enumObject = Object.fromEntries(values.map((value) => [value, value])) as Record<T, T>;
  registerEnumType(enumObject, { name, description });
  return enumObject;
}

export const RunStateEnum = wireEnum('RunState', RUN_STATES, 'queued and running are active; the rest are terminal.');
export const RunOriginEnum = wireEnum('RunOrigin', RUN_ORIGINS, 'What created the run.');
export const RunEventKindEnum = wireEnum('RunEventKind', RUN_EVENT_KINDS, 'What a run event records.');
export const AttemptOutcomeEnum = wireEnum('AttemptOutcome', ATTEMPT_OUTCOMES, 'How one execution attempt ended.');
export const ReasonCodeEnum = wireEnum('ReasonCode', Object.keys(REASON_CODES) as (keyof typeof REASON_CODES)[], 'The closed catalogue of reasons carried by terminal runs, ticks and run events.');
export const ScheduleStatusEnum = wireEnum('ScheduleStatus', SCHEDULE_STATUSES, 'deleted schedules are never returned.');
export const TickOutcomeEnum = wireEnum('TickOutcome', TICK_OUTCOMES, 'What became of an evaluated slot.');
export const TickOriginEnum = wireEnum('TickOrigin', TICK_ORIGINS, 'Who evaluated the slot: the scheduler or a backfill request.');
export const OverlapPolicyEnum = wireEnum('OverlapPolicy', OVERLAP_POLICIES, 'What to do when a slot comes due while an earlier run of the schedule is still active.');
export const CatchupModeEnum = wireEnum('CatchupMode', CATCHUP_MODES, 'none skips missed slots, latest fires the most recent once, all fires every one.');
export const BackoffTypeEnum = wireEnum('BackoffType', BACKOFF_TYPES, 'How the delay between attempts grows.');
export const DstGapPolicyEnum = wireEnum('DstGapPolicy', DST_GAP_POLICIES, 'How a cron wall time that a spring-forward skips fires.');
export const DstOverlapPolicyEnum = wireEnum('DstOverlapPolicy', DST_OVERLAP_POLICIES, 'Which occurrence of a wall time a fall-back repeats fires.');
