import { describe, expect, it } from 'vitest';
import { durationBetween, formatElapsed, runStory, type RunEvent } from './run-story.js';

const event = (id: number, at: string, kind: RunEvent['kind'], fromState: RunEvent['fromState'], toState: RunEvent['toState'], extra: Partial<RunEvent> = {}): RunEvent => ({
  id, at, kind, fromState, toState, leaseEpoch: null, actor: 'scheduler', reasonCode: null, detail: {}, ...extra,
});

describe('runStory', () => {
  it('orders by event id and describes each transition', () => {
    const rows = runStory([
      event(3, '2026-12-01T09:00:01.250Z', 'succeeded', 'running', 'succeeded', { leaseEpoch: 1, actor: 'worker:w1', reasonCode: 'COMPLETED' }),
      event(1, '2026-12-01T09:00:00Z', 'queued', null, 'queued'),
      event(2, '2026-12-01T09:00:00.400Z', 'claimed', 'queued', 'running', { leaseEpoch: 1, actor: 'worker:w1' }),
      event(4, '2026-12-01T09:02:05Z', 'renewed', 'running', 'running', { leaseEpoch: 1 }),
    ]);
    expect(rows.map((r) => [r.id, r.kind, r.transition, r.reason, r.epoch, r.actor, r.sinceStart])).toEqual([
      [1, 'queued', 'queued', '', '', 'scheduler', '+0 ms'],
      [2, 'claimed', 'queued → running', '', '1', 'worker:w1', '+400 ms'],
      [3, 'succeeded', 'running → succeeded', 'COMPLETED', '1', 'worker:w1', '+1.2 s'],
      [4, 'renewed', '', '', '1', 'scheduler', '+2 min 5 s'],
    ]);
  });

  it('names the kinds of an event wait in words, and no other kind', () => {
    const rows = runStory([
      event(1, '2026-12-01T09:00:00Z', 'claimed', 'queued', 'running', { leaseEpoch: 1 }),
      event(2, '2026-12-01T09:00:01Z', 'awaiting_event', 'running', 'waiting', {
        leaseEpoch: 1,
        detail: { event: 'order.paid', match: { 'data.orderId': 'o-1' }, timeoutAt: '2026-12-02T09:00:01.000Z' },
      }),
      event(3, '2026-12-01T09:05:00Z', 'event_received', 'waiting', 'queued', { actor: 'api', detail: { event: 'order.paid', eventId: 'evt-7' } }),
    ]);
    expect(rows.map((r) => [r.kind, r.words])).toEqual([
      ['claimed', ''],
      ['awaiting_event', 'waits for event order.paid where data.orderId = "o-1", until 2026-12-02 09:00:01Z'],
      ['event_received', 'received event order.paid (evt-7)'],
    ]);
  });

  it('names each event a debounce or batch gathered into the run, and changes no state', () => {
    const rows = runStory([
      event(1, '2026-12-01T09:00:00Z', 'queued', null, 'queued', { detail: {} }),
      event(2, '2026-12-01T09:00:00.300Z', 'event_gathered', 'queued', 'queued', { actor: 'api', detail: { eventId: 'evt-2', control: 'batch' } }),
      event(3, '2026-12-01T09:00:00.600Z', 'event_gathered', 'queued', 'queued', { actor: 'api', detail: { eventId: 'evt-3', control: 'debounce' } }),
      event(4, '2026-12-01T09:00:00.900Z', 'event_gathered', 'queued', 'queued', { actor: 'api', detail: {} }),
    ]);
    expect(rows.map((r) => [r.kind, r.transition, r.words])).toEqual([
      ['queued', 'queued', ''],
      ['event_gathered', '', 'gathered event evt-2 into its batch'],
      ['event_gathered', '', 'gathered event evt-3 (debounce: the run now carries it, the last event)'],
      ['event_gathered', '', 'gathered an event'],
    ]);
  });

  it('names the versions a run moved between, and changes no state', () => {
    const rows = runStory([
      event(1, '2026-12-01T09:00:00Z', 'version_moved', 'queued', 'queued', { actor: 'api', detail: { from: '2026.12.03-1', to: '2026.12.04-1' } }),
      event(2, '2026-12-01T09:00:01Z', 'version_moved', 'queued', 'queued', { actor: 'api', detail: { from: '2026.12.04-1', to: null } }),
      event(3, '2026-12-01T09:00:02Z', 'upgraded', 'queued', 'running', { actor: 'worker:w2', detail: { from: '2026.12.03-1', to: '2026.12.05-1' } }),
    ]);
    expect(rows.map((r) => [r.kind, r.words])).toEqual([
      ['version_moved', 'moved from version 2026.12.03-1 to version 2026.12.04-1'],
      ['version_moved', 'moved from version 2026.12.04-1 to any version'],
      ['upgraded', 'taken over from version 2026.12.03-1 to version 2026.12.05-1 by an upgrade "auto" worker'],
    ]);
  });

  it('is empty without events', () => {
    expect(runStory([])).toEqual([]);
  });
});

describe('formatElapsed and durationBetween', () => {
  it.each<[number, string]>([
    [0, '0 ms'],
    [999, '999 ms'],
    [1_000, '1.0 s'],
    [4_250, '4.2 s'],
    [59_999, '59.9 s'],
    [60_000, '1 min 0 s'],
    [185_000, '3 min 5 s'],
    [3_600_000, '1 h 0 min'],
    [7_800_000, '2 h 10 min'],
    [90_000_000, '1 d 1 h'],
    [-1, ''],
    [Number.NaN, ''],
  ])('%d ms → %s', (ms, words) => {
    expect(formatElapsed(ms)).toBe(words);
  });

  it.each<[string | null, string | null, string]>([
    ['2026-12-01T09:00:00Z', '2026-12-01T09:00:02.500Z', '2.5 s'],
    ['2026-12-01T09:00:00Z', null, ''],
    [null, '2026-12-01T09:00:00Z', ''],
  ])('%s to %s → %s', (start, end, words) => {
    expect(durationBetween(start, end)).toBe(words);
  });
});
