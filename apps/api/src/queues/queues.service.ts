/**
 * Queue limits of the caller's namespace: read every queue (its limits, runs running, queued and
 * held, its queued runs by priority and fairness key, live workers), and set or clear a queue's limits. Setting them releases, in the same
 * transaction, the held runs a raised or lifted limit leaves places for; the scheduler hands them
 * over as soon as it commits.
 */
import { Inject, Injectable } from '@nestjs/common';
import { readQueueLimitsPut, readQueueName } from '@kairos/domain/wire';
import { QueueLimitRepository, inTransaction, type Db } from '@kairos/ledger';
import { DATABASE } from '@kairos/process';
import type { CallerContext } from '../auth/request-context.js';
import { queueBacklogs } from './queue-backlog.js';
import { queueView, type QueueView } from './queue.view.js';

export interface QueuePageView {
  items: QueueView[];
  nextCursor: null;
}

@Injectable()
export class QueuesService {
  constructor(
    @Inject(DATABASE) private readonly db: Db,
    private readonly queues: QueueLimitRepository,
  ) {}

  async list(caller: CallerContext): Promise<QueuePageView> {
    const [rows, backlogs] = await Promise.all([this.queues.list(this.db, caller.namespaceId), queueBacklogs(this.db, caller.namespaceId)]);
    return { items: rows.map((row) => queueView(row, backlogs.get(row.name))), nextCursor: null };
  }

  async get(caller: CallerContext, name: string): Promise<QueueView> {
    const queue = readQueueName(name);
    const [row, backlogs] = await Promise.all([this.queues.get(this.db, caller.namespaceId, queue), queueBacklogs(this.db, caller.namespaceId, queue)]);
    return queueView(row, backlogs.get(queue));
  }

  /** PUT /v1/queues/:name: the body's limits replace the queue's (none clears them). */
  async set(caller: CallerContext, name: string, body: unknown): Promise<QueueView> {
    // The path's name is checked before the body, and before it reaches a query.
    const queue = readQueueName(name);
    const limits = readQueueLimitsPut(body);
    return inTransaction(this.db, async (tx) => {
      await this.queues.set(tx, caller.namespaceId, queue, limits, caller.actor);
      const row = await this.queues.get(tx, caller.namespaceId, queue);
      return queueView(row, (await queueBacklogs(tx, caller.namespaceId, queue)).get(queue));
    });
  }
}
