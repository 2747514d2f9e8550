/**
 * The SDK's client types are a hand-kept copy of the API's wire shapes, because the published
 * package must not need zod for its declarations. The compiler holds the copy to the declarations:
 * every response the API can send is a value of the client's response type, and the bodies typed
 * here are values the API's readers take. `npm run lint`
 * type-checks this file (a drift fails it); at run time the assertions are no-ops.
 */
import { describe, expectTypeOf, it } from 'vitest';
import type { z } from 'zod';
import type * as sdk from '@kairos/sdk';
import type * as wire from '@kairos/domain/wire';

type Sent<S extends z.ZodType> = z.output<S>;
/** A schedule as the API sends it: the closed set of statuses has `deleted`, which no response carries. */
type SentSchedule = Omit<Sent<typeof wire.Schedule>, 'status'> & { status: Exclude<Sent<typeof wire.Schedule>['status'], 'deleted'> };
/** True when every value of A is a value of B. */
type Fits<A, B> = [A] extends [B] ? true : false;

describe('the SDK client types against the wire declarations', () => {
  it('types every response the API sends', () => {
    expectTypeOf<Fits<SentSchedule, sdk.Schedule>>().toEqualTypeOf<true>();
    expectTypeOf<Fits<Sent<typeof wire.Run>, sdk.Run>>().toEqualTypeOf<true>();
    expectTypeOf<Fits<Sent<typeof wire.RunCreated>, sdk.RunCreated>>().toEqualTypeOf<true>();
    expectTypeOf<Fits<Sent<typeof wire.RunDetail>, sdk.RunDetail>>().toEqualTypeOf<true>();
    expectTypeOf<Fits<Sent<typeof wire.Attempt>, sdk.Attempt>>().toEqualTypeOf<true>();
    expectTypeOf<Fits<Sent<typeof wire.RunEvent>, sdk.RunEvent>>().toEqualTypeOf<true>();
    expectTypeOf<Fits<Sent<typeof wire.Tick>, sdk.Tick>>().toEqualTypeOf<true>();
    expectTypeOf<Fits<Sent<typeof wire.Worker>, sdk.Worker>>().toEqualTypeOf<true>();
    expectTypeOf<Fits<Sent<typeof wire.QueuePage>, sdk.Page<sdk.Queue>>>().toEqualTypeOf<true>();
    expectTypeOf<Fits<Sent<typeof wire.VersionList>, { items: sdk.Version[] }>>().toEqualTypeOf<true>();
    expectTypeOf<Fits<Sent<typeof wire.IssuedWorkerCredential>, sdk.IssuedWorkerCredential>>().toEqualTypeOf<true>();
    expectTypeOf<Fits<Sent<typeof wire.ApplyResult>, sdk.ApplyResult>>().toEqualTypeOf<true>();
    expectTypeOf<Fits<Sent<typeof wire.ScheduleVersionPage>, sdk.Page<sdk.ScheduleVersion>>>().toEqualTypeOf<true>();
    expectTypeOf<Fits<Sent<typeof wire.WorkerCredentialList>, { items: sdk.WorkerCredential[] }>>().toEqualTypeOf<true>();
    expectTypeOf<Fits<Sent<typeof wire.Preview>, sdk.Preview>>().toEqualTypeOf<true>();
    expectTypeOf<Fits<Sent<typeof wire.BackfillResult>, sdk.BackfillResult>>().toEqualTypeOf<true>();
    expectTypeOf<Fits<Sent<typeof wire.ErrorBody>, sdk.ApiErrorBody>>().toEqualTypeOf<true>();
    expectTypeOf<Fits<Sent<typeof wire.RunBatchResult>, { items: sdk.BatchAnswer<sdk.RunCreated>[] }>>().toEqualTypeOf<true>();
    expectTypeOf<Fits<{ items: (SentSchedule | Sent<typeof wire.BatchRefusal>)[] }, { items: sdk.BatchAnswer<sdk.Schedule>[] }>>().toEqualTypeOf<true>();
    expectTypeOf<Fits<{ items: SentSchedule[]; nextCursor: string | null }, sdk.Page<sdk.Schedule>>>().toEqualTypeOf<true>();
    expectTypeOf<Fits<Sent<typeof wire.RunPage>, sdk.Page<sdk.Run>>>().toEqualTypeOf<true>();
    expectTypeOf<Fits<Sent<typeof wire.RunBulkResult>, sdk.RunBulkResult>>().toEqualTypeOf<true>();
    expectTypeOf<Fits<Sent<typeof wire.SchedulePage>['nextCursor'], sdk.Page<sdk.Schedule>['nextCursor']>>().toEqualTypeOf<true>();
    expectTypeOf<Fits<Sent<typeof wire.SubscriptionView>, sdk.Subscription>>().toEqualTypeOf<true>();
    expectTypeOf<Fits<Sent<typeof wire.SubscriptionPage>, sdk.Page<sdk.Subscription>>>().toEqualTypeOf<true>();
    expectTypeOf<Fits<Sent<typeof wire.SubscriptionDeliveryPage>, sdk.Page<sdk.SubscriptionDelivery>>>().toEqualTypeOf<true>();
    expectTypeOf<Fits<Sent<typeof wire.SubscriptionTestResult>, sdk.SubscriptionTestResult>>().toEqualTypeOf<true>();
    expectTypeOf<Fits<Sent<typeof wire.CalendarView>, sdk.Calendar>>().toEqualTypeOf<true>();
    expectTypeOf<Fits<Sent<typeof wire.CalendarPage>, sdk.Page<sdk.Calendar>>>().toEqualTypeOf<true>();
    expectTypeOf<Fits<Sent<typeof wire.CalendarDates>, sdk.CalendarDates>>().toEqualTypeOf<true>();
    expectTypeOf<Fits<Sent<typeof wire.CalendarRuleView>, sdk.CalendarRule>>().toEqualTypeOf<true>();
    expectTypeOf<Fits<Sent<typeof wire.EventView>, sdk.Event>>().toEqualTypeOf<true>();
    expectTypeOf<Fits<Sent<typeof wire.EventPage>, sdk.Page<sdk.Event>>>().toEqualTypeOf<true>();
    expectTypeOf<Fits<Sent<typeof wire.EventBatchResult>, { items: sdk.BatchAnswer<sdk.Event>[] }>>().toEqualTypeOf<true>();
    expectTypeOf<Fits<Sent<typeof wire.EventTriggerView>, sdk.EventTrigger>>().toEqualTypeOf<true>();
    expectTypeOf<Fits<SentSchedule['debounce'], sdk.Schedule['debounce']>>().toEqualTypeOf<true>();
    expectTypeOf<Fits<SentSchedule['throttle'], sdk.Schedule['throttle']>>().toEqualTypeOf<true>();
    expectTypeOf<Fits<SentSchedule['rateLimit'], sdk.Schedule['rateLimit']>>().toEqualTypeOf<true>();
    expectTypeOf<Fits<SentSchedule['batch'], sdk.Schedule['batch']>>().toEqualTypeOf<true>();
  });

  it('types the bodies the client sends as the API reads them', () => {
    expectTypeOf<Fits<sdk.RunBulkInput, z.input<typeof wire.RunBulkRequest>>>().toEqualTypeOf<true>();
    expectTypeOf<Fits<{ version: string | null }, z.input<typeof wire.RunVersionMove>>>().toEqualTypeOf<true>();
    expectTypeOf<Fits<sdk.CalendarInput, z.input<typeof wire.CalendarCreate>>>().toEqualTypeOf<true>();
    expectTypeOf<Fits<sdk.CalendarFields, z.input<typeof wire.CalendarPut>>>().toEqualTypeOf<true>();
    expectTypeOf<Fits<NonNullable<sdk.ScheduleFields['calendar']>, z.input<typeof wire.CalendarRuleInput>>>().toEqualTypeOf<true>();
    expectTypeOf<Fits<sdk.EventInput, z.input<typeof wire.EventCreate>>>().toEqualTypeOf<true>();
    expectTypeOf<Fits<NonNullable<sdk.ScheduleFields['on']>, z.input<typeof wire.EventTrigger>>>().toEqualTypeOf<true>();
    expectTypeOf<Fits<NonNullable<sdk.ScheduleFields['debounce']>, z.input<typeof wire.DebounceInput>>>().toEqualTypeOf<true>();
    expectTypeOf<Fits<NonNullable<sdk.ScheduleFields['throttle']>, z.input<typeof wire.ThrottleInput>>>().toEqualTypeOf<true>();
    expectTypeOf<Fits<NonNullable<sdk.ScheduleFields['rateLimit']>, z.input<typeof wire.RateLimitInput>>>().toEqualTypeOf<true>();
    expectTypeOf<Fits<NonNullable<sdk.ScheduleFields['batch']>, z.input<typeof wire.BatchInput>>>().toEqualTypeOf<true>();
    expectTypeOf<Fits<NonNullable<sdk.ScheduleFields['fairness']>, z.input<typeof wire.FairnessInput>>>().toEqualTypeOf<true>();
    expectTypeOf<Fits<NonNullable<sdk.RunFields['fairness']>, z.input<typeof wire.FairnessInput>>>().toEqualTypeOf<true>();
    expectTypeOf<Fits<sdk.ScheduleFields['priority'], z.input<typeof wire.PriorityInput>>>().toEqualTypeOf<true>();
    expectTypeOf<Fits<sdk.StepInput, z.input<typeof wire.StepInput>>>().toEqualTypeOf<true>();
  });
});
