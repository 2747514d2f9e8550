import { describe, expect, it } from 'vitest';
import { ValidationError } from './errors.js';
import { checkKeysResolve, concurrencyFor, keyTemplatePaths, resolveConcurrencyKey } from './concurrency.js';

describe('concurrency key templates', () => {
  it.each([
    ['a literal key', 'reports', null, 'reports'],
    ['a payload field', 'customer-{{payload.customerId}}', { customerId: 42 }, 'customer-42'],
    ['spaces inside the braces', 'c-{{ payload.id }}', { id: 'x' }, 'c-x'],
    ['a nested field', '{{payload.a.b}}/{{payload.c}}', { a: { b: 'one' }, c: true }, 'one/true'],
    ['the whole payload', 'p-{{payload}}', 'scalar', 'p-scalar'],
    ['a field with dashes', '{{payload.tenant-id}}', { 'tenant-id': 't1' }, 't1'],
  ])('resolves %s', (_, template, payload, key) => {
    expect(resolveConcurrencyKey(template, payload)).toEqual({ kind: 'resolved', key });
  });

  it.each([
    ['an absent field', 'c-{{payload.customerId}}', { other: 1 }, 'payload.customerId is absent from the payload'],
    ['a null field', 'c-{{payload.id}}', { id: null }, 'payload.id is null'],
    ['an object', 'c-{{payload.a}}', { a: { b: 1 } }, 'payload.a is an object'],
    ['an array', 'c-{{payload.a}}', { a: [1] }, 'payload.a is an array'],
    ['a path through a scalar', 'c-{{payload.a.b}}', { a: 'text' }, 'payload.a.b is absent'],
    ['no payload', 'c-{{payload.a}}', null, 'payload.a is absent'],
    ['an inherited property', 'c-{{payload.toString}}', {}, 'payload.toString is absent'],
    ['an empty key', '{{payload.a}}', { a: '' }, 'resolves to an empty key'],
    ['a key too long', '{{payload.a}}', { a: 'x'.repeat(201) }, 'resolves to 201 characters'],
  ])('leaves %s unresolved', (_, template, payload, reason) => {
    const resolution = resolveConcurrencyKey(template, payload);
    expect(resolution.kind).toBe('unresolved');
    expect(resolution.kind === 'unresolved' && resolution.reason).toContain(reason);
  });

  it.each([
    ['no placeholder', 'reports', []],
    ['two placeholders', '{{payload.a}}-{{payload.b.c}}', [['a'], ['b', 'c']]],
    ['the payload itself', '{{payload}}', [[]]],
  ])('reads the paths of %s', (_, template, paths) => {
    expect(keyTemplatePaths(template, 'concurrency.key')).toEqual(paths);
  });

  it.each([
    ['a placeholder that is no payload path', 'x-{{customer}}', 'is not a payload path'],
    ['an expression', '{{payload.a + 1}}', 'is not a payload path'],
    ['an empty placeholder', '{{}}', 'is not a payload path'],
    ['an unclosed placeholder', 'x-{{payload.a', 'unclosed placeholder'],
    ['a stray closing brace pair', 'x-}}', 'unclosed placeholder'],
  ])('refuses %s', (_, template, words) => {
    expect(() => keyTemplatePaths(template, 'concurrency.key')).toThrow(words);
  });

  it('refuses a declaration whose payload cannot resolve its keys, naming the field', () => {
    expect(() => concurrencyFor({ key: 'c-{{payload.id}}', limit: 1 }, {}, 'concurrency')).toThrow(ValidationError);
    try {
      checkKeysResolve({
        concurrency: null,
        payload: { id: 1 },
        target: { type: 'steps', steps: [{ concurrency: { key: 'c-{{payload.id}}', limit: 1 } }, { concurrency: { key: '{{payload.missing}}', limit: 2 } }] },
      });
      expect.unreachable();
    } catch (error) {
      expect((error as ValidationError).field).toBe('steps[1].concurrency.key');
    }
    expect(concurrencyFor({ key: 'c-{{payload.id}}', limit: 3 }, { id: 7 }, 'concurrency')).toEqual({ key: 'c-7', limit: 3 });
    expect(concurrencyFor(null, null, 'concurrency')).toBeNull();
  });
});
