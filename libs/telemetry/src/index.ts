/**
 * What a Kairos process tells about itself: JSON logs with their context, the access log, and
 * OpenTelemetry traces (the tracer provider, the request spans, and the span context a run carries).
 * `@kairos/telemetry/log-context` and `@kairos/telemetry/trace-context` are leaves the SDK and the
 * ledger import alone, without the logger and the exporters.
 */
export * from './access-log.js';
export * from './log-context.js';
export * from './logger.js';
export * from './request-span.js';
export * from './trace-context.js';
export * from './tracing.js';
