import { describe, expect, it } from 'vitest';
import { ValidationError } from './errors.js';
import { checkFairnessResolves, fairnessFor, fairnessOver, type FairnessSpec } from './priority.js';
import type { JsonValue } from './closed-sets.js';

const spec = (key: string, weight = 1): FairnessSpec => ({ key, weight });

describe('fairness keys over payloads', () => {
  it.each<[string, FairnessSpec | null, JsonValue | null, { key: string; weight: number } | null]>([
    ['no declaration', null, { tenant: 'a' }, null],
    ['a literal key', spec('everyone', 3), null, { key: 'everyone', weight: 3 }],
    ['a string field', spec('tenant-{{payload.tenant}}'), { tenant: 'a' }, { key: 'tenant-a', weight: 1 }],
    ['a number field', spec('t{{payload.n}}', 100), { n: 7 }, { key: 't7', weight: 100 }],
    ['a nested field', spec('{{payload.a.b}}'), { a: { b: true } }, { key: 'true', weight: 1 }],
    ['the whole payload', spec('{{payload}}'), 'acme', { key: 'acme', weight: 1 }],
    ['an event field', spec('{{event.data.t}}'), { event: { data: { t: 'x' } } }, { key: 'x', weight: 1 }],
  ])('%s resolves', (_name, declared, payload, expected) => {
    expect(fairnessFor(declared, payload, 'fairness')).toEqual(expected);
    expect(fairnessOver(declared, payload)).toEqual(expected);
  });

  it.each<[string, FairnessSpec, JsonValue | null, RegExp]>([
    ['a missing field', spec('t-{{payload.tenant}}'), {}, /fairness key t-\{\{payload.tenant\}\} cannot be resolved: payload.tenant is absent/],
    ['a null field', spec('{{payload.tenant}}'), { tenant: null }, /payload.tenant is null/],
    ['an object field', spec('{{payload.tenant}}'), { tenant: {} }, /payload.tenant is an object/],
    ['an array field', spec('{{payload.tenant}}'), { tenant: [] }, /payload.tenant is an array/],
    ['an empty key', spec('{{payload.tenant}}'), { tenant: '' }, /resolves to an empty key/],
    ['a key too long', spec('{{payload.tenant}}'), { tenant: 'x'.repeat(201) }, /resolves to 201 characters; at most 200/],
  ])('%s is refused naming fairness.key, or shares the key of runs without one when only known now', (_name, declared, payload, message) => {
    let refused: unknown;
    try {
      fairnessFor(declared, payload, 'fairness');
    } catch (error) {
      refused = error;
    }
    expect(refused).toBeInstanceOf(ValidationError);
    expect((refused as ValidationError).field).toBe('fairness.key');
    expect((refused as ValidationError).message).toMatch(message);
    expect(fairnessOver(declared, payload)).toBeNull();
  });

  it("checks a step's key over the run's payload, naming the step", () => {
    const target = { type: 'steps', steps: [{}, { fairness: spec('s-{{payload.s}}') }] };
    expect(() => checkFairnessResolves({ fairness: null, target, payload: { s: 1 } })).not.toThrow();
    expect(() => checkFairnessResolves({ fairness: null, target, payload: {} })).toThrow(expect.objectContaining({ field: 'steps[1].fairness.key' }));
    expect(() => checkFairnessResolves({ fairness: spec('{{payload.r}}'), target, payload: { s: 1 } }, 'run.')).toThrow(expect.objectContaining({ field: 'run.fairness.key' }));
  });
});
