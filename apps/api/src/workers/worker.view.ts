/** The wire shape of a registered worker, as GET /v1/workers lists it. */
import { formatInstant } from '@kairos/domain';
import type { Worker } from '@kairos/domain/wire';
import type { WorkerRow } from '@kairos/ledger';
import type { z } from 'zod';

export type WorkerView = z.output<typeof Worker>;

export function workerView(row: WorkerRow): WorkerView {
  return {
    id: row.id,
    queue: row.queue,
    handlers: row.handlers,
    version: row.version,
    startedAt: formatInstant(row.startedAt),
    lastSeenAt: formatInstant(row.lastSeenAt),
    clockOffsetMs: row.clockOffsetMs,
  };
}
