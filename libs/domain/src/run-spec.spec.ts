import { describe, expect, it } from 'vitest';
import { ValidationError, type ErrorCode } from './errors.js';
import { readRunCreate } from './wire/index.js';

const NOW = Date.parse('2026-06-01T12:00:00Z');
const TARGET = { type: 'handler', name: 'echo' };

describe('readRunCreate', () => {
  it('fills in the defaults: now, no payload, the default retry policy, 5 minutes', () => {
    expect(readRunCreate({ target: TARGET }, NOW)).toEqual({
      target: { type: 'handler', name: 'echo', queue: 'default' },
      payload: null,
      retry: { maxAttempts: 3, backoff: { type: 'exponential', baseMs: 60_000, maxMs: 3_600_000, jitter: 0.1 } },
      timeoutMs: 300_000,
      concurrency: null,
      priority: 3,
      fairness: null,
      availableAtMs: NOW,
      idempotencyKey: null,
    });
  });

  it('reads every field', () => {
    expect(
      readRunCreate(
        {
          target: { type: 'http', url: 'https://example.com/hook', method: 'PUT' },
          payload: { order: 42, items: ['a', 'b'] },
          retry: { maxAttempts: 1 },
          timeout: '90s',
          concurrency: { key: 'order-{{payload.order}}', limit: 2 },
          priority: 1,
          fairness: { key: 'tenant-{{payload.order}}', weight: 7 },
          availableAt: '2026-06-01T13:00:00+01:00',
          idempotencyKey: 'order-42',
        },
        NOW,
      ),
    ).toEqual({
      target: { type: 'http', url: 'https://example.com/hook', method: 'PUT', headers: {}, timeoutMs: 30_000 },
      payload: { order: 42, items: ['a', 'b'] },
      retry: { maxAttempts: 1, backoff: { type: 'exponential', baseMs: 60_000, maxMs: 3_600_000, jitter: 0.1 } },
      timeoutMs: 90_000,
      concurrency: { key: 'order-{{payload.order}}', limit: 2 },
      priority: 1,
      fairness: { key: 'tenant-{{payload.order}}', weight: 7 },
      availableAtMs: NOW,
      idempotencyKey: 'order-42',
    });
  });

  it.each<[string, string, number]>([
    ['a future availableAt is kept', '2026-06-01T12:30:00Z', Date.parse('2026-06-01T12:30:00Z')],
    ['an availableAt 1 ms ahead is kept', '2026-06-01T12:00:00.001Z', NOW + 1],
    ['an availableAt of now is now', '2026-06-01T12:00:00Z', NOW],
    ['a past availableAt runs now, never earlier', '2026-05-01T00:00:00Z', NOW],
  ])('%s', (_name, availableAt, expected) => {
    expect(readRunCreate({ target: TARGET, availableAt }, NOW).availableAtMs).toBe(expected);
  });

  it('passes the payload through verbatim', () => {
    const payload = { z: 1, a: [null, true, 'x', { nested: 1.5 }] };
    expect(JSON.stringify(readRunCreate({ target: TARGET, payload }, NOW).payload)).toBe(JSON.stringify(payload));
  });

  it.each<[string, unknown, ErrorCode, string | null]>([
    ['body not an object', 'run it', 'VALIDATION_FAILED', null],
    ['a schedule field', { target: TARGET, cron: '* * * * *' }, 'UNKNOWN_FIELD', 'cron'],
    ['an unknown field', { target: TARGET, urgency: 1 }, 'UNKNOWN_FIELD', 'urgency'],
    ['a priority out of range', { target: TARGET, priority: 6 }, 'VALIDATION_FAILED', 'priority'],
    ['a priority not an integer', { target: TARGET, priority: 1.5 }, 'VALIDATION_FAILED', 'priority'],
    ['a fairness without a key', { target: TARGET, fairness: { weight: 2 } }, 'MISSING_FIELD', 'fairness.key'],
    ['a fairness weight out of range', { target: TARGET, fairness: { key: 'k', weight: 101 } }, 'VALIDATION_FAILED', 'fairness.weight'],
    ['a fairness key the payload cannot resolve', { target: TARGET, fairness: { key: 'k-{{payload.x}}' } }, 'VALIDATION_FAILED', 'fairness.key'],
    ['no target', { payload: {} }, 'MISSING_FIELD', 'target'],
    ['a handler queue not a name', { target: { type: 'handler', name: 'nope', queue: 'a b' } }, 'VALIDATION_FAILED', 'target.queue'],
    ['availableAt not an instant', { target: TARGET, availableAt: 'later' }, 'INVALID_INSTANT', 'availableAt'],
    ['availableAt without an offset', { target: TARGET, availableAt: '2026-06-01T13:00:00' }, 'INVALID_INSTANT', 'availableAt'],
    ['timeout zero', { target: TARGET, timeout: 0 }, 'INVALID_DURATION', 'timeout'],
    ['timeout over 24 h', { target: TARGET, timeout: '1d1s' }, 'INVALID_DURATION', 'timeout'],
    ['payload over 256 KiB', { target: TARGET, payload: { big: 'x'.repeat(262_144) } }, 'PAYLOAD_TOO_LARGE', 'payload'],
    ['retry attempts over 100', { target: TARGET, retry: { maxAttempts: 101 } }, 'VALIDATION_FAILED', 'retry.maxAttempts'],
    ['idempotencyKey empty', { target: TARGET, idempotencyKey: '' }, 'VALIDATION_FAILED', 'idempotencyKey'],
    ['idempotencyKey over 200 characters', { target: TARGET, idempotencyKey: 'k'.repeat(201) }, 'VALIDATION_FAILED', 'idempotencyKey'],
  ])('refuses %s: %s on %s', (_name, body, code, field) => {
    let caught: unknown;
    try {
      readRunCreate(body, NOW);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(ValidationError);
    expect(caught).toMatchObject({ code, field });
  });
});
