import { describe, expect, it } from 'vitest';
import { formatTraceparent, parseTraceparent, type TraceIds } from './traceparent.js';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const SPAN = '00f067aa0ba902b7';

describe('parseTraceparent', () => {
  it.each<[string, string | null | undefined, TraceIds | null]>([
    ['a sampled version-00 header', `00-${TRACE}-${SPAN}-01`, { traceId: TRACE, spanId: SPAN, traceFlags: 1 }],
    ['an unsampled one', `00-${TRACE}-${SPAN}-00`, { traceId: TRACE, spanId: SPAN, traceFlags: 0 }],
    ['surrounding blanks', `  00-${TRACE}-${SPAN}-01 `, { traceId: TRACE, spanId: SPAN, traceFlags: 1 }],
    ['a later version with more fields', `01-${TRACE}-${SPAN}-03-extra`, { traceId: TRACE, spanId: SPAN, traceFlags: 3 }],
    ['version 00 with extra fields', `00-${TRACE}-${SPAN}-01-extra`, null],
    ['version ff', `ff-${TRACE}-${SPAN}-01`, null],
    ['an all-zero trace id', `00-${'0'.repeat(32)}-${SPAN}-01`, null],
    ['an all-zero span id', `00-${TRACE}-${'0'.repeat(16)}-01`, null],
    ['upper-case hex', `00-${TRACE.toUpperCase()}-${SPAN}-01`, null],
    ['a short trace id', `00-${TRACE.slice(1)}-${SPAN}-01`, null],
    ['garbage', 'not a traceparent', null],
    ['empty', '', null],
    ['null', null, null],
    ['undefined', undefined, null],
  ])('%s', (_name, header, expected) => {
    expect(parseTraceparent(header)).toEqual(expected);
  });
});

describe('formatTraceparent', () => {
  it.each<[string, TraceIds | undefined, string | null]>([
    ['sampled', { traceId: TRACE, spanId: SPAN, traceFlags: 1 }, `00-${TRACE}-${SPAN}-01`],
    ['unsampled', { traceId: TRACE, spanId: SPAN, traceFlags: 0 }, `00-${TRACE}-${SPAN}-00`],
    ['unknown flags are dropped', { traceId: TRACE, spanId: SPAN, traceFlags: 0xff }, `00-${TRACE}-${SPAN}-01`],
    ['the invalid (no-op) span context', { traceId: '0'.repeat(32), spanId: '0'.repeat(16), traceFlags: 0 }, null],
    ['no span context', undefined, null],
  ])('%s', (_name, ids, expected) => {
    expect(formatTraceparent(ids)).toBe(expected);
  });

  it('round-trips through parseTraceparent', () => {
    const ids = { traceId: TRACE, spanId: SPAN, traceFlags: 1 };
    expect(parseTraceparent(formatTraceparent(ids))).toEqual(ids);
  });
});
