/**
 * The worker registry as the API sees it: listing the workers, and refusing a handler target that
 * no worker has registered on its queue, so a schedule never names code nothing can run (deploy
 * the workers first, then the schedules). The built-in handlers count as registered on the default
 * queue: they ship with the built-in worker.
 */
import { Inject, Injectable } from '@nestjs/common';
import { callsOf, ValidationError, type Target } from '@kairos/domain';
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

  /**
   * Refuses (UNKNOWN_HANDLER on `target.name`, or `steps[i].target.name` for a step) a handler no
   * worker registered on its queue.
   */
  async admit(target: Target): Promise<void> {
    return this.admission()(target);
  }

  /** admit for the targets of one request (a batch's items): each queue's handlers are read once. */
  admission(): (target: Target) => Promise<void> {
    const known = new Map<string, Promise<string[]>>();
    return async (executable) => {
      for (const { target, field } of callsOf(executable)) {
        if (target.type !== 'handler') continue;
        if (!known.has(target.queue)) known.set(target.queue, this.workers.knownHandlers(this.db, target.queue));
        refuseUnknown(target.name, target.queue, await known.get(target.queue)!, `${field}.name`);
      }
    };
  }
}

function refuseUnknown(name: string, queue: string, known: readonly string[], field: string): void {
  if (known.includes(name)) return;
  const listing = known.length > 0 ? `known handlers of queue "${queue}": ${known.join(', ')}` : `no worker has registered on queue "${queue}" yet`;
  throw new ValidationError(
    'UNKNOWN_HANDLER',
    field,
    `no worker has registered a handler named "${name}" on queue "${queue}"; ${listing}. Start a worker with that handler first, then create the schedule or run`,
  );
}
