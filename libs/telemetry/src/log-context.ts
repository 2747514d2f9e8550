/**
 * The identifiers every log line written inside a unit of work carries (runId, scheduleId,
 * namespace, epoch, requestId). Kept apart from the logger so the SDK's worker can set them
 * without taking the server's logging stack along.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

/** The identifiers a log line may carry. Never payloads, results or secrets. */
export interface LogFields {
  runId?: string;
  scheduleId?: string | null;
  namespace?: string;
  epoch?: number;
  requestId?: string;
}

const logContext = new AsyncLocalStorage<LogFields>();

/** Runs `work` with `fields` added to every line logged inside it, however deep in async calls. */
export function withLogContext<T>(fields: LogFields, work: () => T): T {
  // Outside any unit of work (a worker's run), `fields` are the context as they are: no copy.
  const outer = logContext.getStore();
  return logContext.run(outer === undefined ? fields : Object.assign({}, outer, fields), work);
}

/** The fields of the unit of work running now; empty outside any. */
export function currentLogContext(): LogFields {
  return logContext.getStore() ?? {};
}
