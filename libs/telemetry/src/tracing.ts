/**
 * The process's tracer provider. Spans are exported over OTLP/HTTP only when an endpoint is
 * configured (OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT); otherwise no
 * provider is registered and every span Kairos starts is the OpenTelemetry API's no-op.
 */
import { context, propagation, trace } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, type ReadableSpan, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import type { KairosConfig } from '@kairos/config';

/** The span of one tick batch. */
export const TICK_SPAN = 'kairos.tick';

let provider: NodeTracerProvider | null = null;
const extraProcessors: SpanProcessor[] = [];

/**
 * Also hands every span to `processor`, whether or not an endpoint is configured: for tests, which
 * read the spans of a process they start in-process. Call it before the process starts.
 */
export function addSpanProcessor(processor: SpanProcessor): void {
  if (provider) throw new Error('addSpanProcessor must be called before tracing starts');
  extraProcessors.push(processor);
}

/**
 * Registers the tracer provider (once per process) when there is somewhere to send spans. Returns
 * whether the process traces.
 */
export function startTracing(config: KairosConfig, processName: string): boolean {
  if (provider) return true;
  const processors = [...extraProcessors];
  if (config.tracing.tracesUrl !== null) processors.push(new BatchSpanProcessor(new OTLPTraceExporter({ url: config.tracing.tracesUrl })));
  if (processors.length === 0) return false;
  provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: config.tracing.serviceName ?? `kairos-${processName}` }),
    spanProcessors: processors.map((p) => new IdleTicksLeftOut(p)),
  });
  // Also sets the AsyncLocalStorage context manager and the W3C trace-context propagator.
  provider.register();
  return true;
}

/** Exports what is still buffered and unregisters the provider. */
export async function stopTracing(): Promise<void> {
  const stopping = provider;
  if (!stopping) return;
  provider = null;
  await stopping.shutdown();
  trace.disable();
  context.disable();
  propagation.disable();
}

/** The leader ticks at least once a second; a tick that found nothing due would only be noise in a trace store. */
class IdleTicksLeftOut implements SpanProcessor {
  constructor(private readonly next: SpanProcessor) {}

  onStart(...args: Parameters<SpanProcessor['onStart']>): void {
    this.next.onStart(...args);
  }

  onEnd(span: ReadableSpan): void {
    if (span.name === TICK_SPAN && span.attributes['kairos.tick.schedules'] === 0) return;
    this.next.onEnd(span);
  }

  forceFlush(): Promise<void> {
    return this.next.forceFlush();
  }

  shutdown(): Promise<void> {
    return this.next.shutdown();
  }
}
