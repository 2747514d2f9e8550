-- Traces: the W3C trace context (traceparent, tracestate) of the tick or API request that created
-- a run, so a worker's claim, execution and verdict continue that trace even when Redis lost the
-- job. Null when the creating process was not tracing.
ALTER TABLE runs ADD COLUMN trace_parent text, ADD COLUMN trace_state text;
