/**
 * The producer side of every runs queue, opened on first use: a process dispatches to whichever
 * queue a run names without knowing the set in advance, and closes them all at shutdown.
 */
import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import type { JobPayloads } from './jobs.js';
import { runsQueueName } from './jobs.js';

export type RunsQueue = Queue<JobPayloads['run'], unknown, 'run'>;

export class RunQueues {
  private readonly opened = new Map<string, RunsQueue>();

  constructor(
    private readonly connection: Redis,
    private readonly prefix: string,
  ) {}

  /** The BullMQ queue of Kairos queue `queue`. */
  get(queue: string): RunsQueue {
    let opened = this.opened.get(queue);
    if (!opened) {
      opened = new Queue(runsQueueName(queue), { connection: this.connection, prefix: this.prefix }) as RunsQueue;
      this.opened.set(queue, opened);
    }
    return opened;
  }

  async close(): Promise<void> {
    await Promise.allSettled([...this.opened.values()].map((q) => q.close()));
    this.opened.clear();
  }
}
