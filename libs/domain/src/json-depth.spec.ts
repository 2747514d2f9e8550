import { describe, expect, it } from 'vitest';
import { MAX_JSON_DEPTH, graphqlNestingDepth, tooDeepPath } from './json-depth.js';

function nested(levels: number, leaf: unknown = 1): unknown {
  let value = leaf;
  for (let i = 0; i < levels; i++) value = { a: value };
  return value;
}

describe('tooDeepPath', () => {
  it.each<[string, unknown, number, (string | number)[] | null]>([
    ['a scalar', 7, 1, null],
    ['null', null, 1, null],
    ['an empty object at the limit', {}, 1, null],
    ['an object inside the limit', { a: { b: 1 } }, 2, null],
    ['an object one level past the limit', { a: { b: {} } }, 2, ['a', 'b']],
    ['arrays count as levels', { list: [[1]] }, 2, ['list', 0]],
    ['the first too-deep branch is named', { ok: { x: 1 }, payload: { a: { b: {} } } }, 3, ['payload', 'a', 'b']],
    ['64 levels pass the default limit', nested(64), MAX_JSON_DEPTH, null],
  ])('%s', (_name, value, limit, expected) => {
    expect(tooDeepPath(value, limit)).toEqual(expected);
  });

  it('finds 65 levels too deep and names the path from the root', () => {
    expect(tooDeepPath({ payload: nested(64) })).toEqual(['payload', ...Array<string>(63).fill('a')]);
  });

  it('walks 100,000 levels without exhausting the stack', () => {
    const deep = JSON.parse(`${'['.repeat(100_000)}${']'.repeat(100_000)}`) as unknown;
    expect(tooDeepPath(deep)).toHaveLength(MAX_JSON_DEPTH);
  });
});

describe('graphqlNestingDepth', () => {
  it.each<[string, string, number]>([
    ['a flat query', '{ schedules { items { id } } }', 3],
    ['arguments and input literals count', 'mutation { createSchedule(input: { target: { type: "http" } }) { id } }', 4],
    ['lists count', 'query { a(x: [[1]]) }', 4],
    ['brackets inside strings do not', 'query { a(x: "{{{[[[(((") }', 2],
    ['escaped quotes stay inside the string', 'query { a(x: "\\"{{{") }', 2],
    ['block strings do not', 'query { a(x: """ {{{ " }}} """) }', 2],
    ['comments do not', '# {{{{{{\n{ a }', 1],
    ['5,000 nested input objects do', `mutation { m(input: ${'{a:'.repeat(5_000)}1${'}'.repeat(5_000)}) }`, 5_002],
  ])('%s', (_name, document, expected) => {
    expect(graphqlNestingDepth(document)).toBe(expected);
  });
});
