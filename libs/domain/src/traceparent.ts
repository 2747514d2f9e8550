/**
 * The W3C Trace Context `traceparent` header (https://www.w3.org/TR/trace-context/): what a run
 * stores of the trace that created it and what a delivery carries of its execution span.
 */

/** The ids a traceparent carries; the shape of OpenTelemetry's SpanContext, without its dependency. */
export interface TraceIds {
  traceId: string;
  spanId: string;
  traceFlags: number;
}

const TRACE_ID = /^[0-9a-f]{32}$/;
const SPAN_ID = /^[0-9a-f]{16}$/;
const INVALID_TRACE_ID = '0'.repeat(32);
const INVALID_SPAN_ID = '0'.repeat(16);
/** version-traceId-parentId-flags; a version after 00 may append fields, which a reader ignores. */
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;

/** The traceparent of `ids` (version 00, only the sampled flag kept); null when the ids are not a valid trace. */
export function formatTraceparent(ids: TraceIds | undefined): string | null {
  if (!ids || !validIds(ids.traceId, ids.spanId)) return null;
  return `00-${ids.traceId}-${ids.spanId}-${(ids.traceFlags & 1) === 1 ? '01' : '00'}`;
}

/** The ids in a traceparent; null when it is malformed, all-zero, version ff, or version 00 with extra fields. */
export function parseTraceparent(value: string | null | undefined): TraceIds | null {
  const match = value ? TRACEPARENT.exec(value.trim()) : null;
  if (!match) return null;
  const [, version, traceId, spanId, flags, rest] = match as unknown as [string, string, string, string, string, string | undefined];
  if (version === 'ff' || (version === '00' && rest !== undefined)) return null;
  if (!validIds(traceId, spanId)) return null;
  return { traceId, spanId, traceFlags: Number.parseInt(flags, 16) };
}

function validIds(traceId: string, spanId: string): boolean {
  return TRACE_ID.test(traceId) && SPAN_ID.test(spanId) && traceId !== INVALID_TRACE_ID && spanId !== INVALID_SPAN_ID;
}
