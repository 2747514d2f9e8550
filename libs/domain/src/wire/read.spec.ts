import { describe, expect, it } from 'vitest';
import { OVERLAP_POLICIES } from '../closed-sets.js';
import { ValidationError } from '../errors.js';
import { readEnum, readObject, readPayload } from '../json-readers.js';
import { readWire, ScheduleTrigger } from './index.js';

/** What the domain's readers make of a trigger body, field by field. */
function readTriggerByHand(body: unknown) {
  const obj = readObject(body, '', ['overlap', 'payload']);
  const overlap = readEnum(obj, 'overlap', '', OVERLAP_POLICIES);
  const payload = obj.payload === undefined ? undefined : readPayload(obj, 'payload', '');
  return { overlap, payload };
}

function outcome(read: () => unknown): unknown {
  try {
    return { value: read() };
  } catch (error) {
    if (!(error instanceof ValidationError)) throw error;
    return { code: error.code, field: error.field, message: error.message };
  }
}

describe('readWire', () => {
  it.each<[string, unknown]>([
    ['a number', 5],
    ['an array', []],
    ['null', null],
    ['an unknown field', { overlap: 'allow', later: true }],
    ['an unknown field beside a bad value', { overlap: 'never', later: true }],
    ['a policy not in the set', { overlap: 'never' }],
    ['a policy of the wrong type', { overlap: 5 }],
    ['a payload over the limit', { payload: 'x'.repeat(300 * 1024) }],
  ])('refuses %s as the readers do', (_, body) => {
    const expected = outcome(() => readTriggerByHand(body));
    expect(expected).toHaveProperty('code');
    expect(outcome(() => readWire(ScheduleTrigger, body))).toEqual(expected);
  });

  it('refuses a missing body, an unknown field and a bad policy with the codes the API answers with', () => {
    expect(outcome(() => readWire(ScheduleTrigger, 'x'))).toEqual({ code: 'VALIDATION_FAILED', field: null, message: 'the body must be a JSON object' });
    expect(outcome(() => readWire(ScheduleTrigger, { nope: 1 }))).toEqual({
      code: 'UNKNOWN_FIELD',
      field: 'nope',
      message: 'unknown field "nope"; accepted fields here are: overlap, payload',
    });
    expect(outcome(() => readWire(ScheduleTrigger, { payload: 'x'.repeat(300 * 1024) }))).toMatchObject({ code: 'PAYLOAD_TOO_LARGE', field: 'payload' });
  });

  it.each<[string, Record<string, unknown>]>([
    ['an empty body', {}],
    ['a policy', { overlap: 'buffer_one' }],
    ['null as absent', { overlap: null }],
    ['a null payload', { payload: null }],
    ['a nested payload', { overlap: 'allow', payload: { a: [1, 'two', { three: null }] } }],
  ])('reads %s as the readers do', (_, body) => {
    const byHand = readTriggerByHand(body);
    const read = readWire(ScheduleTrigger, body);
    expect(read.overlap ?? undefined).toEqual(byHand.overlap);
    expect(read.payload).toEqual(byHand.payload);
  });
});
