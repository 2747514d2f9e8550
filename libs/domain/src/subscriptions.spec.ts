import { describe, expect, it } from 'vitest';
import type { DomainEventTopic } from './closed-sets.js';
import {
  DELIVERY_BACKOFF_MAX_MS,
  deliveryBackoffMs,
  deliveryBody,
  eventLink,
  eventSummary,
  slackMessage,
  slotOnTime,
  subscriptionMatches,
  type DeliveryBody,
  type EventSubjectInfo,
  type FilteredEvent,
  type SubscriptionFilter,
} from './subscriptions.js';

const S1 = '0193a5e0-0000-7000-8000-000000000001';
const S2 = '0193a5e0-0000-7000-8000-000000000002';
const billing: EventSubjectInfo = { kind: 'schedule', id: S1, name: 'billing-report', labels: { team: 'billing', tier: 'gold' } };
const sensor: EventSubjectInfo = { kind: 'sensor', id: S2, name: 'new-files', labels: { team: 'billing' } };

const filter = (over: Partial<SubscriptionFilter> = {}): SubscriptionFilter => ({ events: ['run.dead'], scheduleIds: [], labels: {}, ...over });
const event = (over: Partial<FilteredEvent> = {}): FilteredEvent => ({ topic: 'run.dead', scheduleId: S1, subject: billing, ...over });

describe('subscriptionMatches', () => {
  it.each<[string, SubscriptionFilter, FilteredEvent, boolean]>([
    ['a listed type, no filter', filter(), event(), true],
    ['a type not listed', filter(), event({ topic: 'run.failed' }), false],
    ['one of several types', filter({ events: ['run.failed', 'run.dead'] }), event(), true],
    ['its schedule among the ids', filter({ scheduleIds: [S2, S1] }), event(), true],
    ['its schedule not among the ids', filter({ scheduleIds: [S2] }), event(), false],
    ['no schedule under a schedule filter', filter({ scheduleIds: [S1] }), event({ scheduleId: null, subject: null }), false],
    ['every label matches', filter({ labels: { team: 'billing', tier: 'gold' } }), event(), true],
    ['one label of the subject', filter({ labels: { team: 'billing' } }), event(), true],
    ['a label with another value', filter({ labels: { team: 'search' } }), event(), false],
    ['a label the subject lacks', filter({ labels: { region: 'eu' } }), event(), false],
    ['no subject under a label filter', filter({ labels: { team: 'billing' } }), event({ subject: null }), false],
    ['a sensor subject carries labels too', filter({ events: ['sensor.failed'], labels: { team: 'billing' } }), event({ topic: 'sensor.failed', scheduleId: null, subject: sensor }), true],
    ['ids and labels both hold', filter({ scheduleIds: [S1], labels: { team: 'billing' } }), event(), true],
    ['ids hold, labels do not', filter({ scheduleIds: [S1], labels: { team: 'search' } }), event(), false],
    ['an outage without a filter', filter({ events: ['outage.detected'] }), event({ topic: 'outage.detected', scheduleId: null, subject: null }), true],
    ['a ping is never matched by type', filter({ events: ['run.dead'] }), event({ topic: 'ping' }), false],
  ])('%s', (_name, f, e, expected) => {
    expect(subscriptionMatches(f, e)).toBe(expected);
  });
});

describe('eventLink', () => {
  it.each<[string, string | null, Record<string, unknown>, string | null]>([
    ['no public URL', null, { runId: 'r' }, null],
    ['a run', 'https://k.example.com', { runId: 'r', scheduleId: 's' }, 'https://k.example.com/ui/runs/r'],
    ['a sensor', 'https://k.example.com/', { sensorId: 'x' }, 'https://k.example.com/ui/sensors/x'],
    ['a schedule', 'https://k.example.com//', { scheduleId: 's' }, 'https://k.example.com/ui/schedules/s'],
    ['under a path', 'https://example.com/kairos', { scheduleId: 's' }, 'https://example.com/kairos/ui/schedules/s'],
    ['nothing to point at', 'https://k.example.com', { outageId: 3 }, 'https://k.example.com/ui/cluster'],
  ])('%s', (_name, base, data, expected) => {
    expect(eventLink(base, data)).toBe(expected);
  });
});

describe('deliveryBody', () => {
  it('carries the payload as data, with the name of its subject and a link', () => {
    const body = deliveryBody({ id: 42, topic: 'run.dead', createdAt: '2026-12-03T05:00:00Z', payload: { runId: 'r', scheduleId: S1, reasonCode: 'HANDLER_ERROR' } }, 'default', billing, 'https://k.example.com');
    expect(body).toEqual({
      id: '42',
      type: 'run.dead',
      occurredAt: '2026-12-03T05:00:00Z',
      namespace: 'default',
      data: { runId: 'r', scheduleId: S1, reasonCode: 'HANDLER_ERROR', scheduleName: 'billing-report', link: 'https://k.example.com/ui/runs/r' },
    });
  });

  it('names a sensor as sensorName, and links nowhere without a public URL', () => {
    const body = deliveryBody({ id: '7', topic: 'sensor.failed', createdAt: 'x', payload: { sensorId: S2 } }, 'ns', sensor, null);
    expect(body.data).toEqual({ sensorId: S2, sensorName: 'new-files', link: null });
  });
});

const body = (type: DomainEventTopic, data: Record<string, unknown>): DeliveryBody => ({ id: '1', type, occurredAt: '2026-12-03T05:00:00Z', namespace: 'default', data });

describe('eventSummary', () => {
  it.each<[DomainEventTopic, Record<string, unknown>, string]>([
    ['run.succeeded', { runId: 'r', scheduleName: 'nightly', attempt: 1, maxAttempts: 3 }, 'Run r of schedule "nightly" succeeded on attempt 1/3'],
    ['run.succeeded', { runId: 'r' }, 'Run r succeeded'],
    ['run.failed', { runId: 'r', scheduleName: 'nightly', attempt: 2, maxAttempts: 3, reasonCode: 'HANDLER_ERROR', reasonText: 'boom', willRetry: true }, 'Run r of schedule "nightly" failed on attempt 2/3 (HANDLER_ERROR: boom); it will be retried'],
    ['run.failed', { runId: 'r', attempt: 3, willRetry: false, reasonCode: 'TIMEOUT' }, 'Run r failed on attempt 3 (TIMEOUT)'],
    ['run.dead', { runId: 'r', scheduleName: 'nightly', reasonCode: 'ATTEMPTS_EXHAUSTED' }, 'Run r of schedule "nightly" is dead (ATTEMPTS_EXHAUSTED)'],
    ['schedule.missed', { scheduleName: 'nightly', scheduledFor: '2026-12-03T02:00:00Z', reasonCode: 'OUTAGE' }, 'Schedule "nightly" missed its slot 2026-12-03T02:00:00Z (OUTAGE)'],
    ['schedule.late', { name: 'nightly', scheduledFor: 'T', deadline: 'D', runState: 'queued' }, 'Schedule "nightly" is late: the run of its slot T had not succeeded by D (it is queued)'],
    ['schedule.late', { scheduleName: 'nightly', scheduledFor: 'T', deadline: 'D', runState: null }, 'Schedule "nightly" is late: the run of its slot T had not succeeded by D (no run was made)'],
    ['schedule.recovered', { scheduleName: 'nightly', scheduledFor: 'T' }, 'Schedule "nightly" recovered: its slot T succeeded in time'],
    ['sensor.failed', { sensorId: 'x', sensorName: 'files', reasonCode: 'TIMEOUT' }, 'Sensor "files" failed an evaluation (TIMEOUT)'],
    ['sensor.failed', { sensorId: 'x' }, 'Sensor "x" failed an evaluation'],
    ['outage.detected', { startedAt: 'A', endedAt: 'B', partition: null, reasonCode: 'LEADER_LOST' }, 'Outage: no scheduler from A to B (LEADER_LOST)'],
    ['outage.detected', { startedAt: 'A', endedAt: 'B', partition: 3 }, 'Outage: no scheduler owned partition 3 from A to B'],
    ['subscription.disabled', { subscriptionId: 's', host: 'hooks.example.com', reason: 'down' }, 'Subscription s (to hooks.example.com) was disabled: down'],
    ['ping', { subscriptionId: 's' }, 'Kairos test delivery to subscription s'],
    ['schedule.paused', { name: 'nightly', actor: 'key:ops' }, 'Schedule "nightly": paused by key:ops'],
    ['schedule.created', { scheduleName: 'nightly' }, 'Schedule "nightly": created'],
  ])('%s %j', (type, data, expected) => {
    expect(eventSummary(body(type, data))).toBe(expected);
  });
});

describe('slackMessage', () => {
  it('says the summary as text and in a section, with the type, the event and a link in the context', () => {
    const message = slackMessage(body('run.dead', { runId: 'r', reasonCode: 'X', link: 'https://k/ui/runs/r' }));
    expect(message.text).toBe('[default] Run r is dead (X)');
    expect(message.blocks).toEqual([
      { type: 'section', text: { type: 'mrkdwn', text: '[default] Run r is dead (X)' } },
      { type: 'context', elements: [{ type: 'mrkdwn', text: '*run.dead* · event 1 · 2026-12-03T05:00:00Z · <https://k/ui/runs/r|Open in Kairos>' }] },
    ]);
  });

  it('has no link without one', () => {
    expect(JSON.stringify(slackMessage(body('ping', { subscriptionId: 's', link: null })).blocks)).not.toContain('Open in Kairos');
  });
});

describe('deliveryBackoffMs', () => {
  it.each([
    [1, 1_000],
    [2, 2_000],
    [3, 4_000],
    [10, 512_000],
    [12, 2_048_000],
    [13, DELIVERY_BACKOFF_MAX_MS],
    [40, DELIVERY_BACKOFF_MAX_MS],
    [1_000, DELIVERY_BACKOFF_MAX_MS],
  ])('after attempt %i waits %i ms', (attempt, ms) => {
    expect(deliveryBackoffMs(attempt)).toBe(ms);
  });
});

describe('slotOnTime', () => {
  const slot = new Date('2026-12-03T05:00:00Z');
  const at = (ms: number) => new Date(slot.getTime() + ms);
  it.each<[string, string | null, Date | null, boolean]>([
    ['succeeded before the deadline', 'succeeded', at(500), true],
    ['succeeded at the deadline', 'succeeded', at(1_000), true],
    ['succeeded after it', 'succeeded', at(1_001), false],
    ['still queued', 'queued', null, false],
    ['running', 'running', null, false],
    ['dead in time', 'dead', at(200), false],
    ['cancelled', 'cancelled', at(200), false],
    ['no run (skipped or missed)', null, null, false],
  ])('%s', (_name, runState, finishedAt, expected) => {
    expect(slotOnTime({ scheduledFor: slot, withinMs: 1_000, runState, finishedAt })).toBe(expected);
  });
});
