import { describe, expect, it } from 'vitest';
import { eventMatches, MatchIndex, valueAtPath, type EventMatch } from './event-match.js';
import type { JsonValue } from './closed-sets.js';

const event = { id: 'e-1', name: 'order.paid', data: { plan: 'pro', n: 1, tags: ['a', 'b'], customer: { id: 'c-42', tier: null }, nested: { x: { y: true } } } };

describe('eventMatches', () => {
  it.each<[string, EventMatch, boolean]>([
    ['nothing to match', {}, true],
    ['equal text', { 'data.plan': 'pro' }, true],
    ['other text', { 'data.plan': 'free' }, false],
    ['1 and 1.0', { 'data.n': 1.0 }, true],
    ['a number and its text', { 'data.n': '1' }, false],
    ['a nested path', { 'data.nested.x.y': true }, true],
    ['a missing path', { 'data.missing': 'x' }, false],
    ['a missing path matched with null', { 'data.missing': null }, false],
    ['a present null', { 'data.customer.tier': null }, true],
    ['an object whatever its key order', { 'data.customer': { tier: null, id: 'c-42' } }, true],
    ['an object with a key less', { 'data.customer': { id: 'c-42' } }, false],
    ['an array in order', { 'data.tags': ['a', 'b'] }, true],
    ['an array in another order', { 'data.tags': ['b', 'a'] }, false],
    ['an array element by index', { 'data.tags.1': 'b' }, true],
    ['the id and the name', { id: 'e-1', name: 'order.paid' }, true],
    ['all entries must hold', { 'data.plan': 'pro', 'data.n': 2 }, false],
    ['a path through a scalar', { 'data.plan.x': 'pro' }, false],
  ])('%s', (_name, match, expected) => {
    expect(eventMatches(event as unknown as JsonValue, match)).toBe(expected);
  });

  it('reads a path as the ledger does', () => {
    expect(valueAtPath(event as unknown as JsonValue, 'data.customer.id')).toBe('c-42');
    expect(valueAtPath(event as unknown as JsonValue, 'data.tags.2')).toBeUndefined();
  });
});

describe('MatchIndex', () => {
  const items: { item: string; match: EventMatch }[] = [
    { item: 'all', match: {} },
    { item: 'pro', match: { 'data.plan': 'pro' } },
    { item: 'pro-1', match: { 'data.plan': 'pro', 'data.n': 1 } },
    { item: 'pro-2', match: { 'data.n': 2, 'data.plan': 'pro' } },
    { item: 'free', match: { 'data.plan': 'free' } },
    { item: 'customer', match: { 'data.customer': { id: 'c-42', tier: null } } },
  ];
  const index = new MatchIndex(items);

  it.each<[string, JsonValue, string[]]>([
    ['the pro plan, n 1', event as unknown as JsonValue, ['all', 'pro', 'pro-1', 'customer']],
    ['the free plan', { data: { plan: 'free', n: 2 } }, ['all', 'free']],
    ['no data', { id: 'x', name: 'n' }, ['all']],
  ])('finds what %s matches, as comparing each would', (_name, e, expected) => {
    expect(index.matching(e).sort()).toEqual(expected.sort());
    expect(items.filter((i) => eventMatches(e, i.match)).map((i) => i.item).sort()).toEqual(expected.sort());
  });

  it('compares an event with few items when many listen to one name', () => {
    const many = new MatchIndex(Array.from({ length: 1_000 }, (_, n) => ({ item: n, match: { 'data.n': n } as EventMatch })));
    expect(many.matching({ data: { n: 737 } })).toEqual([737]);
    expect(many.matching({ data: { n: 1_000 } })).toEqual([]);
  });
});
