/** The wire shape of a queue, as GET /v1/queues lists it: its limits, what runs, waits and is held on it, and what waits by priority and fairness key. */
import { formatDuration, formatOptionalInstant } from '@kairos/domain';
import type { QueueView as QueueShape } from '@kairos/domain/wire';
import type { QueueRow } from '@kairos/ledger';
import type { z } from 'zod';
import { emptyBacklog, type QueueBacklog } from './queue-backlog.js';

export type QueueView = z.output<typeof QueueShape>;

export function queueView(row: QueueRow, backlog: QueueBacklog = emptyBacklog()): QueueView {
  return {
    name: row.name,
    maxRunning: row.maxRunning,
    rate: row.rateMax === null || row.ratePerMs === null ? null : { max: row.rateMax, per: formatDuration(row.ratePerMs) },
    running: row.running,
    queued: row.queued,
    held: row.held,
    queuedByPriority: backlog.queuedByPriority,
    fairnessKeys: backlog.fairnessKeys,
    workers: row.workers,
    updatedAt: formatOptionalInstant(row.updatedAt),
  };
}
