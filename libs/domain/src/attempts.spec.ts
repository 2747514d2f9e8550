import { describe, expect, it } from 'vitest';
import { attemptsOf, type AttemptEvent } from './attempts.js';

const at = (s: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, s));
const ev = (s: number, kind: string, epoch: number | null, extra: Partial<AttemptEvent> = {}): AttemptEvent => ({
  at: at(s),
  kind,
  leaseEpoch: epoch,
  actor: extra.actor ?? 'w1',
  reasonCode: extra.reasonCode ?? null,
  detail: extra.detail ?? {},
});
const claimed = (s: number, epoch: number, attempt: number, actor = 'w1') => ev(s, 'claimed', epoch, { actor, detail: { attempt } });

describe('attemptsOf', () => {
  it.each<[string, AttemptEvent[], unknown[]]>([
    ['no claim yet: no attempt', [ev(0, 'queued', 0)], []],
    [
      'a running attempt',
      [ev(0, 'queued', 0), claimed(1, 1, 1)],
      [{ attempt: 1, leaseEpoch: 1, worker: 'w1', startedAt: at(1), finishedAt: null, outcome: null, reasonCode: null, error: null, response: null }],
    ],
    [
      'a success with the HTTP response kept in the event',
      [ev(0, 'queued', 0), claimed(1, 1, 1), ev(2, 'succeeded', 1, { reasonCode: 'SUCCEEDED', detail: { response: { status: 200 } } })],
      [{ attempt: 1, leaseEpoch: 1, worker: 'w1', startedAt: at(1), finishedAt: at(2), outcome: 'succeeded', reasonCode: 'SUCCEEDED', error: null, response: { status: 200 } }],
    ],
    [
      'a retry, then a dead letter',
      [
        claimed(1, 1, 1),
        ev(2, 'retry_scheduled', 1, { reasonCode: 'HTTP_5XX', detail: { error: { message: 'answered 503' }, response: { status: 503 } } }),
        claimed(3, 2, 2),
        ev(4, 'dead', 2, { reasonCode: 'HTTP_5XX', detail: { error: { message: 'answered 500' } } }),
      ],
      [
        { attempt: 1, leaseEpoch: 1, worker: 'w1', startedAt: at(1), finishedAt: at(2), outcome: 'failed', reasonCode: 'HTTP_5XX', error: { message: 'answered 503' }, response: { status: 503 } },
        { attempt: 2, leaseEpoch: 2, worker: 'w1', startedAt: at(3), finishedAt: at(4), outcome: 'failed', reasonCode: 'HTTP_5XX', error: { message: 'answered 500' }, response: null },
      ],
    ],
    [
      'a crash reaped (epoch + 1), a second worker finishes, the first one\'s late verdict refused',
      [
        claimed(1, 1, 1, 'w1'),
        ev(5, 'reaped', 2, { actor: 'reaper', reasonCode: 'LEASE_EXPIRED' }),
        claimed(6, 3, 1, 'w2'),
        ev(7, 'succeeded', 3, { actor: 'w2', reasonCode: 'SUCCEEDED' }),
        ev(8, 'lease_lost', 1, { reasonCode: 'LEASE_LOST' }),
      ],
      [
        { attempt: 1, leaseEpoch: 1, worker: 'w1', startedAt: at(1), finishedAt: at(5), outcome: 'lost', reasonCode: 'LEASE_EXPIRED', error: null, response: null },
        { attempt: 1, leaseEpoch: 3, worker: 'w2', startedAt: at(6), finishedAt: at(7), outcome: 'succeeded', reasonCode: 'SUCCEEDED', error: null, response: null },
      ],
    ],
    [
      'drained at shutdown, poisoned after a crash',
      [claimed(1, 1, 1), ev(2, 'drained', 2), claimed(3, 3, 1), ev(9, 'poisoned', 4, { reasonCode: 'POISONED' })],
      [
        { attempt: 1, leaseEpoch: 1, worker: 'w1', startedAt: at(1), finishedAt: at(2), outcome: 'drained', reasonCode: null, error: null, response: null },
        { attempt: 1, leaseEpoch: 3, worker: 'w1', startedAt: at(3), finishedAt: at(9), outcome: 'lost', reasonCode: 'POISONED', error: null, response: null },
      ],
    ],
    [
      'handed back by a worker without the handler, then run by one with it',
      [claimed(1, 1, 1), ev(2, 'handed_back', 2, { reasonCode: 'HANDLER_NOT_REGISTERED' }), claimed(3, 3, 1), ev(4, 'succeeded', 3, { reasonCode: 'SUCCEEDED' })],
      [
        { attempt: 1, leaseEpoch: 1, worker: 'w1', startedAt: at(1), finishedAt: at(2), outcome: 'handed_back', reasonCode: 'HANDLER_NOT_REGISTERED', error: null, response: null },
        { attempt: 1, leaseEpoch: 3, worker: 'w1', startedAt: at(3), finishedAt: at(4), outcome: 'succeeded', reasonCode: 'SUCCEEDED', error: null, response: null },
      ],
    ],
    [
      'parked by a sleep, then by a wait for a signal, then resumed to succeed',
      [
        claimed(1, 1, 1),
        ev(2, 'slept', 2),
        claimed(3, 3, 1),
        ev(4, 'awaiting_signal', 4),
        ev(5, 'signalled', 4),
        claimed(6, 5, 1),
        ev(7, 'succeeded', 5, { reasonCode: 'SUCCEEDED' }),
      ],
      [
        { attempt: 1, leaseEpoch: 1, worker: 'w1', startedAt: at(1), finishedAt: at(2), outcome: 'parked', reasonCode: null, error: null, response: null },
        { attempt: 1, leaseEpoch: 3, worker: 'w1', startedAt: at(3), finishedAt: at(4), outcome: 'parked', reasonCode: null, error: null, response: null },
        { attempt: 1, leaseEpoch: 5, worker: 'w1', startedAt: at(6), finishedAt: at(7), outcome: 'succeeded', reasonCode: 'SUCCEEDED', error: null, response: null },
      ],
    ],
    [
      'cancelled while running; a cancel request alone ends nothing',
      [claimed(1, 1, 1), ev(2, 'cancel_requested', 1), ev(3, 'cancelled', 1, { reasonCode: 'CANCELLED_BY_USER' })],
      [{ attempt: 1, leaseEpoch: 1, worker: 'w1', startedAt: at(1), finishedAt: at(3), outcome: 'cancelled', reasonCode: 'CANCELLED_BY_USER', error: null, response: null }],
    ],
  ])('%s', (_name, events, expected) => {
    expect(attemptsOf(events)).toEqual(expected);
  });
});
