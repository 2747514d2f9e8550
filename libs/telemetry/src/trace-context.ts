/**
 * Kairos's spans, through the OpenTelemetry API alone: they go to whatever tracer provider the
 * process registered (Kairos's own, set up at start-up when an OTLP endpoint is configured, or that
 * of an application embedding the SDK's worker), and cost next to nothing when there is none. Kept
 * apart from the rest of the runtime so the ledger, the queue and the SDK's worker can use it.
 */
import { ROOT_CONTEXT, SpanStatusCode, context, createTraceState, trace, type Context, type Span, type SpanOptions } from '@opentelemetry/api';
import { formatTraceparent, parseTraceparent } from '@kairos/domain';

export const tracer = trace.getTracer('kairos');

/** A W3C trace context as stored with a run and sent with a delivery: `traceparent` and `tracestate`. */
export interface TraceContext {
  traceParent: string | null;
  traceState: string | null;
}

/** The trace context of the span active in `active`; nulls when there is none. */
export function traceContextOf(active: Context = context.active()): TraceContext {
  const span = trace.getSpanContext(active);
  const traceParent = formatTraceparent(span);
  return { traceParent, traceState: (traceParent !== null && span!.traceState?.serialize()) || null };
}

/** `base` with the recorded span as its parent; `base` itself when nothing valid was recorded. */
export function contextFromTrace(recorded: TraceContext, base: Context = ROOT_CONTEXT): Context {
  const ids = parseTraceparent(recorded.traceParent);
  if (!ids) return base;
  const traceState = recorded.traceState ? createTraceState(recorded.traceState) : undefined;
  return trace.setSpanContext(base, { ...ids, isRemote: true, ...(traceState && { traceState }) });
}

/** Runs `work` in a new span, active inside it and ended when it settles; a throw marks the span failed. */
export function inSpan<T>(name: string, options: SpanOptions, work: (span: Span) => Promise<T>, parent: Context = context.active()): Promise<T> {
  return tracer.startActiveSpan(name, options, parent, async (span) => {
    try {
      return await work(span);
    } catch (error) {
      spanFailed(span, error);
      throw error;
    } finally {
      span.end();
    }
  });
}

/** Marks `span` failed by `error`. */
export function spanFailed(span: Span, error: unknown): void {
  const message = error instanceof Error ? error.message : String(error);
  span.recordException(error instanceof Error ? error : message);
  span.setStatus({ code: SpanStatusCode.ERROR, message });
}
