import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ValidationError } from '../errors.js';
import {
  BackfillRequest,
  DeadLetterListQuery,
  LatestTicksQuery,
  PageQuery,
  PreviewQuery,
  readQuery,
  readWire,
  RunListQuery,
  ScheduleListQuery,
  ScheduleTrigger,
  wireJsonSchemas,
} from './index.js';
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

const ID = '01a226b4-d238-7c31-b6af-28c7c8951e9e';

const refused = (field: string, message: string, code = 'VALIDATION_FAILED') => ({ code, field, message });

describe('readQuery', () => {
  it.each<[string, Record<string, unknown>, unknown]>([
    ['nothing, as the defaults', {}, { value: { limit: 50 } }],
    ['query-string text', { limit: '20', cursor: 'abc' }, { value: { limit: 20, cursor: 'abc' } }],
    ['typed GraphQL arguments', { limit: 7, cursor: null }, { value: { limit: 7 } }],
    ['empty text as not given', { limit: '', cursor: '' }, { value: { limit: 50 } }],
    ['a limit with spaces around it, as Number reads it', { limit: ' 5 ' }, { value: { limit: 5 } }],
    ['the largest page', { limit: '500' }, { value: { limit: 500 } }],
    ['parameters it does not declare, ignored', { sort: 'name' }, { value: { limit: 50 } }],
    ['a limit of 0', { limit: '0' }, refused('limit', 'limit must be an integer from 1 to 500')],
    ['a limit over the largest page', { limit: '501' }, refused('limit', 'limit must be an integer from 1 to 500')],
    ['a limit that is no number', { limit: 'ten' }, refused('limit', 'limit must be an integer from 1 to 500')],
    ['a fractional limit', { limit: 2.5 }, refused('limit', 'limit must be an integer from 1 to 500')],
    ['a cursor Postgres cannot store', { cursor: 'a\u0000b' }, refused('cursor', 'cursor must not contain NUL (U+0000) or an unpaired UTF-16 surrogate')],
  ])('reads a page: %s', (_, params, expected) => {
    expect(outcome(() => readQuery(PageQuery, params))).toEqual(expected);
  });

  it.each<[string, Record<string, unknown>, unknown]>([
    ['a status, a name and a label', { status: 'paused', name: 'nightly', label: 'team:billing' }, { value: { limit: 50, status: 'paused', name: 'nightly', label: { key: 'team', value: 'billing' } } }],
    ['a label whose value holds a colon', { label: 'url:https://x' }, { value: { limit: 50, label: { key: 'url', value: 'https://x' } } }],
    ['a label with an empty value', { label: 'team:' }, { value: { limit: 50, label: { key: 'team', value: '' } } }],
    ['a status not in the set', { status: 'sleeping' }, refused('status', 'status must be one of "active", "paused", "completed", "deleted"; got "sleeping"')],
    ['a label without a colon', { label: 'team' }, refused('label', 'label must look like key:value')],
    ['a label without a key', { label: ':billing' }, refused('label', 'label must look like key:value')],
    ['a label Postgres cannot store', { label: 'team:a\u0000b' }, refused('label', 'label must not contain NUL (U+0000) or an unpaired UTF-16 surrogate')],
    ['a name Postgres cannot store', { name: 'a\u0000b' }, refused('name', 'name must not contain NUL (U+0000) or an unpaired UTF-16 surrogate')],
    ['a bad filter before a bad page', { limit: '0', status: 'sleeping' }, refused('status', 'status must be one of "active", "paused", "completed", "deleted"; got "sleeping"')],
    ['a bad name before a bad label', { label: 'x', name: 'a\u0000' }, refused('name', 'name must not contain NUL (U+0000) or an unpaired UTF-16 surrogate')],
  ])('reads a schedule listing: %s', (_, params, expected) => {
    expect(outcome(() => readQuery(ScheduleListQuery, params))).toEqual(expected);
  });

  it.each<[string, Record<string, unknown>, unknown]>([
    ['a schedule and a state', { scheduleId: ID, state: 'dead', limit: '2' }, { value: { scheduleId: ID, state: 'dead', limit: 2 } }],
    ['an upper-case id', { scheduleId: ID.toUpperCase() }, { value: { scheduleId: ID.toUpperCase(), limit: 50 } }],
    ['a schedule id that is no UUID', { scheduleId: 'nope' }, refused('scheduleId', 'scheduleId must be a UUID')],
    ['a state not in the set', { state: 'finished' }, refused('state', 'state must be one of "queued", "running", "sleeping", "waiting", "succeeded", "failed", "cancelled", "dead"; got "finished"')],
    ['a bad schedule id before a bad state', { state: 'finished', scheduleId: 'nope' }, refused('scheduleId', 'scheduleId must be a UUID')],
  ])('reads a run listing: %s', (_, params, expected) => {
    expect(outcome(() => readQuery(RunListQuery, params))).toEqual(expected);
  });

  it('reads a dead-letter listing without a state to filter on', () => {
    expect(outcome(() => readQuery(DeadLetterListQuery, { scheduleId: ID, state: 'queued' }))).toEqual({ value: { scheduleId: ID, limit: 50 } });
  });

  it.each<[string, Record<string, unknown>, unknown]>([
    ['nothing, as ten instants from now', {}, { value: { count: 10 } }],
    ['a count and an instant', { count: '3', after: '2026-12-01T10:00:00+01:00' }, { value: { count: 3, after: Date.parse('2026-12-01T09:00:00Z') } }],
    ['the most instants', { count: 1000 }, { value: { count: 1000 } }],
    ['too many instants', { count: '1001' }, refused('count', 'count must be an integer from 1 to 1000')],
    ['an instant without an offset', { after: '2026-12-01T09:00:00' }, { code: 'INVALID_INSTANT', field: 'after', message: expect.stringMatching(/^after /) }],
  ])('reads a preview: %s', (_, params, expected) => {
    expect(outcome(() => readQuery(PreviewQuery, params))).toEqual(expected);
  });

  const idsMessage = 'scheduleIds must be 1 to 500 schedule UUIDs separated by commas';
  it.each<[string, Record<string, unknown>, unknown]>([
    ['two ids', { scheduleIds: `${ID},${ID}` }, { value: { scheduleIds: [ID, ID] } }],
    ['empty entries between commas, dropped', { scheduleIds: `,${ID},,` }, { value: { scheduleIds: [ID] } }],
    ['no parameter', {}, refused('scheduleIds', idsMessage)],
    ['only commas', { scheduleIds: ',,' }, refused('scheduleIds', idsMessage)],
    ['an id that is no UUID', { scheduleIds: `${ID},nope` }, refused('scheduleIds', idsMessage)],
    ['more ids than a page', { scheduleIds: Array.from({ length: 501 }, () => ID).join(',') }, refused('scheduleIds', idsMessage)],
  ])('reads the schedules to show the latest ticks of: %s', (_, params, expected) => {
    expect(outcome(() => readQuery(LatestTicksQuery, params))).toEqual(expected);
  });
});

describe('the query shapes in the document', () => {
  const { schemas, queries } = wireJsonSchemas();

  it('become parameters, not schemas', () => {
    expect(Object.keys(queries).sort()).toEqual(['CalendarDatesQuery', 'DeadLetterListQuery', 'EventListQuery', 'LatestTicksQuery', 'PageQuery', 'PreviewQuery', 'RunListQuery', 'RunStatsQuery', 'ScheduleListQuery']);
    for (const name of Object.keys(queries)) expect(schemas).not.toHaveProperty(name);
  });

  it('say what each parameter takes, its default, and which are required', () => {
    expect(queries.ScheduleListQuery).toEqual([
      { name: 'limit', description: 'Page size.', schema: { type: 'integer', minimum: 1, maximum: 500, default: 50 } },
      { name: 'cursor', description: "The previous page's nextCursor, unchanged (INVALID_CURSOR otherwise).", schema: { type: 'string' } },
      { name: 'status', description: 'Only schedules in this status.', schema: { $ref: '#/components/schemas/ScheduleStatus' } },
      { name: 'name', description: 'Only the schedule of this exact name.', schema: { type: 'string' } },
      { name: 'label', description: 'Only schedules carrying this label, written key:value.', schema: { type: 'string', pattern: '^[^:]+:', examples: ['team:billing'] } },
    ]);
    expect(queries.LatestTicksQuery).toEqual([{ name: 'scheduleIds', required: true, description: '1 to 500 schedule ids separated by commas.', schema: { type: 'string' } }]);
    expect(queries.PreviewQuery![1]).toEqual({ name: 'after', description: 'List instants after this one. Default: now.', schema: { $ref: '#/components/schemas/InstantInput' } });
  });
});
