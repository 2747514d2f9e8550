/**
 * The producer side of every runs queue, opened on first use: a process dispatches to whichever
 * queue a run names without knowing the set in advance, and closes them all at shutdown.
 */
import { runsQueueName } from './jobs.js';
import type { RunsQueue, Transport } from './transport.js';

export class RunsQueues {
  private readonly opened = new Map<string, RunsQueue>();

  constructor(private readonly transport: Transport) {}

  /** The BullMQ queue of Kairos queue `queue`. */
  get(queue: string): RunsQueue {
    let opened = this.opened.get(queue);
    if (!opened) {
      opened = this.transport.queue(runsQueueName(queue));
      this.opened.set(queue, opened);
    }
    return opened;
  }

  async close(): Promise<void> {
    await Promise.allSettled([...this.opened.values()].map((q) => q.close()));
    this.opened.clear();
  }
}
