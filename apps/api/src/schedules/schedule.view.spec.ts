import { describe, expect, it } from 'vitest';
import { DEFAULT_PRIORITY, explainDstPolicy, formatDuration, formatInstant, formatOptionalInstant, isStepsTarget, parseCron, type ScheduleSpec } from '@kairos/domain';
import { readScheduleCreate } from '@kairos/domain/wire';
import type { ScheduleRow } from '@kairos/ledger';
import { dstView, executableView, iso, retryView, stepsView, targetView } from '../wire/policy.view.js';
import { flowControlView, scheduleView, specDefinition } from './schedule.view.js';

/** Monday 2026-06-01 12:00 UTC. */
const NOW = Date.parse('2026-06-01T12:00:00Z');

/** The row a schedule of `spec` reads back as, made at NOW. */
function rowOf(spec: ScheduleSpec, status: ScheduleRow['status'] = 'active'): ScheduleRow {
  const { timing } = spec;
  return {
    id: '0190f2a4-1b2c-7d3e-8f40-5a6b7c8d9e0f',
    namespaceId: '0190f2a4-0000-7000-8000-000000000001',
    name: spec.name ?? '0190f2a4-1b2c-7d3e-8f40-5a6b7c8d9e0f',
    kind: timing.kind,
    cron: timing.kind === 'cron' ? timing.cron : null,
    everyMs: timing.kind === 'every' ? timing.everyMs : null,
    at: timing.kind === 'at' ? new Date(timing.atMs) : null,
    onEvent: timing.kind === 'event' ? timing.event : null,
    onMatch: timing.kind === 'event' ? timing.match : null,
    timezone: spec.timezone,
    dstGap: spec.dst.gap,
    dstOverlap: spec.dst.overlap,
    catchupMode: spec.catchup.mode,
    catchupWindowMs: spec.catchup.windowMs,
    catchupLimit: spec.catchup.limit,
    overlap: spec.overlap,
    target: spec.target,
    payload: spec.payload,
    retry: spec.retry,
    timeoutMs: spec.timeoutMs,
    concurrency: spec.concurrency,
    priority: spec.priority,
    fairness: spec.fairness,
    startAt: spec.startAtMs === null ? null : new Date(spec.startAtMs),
    endAt: spec.endAtMs === null ? null : new Date(spec.endAtMs),
    maxRuns: spec.maxRuns,
    jitterMs: spec.jitterMs,
    labels: spec.labels,
    expectSucceededWithinMs: spec.expect?.succeededWithinMs ?? null,
    calendar: spec.calendar,
    flow: spec.flow,
    lateSince: null,
    idempotencyKey: 'key-1',
    specHash: 'hash',
    source: null,
    status,
    nextFireAt: timing.kind === 'event' ? null : new Date(NOW + 3_600_000),
    lastFireAt: null,
    fireCount: 0,
    pausedAt: status === 'paused' ? new Date(NOW) : null,
    resumedAt: null,
    completedAt: null,
    deletedAt: null,
    createdAt: new Date(NOW),
    updatedAt: new Date(NOW + 1),
  };
}

// The views as they were written with object spreads, the reference for the ones spelled out for speed.
function spreadScheduleView(row: ScheduleRow, deduped = false) {
  return {
    id: row.id,
    name: row.name,
    cron: row.cron,
    every: row.everyMs === null ? null : formatDuration(row.everyMs),
    at: iso(row.at),
    on: row.onEvent === null ? null : { event: row.onEvent, match: row.onMatch ?? {} },
    ...flowControlView(row.flow),
    timezone: row.timezone,
    dst: dstView(row.cron, { gap: row.dstGap, overlap: row.dstOverlap }),
    catchup: { mode: row.catchupMode, window: row.catchupWindowMs === null ? null : formatDuration(row.catchupWindowMs), limit: row.catchupLimit },
    overlap: row.overlap,
    ...executableView(row.target),
    payload: row.payload,
    retry: retryView(row.retry),
    timeout: formatDuration(row.timeoutMs),
    concurrency: row.concurrency,
    priority: row.priority,
    fairness: row.fairness,
    startAt: iso(row.startAt),
    endAt: iso(row.endAt),
    maxRuns: row.maxRuns,
    jitter: formatDuration(row.jitterMs),
    expect: row.expectSucceededWithinMs === null ? null : { succeededWithin: formatDuration(row.expectSucceededWithinMs) },
    calendar: row.calendar,
    lateSince: iso(row.lateSince),
    paused: row.status === 'paused',
    idempotencyKey: row.idempotencyKey,
    labels: row.labels,
    status: row.status,
    nextFireAt: iso(row.nextFireAt),
    lastFireAt: iso(row.lastFireAt),
    fireCount: row.fireCount,
    createdAt: formatInstant(row.createdAt),
    updatedAt: formatInstant(row.updatedAt),
    deduped,
  };
}

function spreadSpecDefinition(spec: ScheduleSpec): Record<string, unknown> {
  return {
    name: spec.name,
    ...(spec.timing.kind === 'cron' ? { cron: spec.timing.cron } : {}),
    ...(spec.timing.kind === 'every' ? { every: formatDuration(spec.timing.everyMs) } : {}),
    ...(spec.timing.kind === 'at' ? { at: formatInstant(spec.timing.atMs) } : {}),
    ...(spec.timing.kind === 'event' ? { on: { event: spec.timing.event, match: spec.timing.match } } : {}),
    ...Object.fromEntries(Object.entries(flowControlView(spec.flow)).filter(([, value]) => value !== null)),
    timezone: spec.timezone,
    dst: { gap: spec.dst.gap, overlap: spec.dst.overlap },
    catchup: {
      mode: spec.catchup.mode,
      ...(spec.catchup.windowMs === null ? {} : { window: formatDuration(spec.catchup.windowMs) }),
      ...(spec.catchup.limit === null ? {} : { limit: spec.catchup.limit }),
    },
    overlap: spec.overlap,
    ...(isStepsTarget(spec.target) ? { steps: stepsView(spec.target) } : { target: targetView(spec.target) }),
    payload: spec.payload,
    retry: retryView(spec.retry),
    timeout: formatDuration(spec.timeoutMs),
    ...(spec.concurrency === null ? {} : { concurrency: spec.concurrency }),
    ...(spec.priority === DEFAULT_PRIORITY ? {} : { priority: spec.priority }),
    ...(spec.fairness === null ? {} : { fairness: spec.fairness }),
    startAt: formatOptionalInstant(spec.startAtMs === null ? null : new Date(spec.startAtMs)),
    endAt: formatOptionalInstant(spec.endAtMs === null ? null : new Date(spec.endAtMs)),
    maxRuns: spec.maxRuns,
    jitter: formatDuration(spec.jitterMs),
    labels: spec.labels,
    ...(spec.expect === null ? {} : { expect: { succeededWithin: formatDuration(spec.expect.succeededWithinMs) } }),
    ...(spec.calendar === null ? {} : { calendar: spec.calendar }),
  };
}

const handler = { type: 'handler', name: 'echo' };
const BODIES: [string, Record<string, unknown>][] = [
  ['a one-shot timer', { in: '10m', target: handler, payload: { i: 1 }, idempotencyKey: 'timer-1' }],
  ['an instant, paused', { at: '2026-06-02T09:30:00.250Z', target: handler, paused: true }],
  [
    'a cron schedule with every option',
    {
      name: 'nightly',
      cron: '30 2 * * *',
      timezone: 'Europe/Berlin',
      dst: { gap: 'skip', overlap: 'auto' },
      catchup: { mode: 'all', window: '1h', limit: 5 },
      overlap: 'buffer_one',
      target: { type: 'http', url: 'https://example.com/hook', method: 'PUT', headers: { 'X-B': '2', 'X-A': '1' }, timeout: '45s' },
      payload: { z: [1, { y: null }], a: 'x' },
      retry: { maxAttempts: 4, backoff: { type: 'fixed', base: '2s' } },
      timeout: '5m',
      concurrency: { key: 'payload.a', limit: 2 },
      priority: 2,
      fairness: { key: 'payload.a', weight: 3 },
      startAt: '2026-06-01T13:00:00Z',
      endAt: '2026-12-01T00:00:00Z',
      maxRuns: 40,
      jitter: '30s',
      labels: { tier: 'gold', team: 'billing' },
      expect: { succeededWithin: '15m' },
      calendar: { weekdaysOnly: true, exclude: ['holidays'], onExcluded: 'next' },
    },
  ],
  ['a cron schedule in real time, both policies given', { cron: '*/5 * * * *', dst: { gap: 'shift', overlap: 'last' }, target: handler }],
  ['an interval with a catch-up window', { every: '90s', catchup: { mode: 'latest', window: '10m' }, target: handler }],
  ['a schedule started by events with debounce and a rate limit', { on: { event: 'order.paid', match: { 'data.plan': 'pro' } }, debounce: { period: '5s', maxWait: '1m' }, rateLimit: { limit: 3, period: '1h', key: 'payload.event.data.id' }, target: handler }],
  ['a schedule started by events with a batch', { on: { event: 'order.paid' }, batch: { maxSize: 10, timeout: '30s' }, target: handler }],
  [
    'steps',
    {
      cron: '0 9 * * 1-5',
      steps: [
        { name: 'fetch', target: handler, retry: { maxAttempts: 2 }, timeout: '10s' },
        { name: 'send', dependsOn: ['fetch'], target: { type: 'http', url: 'https://example.com/send' }, priority: 1 },
      ],
    },
  ],
];

describe('schedule views spelled out', () => {
  it.each(BODIES)('%s: the view, key for key in the same order', (_name, body) => {
    const { spec, paused } = readScheduleCreate(body, NOW);
    for (const deduped of [false, true]) {
      const row = rowOf(spec, paused ? 'paused' : 'active');
      expect(JSON.stringify(scheduleView(row, deduped))).toBe(JSON.stringify(spreadScheduleView(row, deduped)));
    }
  });

  it.each(BODIES)('%s: the definition, key for key in the same order', (_name, body) => {
    const { spec } = readScheduleCreate(body, NOW);
    expect(JSON.stringify(specDefinition(spec))).toBe(JSON.stringify(spreadSpecDefinition(spec)));
  });

  it('explains a DST policy with the declared sides first', () => {
    const dst = { gap: 'auto', overlap: 'first' } as const;
    expect(Object.keys(explainDstPolicy(parseCron('30 2 * * *'), dst))).toEqual(['gap', 'overlap', 'resolved', 'description']);
    expect(explainDstPolicy(null, dst)).toEqual({ gap: 'auto', overlap: 'first', resolved: null, description: 'not applicable: intervals and one-shot timers fire at instants, not wall times' });
  });
});
