/** The wire shape of a queue, as GET /v1/queues lists it: its limits and what runs, waits and is held on it. */
import { formatDuration, formatOptionalInstant } from '@kairos/domain';
import type { QueueView as QueueShape } from '@kairos/domain/wire';
import type { QueueRow } from '@kairos/ledger';
import type { z } from 'zod';

export type QueueView = z.output<typeof QueueShape>;

export function queueView(row: QueueRow): QueueView {
  return {
    name: row.name,
    maxRunning: row.maxRunning,
    rate: row.rateMax === null || row.ratePerMs === null ? null : { max: row.rateMax, per: formatDuration(row.ratePerMs) },
    running: row.running,
    queued: row.queued,
    held: row.held,
    workers: row.workers,
    updatedAt: formatOptionalInstant(row.updatedAt),
  };
}
