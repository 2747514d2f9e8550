/**
 * The dashboard's wire types (apps/ui/src/data/wire) are a hand-kept copy of the API's wire
 * shapes, because the page must not bundle zod. The compiler holds the copy to the declarations
 * both ways: every response the API can send is a value of the dashboard's type, and no field the
 * dashboard declares is wider than the API's (a `state: string` would let a page compare against a
 * state that does not exist). Nested objects the dashboard reads only in part are compared on the
 * fields it declares. `npm run lint` type-checks this file (a drift fails it); at run time the
 * assertions are no-ops.
 */
import { describe, expectTypeOf, it } from 'vitest';
import type { z } from 'zod';
import type * as wire from '@kairos/domain/wire';
import type * as ui from '../../apps/ui/src/data/wire/index.js';

type Sent<S extends z.ZodType> = z.output<S>;
/** A schedule as the API sends it: the closed set of statuses has `deleted`, which no response carries. */
type SentSchedule = Omit<Sent<typeof wire.Schedule>, 'status'> & { status: Exclude<Sent<typeof wire.Schedule>['status'], 'deleted'> };
type SentCluster = Sent<typeof wire.ClusterState>;
/** True when every value of A is a value of B. */
type Fits<A, B> = [A] extends [B] ? true : false;
/** True when each field A declares is one B has, with no value B's cannot take. */
type NoWider<A, B> = [keyof A] extends [keyof B] ? Fits<A, Pick<B, keyof A & keyof B>> : false;
/** The dashboard prints reason codes as they come and never branches on one, so it keeps them as text. */
type Coded<T> = Omit<T, 'reasonCode'>;

describe("the dashboard's wire types against the wire declarations", () => {
  it('types every response the API sends', () => {
    expectTypeOf<Fits<SentSchedule, ui.Schedule>>().toEqualTypeOf<true>();
    expectTypeOf<Fits<Sent<typeof wire.Run>, ui.Run>>().toEqualTypeOf<true>();
    expectTypeOf<Fits<Sent<typeof wire.RunDetail>, ui.RunWithAttempts>>().toEqualTypeOf<true>();
    expectTypeOf<Fits<Sent<typeof wire.RunBulkResult>, ui.RunBulkResult>>().toEqualTypeOf<true>();
    expectTypeOf<NoWider<ui.RunBulkResult, Sent<typeof wire.RunBulkResult>>>().toEqualTypeOf<true>();
    expectTypeOf<Fits<ui.RunBulkRequest, z.input<typeof wire.RunBulkRequest>>>().toEqualTypeOf<true>();
    expectTypeOf<Fits<Sent<typeof wire.Attempt>, ui.Attempt>>().toEqualTypeOf<true>();
    expectTypeOf<Fits<Sent<typeof wire.RunEvent>, ui.RunEvent>>().toEqualTypeOf<true>();
    expectTypeOf<Fits<Sent<typeof wire.Tick>, ui.Tick>>().toEqualTypeOf<true>();
    expectTypeOf<Fits<Sent<typeof wire.ScheduleVersion>, ui.ScheduleVersion>>().toEqualTypeOf<true>();
    expectTypeOf<Fits<Sent<typeof wire.Worker>, ui.Worker>>().toEqualTypeOf<true>();
    expectTypeOf<Fits<Sent<typeof wire.QueuePage>, ui.Page<ui.Queue>>>().toEqualTypeOf<true>();
    expectTypeOf<Fits<Sent<typeof wire.VersionList>, { items: ui.Version[] }>>().toEqualTypeOf<true>();
    expectTypeOf<Fits<Sent<typeof wire.RunStats>, ui.RunStats>>().toEqualTypeOf<true>();
    expectTypeOf<Fits<Sent<typeof wire.SensorPage>, ui.Page<ui.Sensor>>>().toEqualTypeOf<true>();
    expectTypeOf<Fits<Sent<typeof wire.SensorTickPage>, ui.Page<ui.SensorTick>>>().toEqualTypeOf<true>();
    expectTypeOf<Fits<Sent<typeof wire.WhoAmI>, ui.WhoAmI>>().toEqualTypeOf<true>();
    expectTypeOf<Fits<SentCluster, ui.Cluster>>().toEqualTypeOf<true>();
    expectTypeOf<Fits<Sent<typeof wire.RunPage>, ui.Page<ui.Run>>>().toEqualTypeOf<true>();
    expectTypeOf<Fits<{ items: SentSchedule[]; nextCursor: string | null }, ui.Page<ui.Schedule>>>().toEqualTypeOf<true>();
    expectTypeOf<Fits<Sent<typeof wire.SubscriptionView>, ui.Subscription>>().toEqualTypeOf<true>();
    expectTypeOf<Fits<Sent<typeof wire.SubscriptionPage>, ui.Page<ui.Subscription>>>().toEqualTypeOf<true>();
    expectTypeOf<Fits<Sent<typeof wire.SubscriptionDeliveryPage>, ui.Page<ui.SubscriptionDelivery>>>().toEqualTypeOf<true>();
    expectTypeOf<Fits<Sent<typeof wire.SubscriptionTestResult>, ui.SubscriptionTestResult>>().toEqualTypeOf<true>();
    expectTypeOf<Fits<Sent<typeof wire.Preview>, ui.Preview>>().toEqualTypeOf<true>();
    expectTypeOf<Fits<Sent<typeof wire.CalendarView>, ui.Calendar>>().toEqualTypeOf<true>();
    expectTypeOf<Fits<Sent<typeof wire.CalendarPage>, ui.Page<ui.Calendar>>>().toEqualTypeOf<true>();
    expectTypeOf<Fits<Sent<typeof wire.CalendarDates>, ui.CalendarDates>>().toEqualTypeOf<true>();
    expectTypeOf<Fits<Sent<typeof wire.EventView>, ui.KairosEvent>>().toEqualTypeOf<true>();
    expectTypeOf<Fits<Sent<typeof wire.EventPage>, ui.Page<ui.KairosEvent>>>().toEqualTypeOf<true>();
    expectTypeOf<Fits<Sent<typeof wire.EventTriggerView>, ui.EventTrigger>>().toEqualTypeOf<true>();
  });

  it('declares no field wider than the API sends it', () => {
    expectTypeOf<NoWider<Omit<ui.Schedule, 'dst'>, SentSchedule>>().toEqualTypeOf<true>();
    expectTypeOf<NoWider<ui.Schedule['dst'], SentSchedule['dst']>>().toEqualTypeOf<true>();
    expectTypeOf<NoWider<Coded<ui.Run>, Sent<typeof wire.Run>>>().toEqualTypeOf<true>();
    expectTypeOf<NoWider<Coded<ui.Attempt>, Sent<typeof wire.Attempt>>>().toEqualTypeOf<true>();
    expectTypeOf<NoWider<Coded<ui.Tick>, Sent<typeof wire.Tick>>>().toEqualTypeOf<true>();
    expectTypeOf<NoWider<ui.RunStatsBucket, Sent<typeof wire.RunStats>['buckets'][number]>>().toEqualTypeOf<true>();
    expectTypeOf<NoWider<Coded<ui.ScheduleVersion>, Sent<typeof wire.ScheduleVersion>>>().toEqualTypeOf<true>();
    expectTypeOf<NoWider<Coded<ui.RunEvent>, Sent<typeof wire.RunEvent>>>().toEqualTypeOf<true>();
    expectTypeOf<NoWider<ui.Worker, Sent<typeof wire.Worker>>>().toEqualTypeOf<true>();
    expectTypeOf<NoWider<ui.Queue, Sent<typeof wire.QueueView>>>().toEqualTypeOf<true>();
    expectTypeOf<NoWider<ui.Version, Sent<typeof wire.VersionView>>>().toEqualTypeOf<true>();
    expectTypeOf<NoWider<Omit<ui.Sensor, 'run' | 'lastTick'>, Sent<typeof wire.SensorView>>>().toEqualTypeOf<true>();
    expectTypeOf<NoWider<Coded<ui.SensorTick>, Sent<typeof wire.SensorTick>>>().toEqualTypeOf<true>();
    expectTypeOf<NoWider<ui.WhoAmI, Sent<typeof wire.WhoAmI>>>().toEqualTypeOf<true>();
    expectTypeOf<NoWider<ui.Subscription, Sent<typeof wire.SubscriptionView>>>().toEqualTypeOf<true>();
    expectTypeOf<NoWider<ui.SubscriptionDelivery, Sent<typeof wire.SubscriptionDelivery>>>().toEqualTypeOf<true>();
    expectTypeOf<NoWider<ui.DeliveryAttempt, Sent<typeof wire.DeliveryAttempt>>>().toEqualTypeOf<true>();
    expectTypeOf<NoWider<ui.SubscriptionTestResult, Sent<typeof wire.SubscriptionTestResult>>>().toEqualTypeOf<true>();
    expectTypeOf<NoWider<ui.Preview, Sent<typeof wire.Preview>>>().toEqualTypeOf<true>();
    expectTypeOf<NoWider<ui.Calendar, Sent<typeof wire.CalendarView>>>().toEqualTypeOf<true>();
    expectTypeOf<NoWider<ui.CalendarDates, Sent<typeof wire.CalendarDates>>>().toEqualTypeOf<true>();
    expectTypeOf<NoWider<ui.KairosEvent, Sent<typeof wire.EventView>>>().toEqualTypeOf<true>();
    expectTypeOf<NoWider<ui.EventSkip, Sent<typeof wire.EventSkip>>>().toEqualTypeOf<true>();
    expectTypeOf<NoWider<ui.EventTrigger, Sent<typeof wire.EventTriggerView>>>().toEqualTypeOf<true>();
    expectTypeOf<NoWider<NonNullable<ui.Schedule['on']>, NonNullable<SentSchedule['on']>>>().toEqualTypeOf<true>();
    expectTypeOf<NoWider<NonNullable<ui.Schedule['debounce']>, NonNullable<SentSchedule['debounce']>>>().toEqualTypeOf<true>();
    expectTypeOf<NoWider<NonNullable<ui.Schedule['throttle']>, NonNullable<SentSchedule['throttle']>>>().toEqualTypeOf<true>();
    expectTypeOf<NoWider<NonNullable<ui.Schedule['rateLimit']>, NonNullable<SentSchedule['rateLimit']>>>().toEqualTypeOf<true>();
    expectTypeOf<NoWider<NonNullable<ui.Schedule['batch']>, NonNullable<SentSchedule['batch']>>>().toEqualTypeOf<true>();
    expectTypeOf<NoWider<Omit<ui.Cluster, 'outages' | 'schedulers'>, SentCluster>>().toEqualTypeOf<true>();
    expectTypeOf<NoWider<ui.Cluster['outages'][number], SentCluster['outages'][number]>>().toEqualTypeOf<true>();
    expectTypeOf<NoWider<ui.Cluster['schedulers'][number], SentCluster['schedulers'][number]>>().toEqualTypeOf<true>();
  });
});
