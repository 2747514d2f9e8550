import { describe, expect, it } from 'vitest';
import { OVERLAP_POLICIES } from '../closed-sets.js';
import { ValidationError } from '../errors.js';
import { parseInstant, readEnum, readObject, readPayload } from '../json-readers.js';
import { BackfillRequest, readWire, ScheduleTrigger } from './index.js';

/** What the domain's readers make of a trigger body, field by field. */
function readTriggerByHand(body: unknown) {
  const obj = readObject(body, '', ['overlap', 'payload']);
  const overlap = readEnum(obj, 'overlap', '', OVERLAP_POLICIES);
  const payload = obj.payload === undefined ? undefined : readPayload(obj, 'payload', '');
  return { overlap, payload };
}

/** What the domain's readers make of a backfill body, before the range is checked against now. */
function readBackfillByHand(body: unknown) {
  const obj = readObject(body, '', ['from', 'to', 'overlap']);
  if (obj.from === undefined) throw new ValidationError('MISSING_FIELD', 'from', 'from is required: the first instant of the range');
  if (obj.to === undefined) throw new ValidationError('MISSING_FIELD', 'to', 'to is required: the last instant of the range');
  return { from: parseInstant(obj.from, 'from'), to: parseInstant(obj.to, 'to'), overlap: readEnum(obj, 'overlap', '', OVERLAP_POLICIES) };
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

  const at = '2026-01-01T00:00:00Z';
  it.each<[string, unknown]>([
    ['a string', 'from now on'],
    ['no from', { to: at }],
    ['no from and no to, with an unknown field', { x: 1 }],
    ['no to', { from: at }],
    ['a number for an instant', { from: 5, to: at }],
    ['null for an instant', { from: at, to: null }],
    ['a day the month does not have', { from: '2026-02-30T00:00:00Z', to: at }],
    ['a local time', { from: at, to: '2026-01-01T00:00:00' }],
    ['a year past 9999', { from: at, to: '9999-12-31T23:30:00-01:00' }],
    ['an unknown field beside a bad instant', { from: 'soon', to: at, until: at }],
    ['a policy not in the set', { from: at, to: at, overlap: 'queue' }],
  ])('refuses a backfill body with %s as the readers do', (_, body) => {
    const expected = outcome(() => readBackfillByHand(body));
    expect(expected).toHaveProperty('code');
    expect(outcome(() => readWire(BackfillRequest, body))).toEqual(expected);
  });

  it.each<[string, Record<string, unknown>]>([
    ['two instants', { from: at, to: '2026-01-01T03:00:00+02:00' }],
    ['a policy', { from: at, to: at, overlap: 'allow' }],
    ['null as absent', { from: at, to: at, overlap: null }],
  ])('reads a backfill body with %s as the readers do', (_, body) => {
    const byHand = readBackfillByHand(body);
    const read = readWire(BackfillRequest, body);
    expect({ ...read, overlap: read.overlap ?? undefined }).toEqual(byHand);
  });
});
