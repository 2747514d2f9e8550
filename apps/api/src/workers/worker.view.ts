/** The wire shape of a registered worker, as GET /v1/workers lists it. */
import { formatInstant } from '@kairos/domain';
import type { WorkerRow } from '@kairos/ledger';

export function workerView(row: WorkerRow) {
  return {
    id: row.id,
    queue: row.queue,
    handlers: row.handlers,
    version: row.version,
    startedAt: formatInstant(row.startedAt),
    lastSeenAt: formatInstant(row.lastSeenAt),
  };
}

export type WorkerView = ReturnType<typeof workerView>;
