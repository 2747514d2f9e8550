/**
 * The worker registry as the API sees it: listing the workers, and refusing a handler target that
 * no worker has registered on its queue, so a schedule never names code nothing can run (deploy
 * the workers first, then the schedules). The built-in handlers count as registered on the default
 * queue: they ship with the built-in worker.
 */
import { Inject, Injectable } from '@nestjs/common';
import { ValidationError, type Target } from '@kairos/domain';
import { WorkerRepository, type Db, type Page } from '@kairos/ledger';
import { DATABASE } from '@kairos/process';
import { workerView, type WorkerView } from './worker.view.js';

@Injectable()
export class WorkersService {
  constructor(
    @Inject(DATABASE) private readonly db: Db,
    private readonly workers: WorkerRepository,
  ) {}

  async list(limit: number, cursor?: string): Promise<Page<WorkerView>> {
    const page = await this.workers.list(this.db, limit, cursor);
    return { items: page.items.map(workerView), nextCursor: page.nextCursor };
  }

  /** Refuses (UNKNOWN_HANDLER on `target.name`) a handler no worker registered on the target's queue. */
  async admit(target: Target): Promise<void> {
    if (target.type !== 'handler') return;
    const known = await this.workers.knownHandlers(this.db, target.queue);
    if (known.includes(target.name)) return;
    const listing = known.length > 0 ? `known handlers of queue "${target.queue}": ${known.join(', ')}` : `no worker has registered on queue "${target.queue}" yet`;
    throw new ValidationError(
      'UNKNOWN_HANDLER',
      'target.name',
      `no worker has registered a handler named "${target.name}" on queue "${target.queue}"; ${listing}. Start a worker with that handler first, then create the schedule or run`,
    );
  }
}
