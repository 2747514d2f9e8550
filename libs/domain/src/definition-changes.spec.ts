import { describe, expect, it } from 'vitest';
import { definitionChanges } from './definition-changes.js';

const base = {
  name: 'nightly',
  cron: '30 2 * * *',
  timezone: 'Europe/Berlin',
  target: { type: 'handler', name: 'report', queue: 'billing' },
  retry: { maxAttempts: 3, backoff: { type: 'exponential', base: '1s', max: '1m', jitter: 0.2 } },
  payload: { a: 1, nested: { b: 2 } },
  labels: { team: 'billing' },
};

describe('definitionChanges', () => {
  it.each([
    ['nothing changed', base, base, []],
    ['a top-level field', base, { ...base, timezone: 'UTC' }, [{ field: 'timezone', from: 'Europe/Berlin', to: 'UTC' }]],
    [
      'a nested field, by its dotted path',
      base,
      { ...base, retry: { ...base.retry, backoff: { ...base.retry.backoff, max: '5m' } } },
      [{ field: 'retry.backoff.max', from: '1m', to: '5m' }],
    ],
    ['the payload, whole', base, { ...base, payload: { a: 1, nested: { b: 3 } } }, [{ field: 'payload', from: base.payload, to: { a: 1, nested: { b: 3 } } }]],
    [
      'timing changed from cron to every',
      base,
      (({ cron: _cron, ...rest }) => ({ ...rest, every: '15m' }))(base),
      [
        { field: 'cron', from: '30 2 * * *', to: null },
        { field: 'every', from: null, to: '15m' },
      ],
    ],
    ['a label added', base, { ...base, labels: { team: 'billing', tier: 'gold' } }, [{ field: 'labels.tier', from: null, to: 'gold' }]],
    ['a whole object from null', { ...base, labels: null }, base, [{ field: 'labels', from: null, to: { team: 'billing' } }]],
    ['an array compared whole', { ...base, tags: [1, 2] }, { ...base, tags: [2, 1] }, [{ field: 'tags', from: [1, 2], to: [2, 1] }]],
  ])('%s', (_what, from, to, expected) => {
    expect(definitionChanges(from, to)).toEqual(expected);
  });

  it('lists every field of a new definition against none', () => {
    expect(definitionChanges(null, { name: 'x', every: '1m' })).toEqual([
      { field: 'every', from: null, to: '1m' },
      { field: 'name', from: null, to: 'x' },
    ]);
  });

  it('sorts changes by path', () => {
    const fields = definitionChanges(base, { ...base, timezone: 'UTC', cron: '0 * * * *', labels: { team: 'x' } }).map((c) => c.field);
    expect(fields).toEqual(['cron', 'labels.team', 'timezone']);
  });
});
