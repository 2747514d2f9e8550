/**
 * The producer side of every runs queue, opened on first use: a process dispatches to whichever
 * queue a run names without knowing the set in advance, and closes them all at shutdown.
 */
import { runsQueueName } from './jobs.js';
import type { RunsQueue, Transport } from './transport.js';

export class RunsQueues {
  private readonly opened = new Map<string, RunsQueue>();

  constructor(private readonly transport: Transport) {}

  /**
   * The BullMQ queue of Kairos queue `queue`. A queue that failed to become ready (the transport was
   * away when it was opened) keeps failing in BullMQ, so it is dropped and the next call opens a
   * fresh one: producers recover with their transport, without a restart.
   */
  get(queue: string): RunsQueue {
    let opened = this.opened.get(queue);
    if (!opened) {
      const fresh = this.transport.queue(runsQueueName(queue));
      // Without a listener BullMQ prints each connection error to stderr; the operations that fail
      // and the health check already say it, once.
      fresh.on('error', () => undefined);
      fresh.waitUntilReady().catch(() => {
        if (this.opened.get(queue) === fresh) this.opened.delete(queue);
        void fresh.close().catch(() => undefined);
      });
      this.opened.set(queue, fresh);
      opened = fresh;
    }
    return opened;
  }

  async close(): Promise<void> {
    await Promise.allSettled([...this.opened.values()].map((q) => q.close()));
    this.opened.clear();
  }
}
