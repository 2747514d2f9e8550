import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ValidationError } from '../errors.js';
import { BackfillRequest, readWire, ScheduleTrigger } from './index.js';
import { closedObject } from './read.js';

type Refusal = { code: string; field: string | null; message: string };

function outcome(read: () => unknown): unknown {
  try {
    return { value: read() };
  } catch (error) {
    if (!(error instanceof ValidationError)) throw error;
    return { code: error.code, field: error.field, message: error.message };
  }
}

describe('closedObject', () => {
  const retry = closedObject({ retry: closedObject({ backoff: closedObject({ a: z.unknown() }) }) });

  it.each<[string, unknown, string | null, string]>([
    ['an array', [], null, 'the body must be a JSON object'],
    ['null', null, null, 'the body must be a JSON object'],
    ['a number under a field', { retry: 5 }, 'retry', 'retry must be a JSON object'],
  ])('refuses %s', (_name, body, field, message) => {
    expect(outcome(() => readWire(retry, body))).toEqual({ code: 'VALIDATION_FAILED', field, message });
  });

  it('names an unknown key with its full path and the keys accepted there', () => {
    expect(outcome(() => readWire(retry, { retry: { backoff: { a: 1, b: 2 } } }))).toEqual({
      code: 'UNKNOWN_FIELD',
      field: 'retry.backoff.b',
      message: 'unknown field "retry.backoff.b"; accepted fields here are: a',
    });
  });
});

describe('readWire', () => {
  it.each<[string, unknown, Refusal]>([
    ["a number", 5, { code: "VALIDATION_FAILED", field: null, message: "the body must be a JSON object" }],
    ["an array", [], { code: "VALIDATION_FAILED", field: null, message: "the body must be a JSON object" }],
    ["null", null, { code: "VALIDATION_FAILED", field: null, message: "the body must be a JSON object" }],
    ["an unknown field", {"overlap": "allow", "later": true}, { code: "UNKNOWN_FIELD", field: "later", message: "unknown field \"later\"; accepted fields here are: overlap, payload" }],
    ["an unknown field beside a bad value", {"overlap": "never", "later": true}, { code: "UNKNOWN_FIELD", field: "later", message: "unknown field \"later\"; accepted fields here are: overlap, payload" }],
    ["a policy not in the set", {"overlap": "never"}, { code: "VALIDATION_FAILED", field: "overlap", message: "overlap must be one of \"allow\", \"skip\", \"buffer_one\", \"buffer_all\", \"replace\"; got \"never\"" }],
    ["a policy of the wrong type", {"overlap": 5}, { code: "VALIDATION_FAILED", field: "overlap", message: "overlap must be one of \"allow\", \"skip\", \"buffer_one\", \"buffer_all\", \"replace\"; got 5" }],
  ])('refuses a trigger body with %s', (_, body, expected) => {
    expect(outcome(() => readWire(ScheduleTrigger, body))).toEqual(expected);
  });

  it('refuses a payload over the limit with PAYLOAD_TOO_LARGE', () => {
    expect(outcome(() => readWire(ScheduleTrigger, { payload: 'x'.repeat(300 * 1024) }))).toEqual({
      code: 'PAYLOAD_TOO_LARGE',
      field: 'payload',
      message: 'payload is 307202 bytes of JSON; the limit is 262144 bytes (256 KiB). Store large data elsewhere and pass a reference',
    });
  });

  it.each<[string, Record<string, unknown>, { overlap: string | undefined; payload: unknown }]>([
    ['an empty body', {}, { overlap: undefined, payload: undefined }],
    ['a policy', { overlap: 'buffer_one' }, { overlap: 'buffer_one', payload: undefined }],
    ['null as absent', { overlap: null }, { overlap: undefined, payload: undefined }],
    ['a null payload', { payload: null }, { overlap: undefined, payload: null }],
    ['a nested payload', { overlap: 'allow', payload: { a: [1, 'two', { three: null }] } }, { overlap: 'allow', payload: { a: [1, 'two', { three: null }] } }],
  ])('reads a trigger body with %s', (_, body, expected) => {
    const read = readWire(ScheduleTrigger, body);
    expect({ overlap: read.overlap ?? undefined, payload: read.payload }).toEqual(expected);
  });

  const at = '2026-01-01T00:00:00Z';
  it.each<[string, unknown, Refusal]>([
    ["a string", "from now on", { code: "VALIDATION_FAILED", field: null, message: "the body must be a JSON object" }],
    ["no from", {"to": at}, { code: "MISSING_FIELD", field: "from", message: "from is required: the first instant of the range" }],
    ["no from and no to, with an unknown field", {"x": 1}, { code: "UNKNOWN_FIELD", field: "x", message: "unknown field \"x\"; accepted fields here are: from, to, overlap" }],
    ["no to", {"from": at}, { code: "MISSING_FIELD", field: "to", message: "to is required: the last instant of the range" }],
    ["a number for an instant", {"from": 5, "to": at}, { code: "INVALID_INSTANT", field: "from", message: "from must be an ISO 8601 instant with an offset, such as \"2026-12-01T09:00:00Z\"; got 5" }],
    ["null for an instant", {"from": at, "to": null}, { code: "INVALID_INSTANT", field: "to", message: "to must be an ISO 8601 instant with an offset, such as \"2026-12-01T09:00:00Z\"; got null" }],
    ["a day the month does not have", {"from": "2026-02-30T00:00:00Z", "to": at}, { code: "INVALID_INSTANT", field: "from", message: "from must be an ISO 8601 instant with an offset, such as \"2026-12-01T09:00:00Z\"; got \"2026-02-30T00:00:00Z\"" }],
    ["a local time", {"from": at, "to": "2026-01-01T00:00:00"}, { code: "INVALID_INSTANT", field: "to", message: "to must be an ISO 8601 instant with an offset, such as \"2026-12-01T09:00:00Z\"; got \"2026-01-01T00:00:00\"" }],
    ["a year past 9999", {"from": at, "to": "9999-12-31T23:30:00-01:00"}, { code: "INVALID_INSTANT", field: "to", message: "to must lie in the years 0000 to 9999 in UTC; got \"9999-12-31T23:30:00-01:00\"" }],
    ["an unknown field beside a bad instant", {"from": "soon", "to": at, "until": at}, { code: "UNKNOWN_FIELD", field: "until", message: "unknown field \"until\"; accepted fields here are: from, to, overlap" }],
    ["a policy not in the set", {"from": at, "to": at, "overlap": "queue"}, { code: "VALIDATION_FAILED", field: "overlap", message: "overlap must be one of \"allow\", \"skip\", \"buffer_one\", \"buffer_all\", \"replace\"; got \"queue\"" }],
  ])('refuses a backfill body with %s', (_, body, expected) => {
    expect(outcome(() => readWire(BackfillRequest, body))).toEqual(expected);
  });

  it.each<[string, Record<string, unknown>, { from: number; to: number; overlap: string | undefined }]>([
    ['two instants', { from: at, to: '2026-01-01T03:00:00+02:00' }, { from: Date.parse(at), to: Date.parse('2026-01-01T01:00:00Z'), overlap: undefined }],
    ['a policy', { from: at, to: at, overlap: 'allow' }, { from: Date.parse(at), to: Date.parse(at), overlap: 'allow' }],
    ['null as absent', { from: at, to: at, overlap: null }, { from: Date.parse(at), to: Date.parse(at), overlap: undefined }],
  ])('reads a backfill body with %s', (_, body, expected) => {
    const read = readWire(BackfillRequest, body);
    expect({ ...read, overlap: read.overlap ?? undefined }).toEqual(expected);
  });
});
