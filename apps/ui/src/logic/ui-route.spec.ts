import { describe, expect, it } from 'vitest';
import { pathOf, routeOf, type UiRoute } from './ui-route.js';

describe('routeOf / pathOf', () => {
  it.each<[string, UiRoute]>([
    ['/ui', { page: 'overview' }],
    ['/ui/', { page: 'overview' }],
    ['/ui/schedules', { page: 'schedules' }],
    ['/ui/schedules/', { page: 'schedules' }],
    ['/ui/schedules/0190-abc', { page: 'schedule', id: '0190-abc' }],
    ['/ui/runs', { page: 'runs' }],
    ['/ui/runs/r1', { page: 'run', id: 'r1' }],
    ['/ui/calendars', { page: 'calendars' }],
    ['/ui/calendars/bavaria', { page: 'calendar', name: 'bavaria' }],
    ['/ui/calendars/bavaria/dates', { page: 'not-found', path: '/ui/calendars/bavaria/dates' }],
    ['/ui/dead-letters', { page: 'dead-letters' }],
    ['/ui/cluster/', { page: 'cluster' }],
    ['/ui/sensors', { page: 'sensors' }],
    ['/ui/sensors/0190-abc', { page: 'sensor', id: '0190-abc' }],
    ['/ui/sensors/s1/ticks', { page: 'not-found', path: '/ui/sensors/s1/ticks' }],
    ['/ui/subscriptions', { page: 'subscriptions' }],
    ['/ui/subscriptions/', { page: 'subscriptions' }],
    ['/ui/subscriptions/0190-def', { page: 'subscription', id: '0190-def' }],
    ['/ui/subscriptions/s1/deliveries', { page: 'not-found', path: '/ui/subscriptions/s1/deliveries' }],
    ['/ui/events', { page: 'events' }],
    ['/ui/events/', { page: 'events' }],
    ['/ui/events/evt_0190', { page: 'event', id: 'evt_0190' }],
    ['/ui/events/order%2F42%20paid', { page: 'event', id: 'order/42 paid' }],
    ['/ui/events/e1/runs', { page: 'not-found', path: '/ui/events/e1/runs' }],
    ['/ui/runs/r1/extra', { page: 'not-found', path: '/ui/runs/r1/extra' }],
    ['/ui/cluster/x', { page: 'not-found', path: '/ui/cluster/x' }],
    ['/elsewhere', { page: 'not-found', path: '/elsewhere' }],
  ])('%s', (path, route) => {
    expect(routeOf(path)).toEqual(route);
    if (route.page !== 'not-found') expect(routeOf(pathOf(route))).toEqual(route);
  });
});
