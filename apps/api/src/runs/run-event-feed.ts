/**
 * A run's transition history as it is written, for the GraphQL runEvents subscription. The ledger
 * is the only source: the feed polls run_events from the last event it delivered, so it needs no
 * pub/sub and survives any process in between restarting. It ends once the run is terminal and
 * every event up to that transition was delivered, or when the subscriber (or shutdown) closes it.
 */
import type { RunEventRow } from '@kairos/ledger';
import { runEventView, type RunEventView } from './run.view.js';

/** How often a followed run's events are read. */
export const RUN_EVENT_POLL_MS = 500;

/** One poll: the events after `afterId`, and whether the run had ended before they were read. */
export type RunEventPoll = (afterId: number) => Promise<{ events: RunEventRow[]; ended: boolean }>;

export class RunEventFeed implements AsyncIterableIterator<RunEventView> {
  private readonly stopped = new AbortController();
  private readonly source: AsyncGenerator<RunEventView, undefined>;

  /** `onEnd` runs once the feed is finished or closed, whichever comes first (and may run again). */
  constructor(
    poll: RunEventPoll,
    private readonly onEnd: () => void = () => undefined,
    intervalMs = RUN_EVENT_POLL_MS,
  ) {
    this.source = follow(poll, intervalMs, this.stopped.signal, onEnd);
  }

  next(): Promise<IteratorResult<RunEventView, undefined>> {
    return this.source.next();
  }

  /**
   * Called when the subscriber goes away. A generator waiting between polls would only see a plain
   * return() at its next yield, which may never come for a run that stays queued; the abort wakes it.
   */
  return(): Promise<IteratorResult<RunEventView, undefined>> {
    this.close();
    return this.source.return(undefined);
  }

  throw(error: unknown): Promise<IteratorResult<RunEventView, undefined>> {
    this.close();
    return this.source.throw(error);
  }

  close(): void {
    this.stopped.abort();
    this.onEnd();
  }

  [Symbol.asyncIterator](): this {
    return this;
  }
}

async function* follow(poll: RunEventPoll, intervalMs: number, signal: AbortSignal, onEnd: () => void): AsyncGenerator<RunEventView, undefined> {
  try {
    let afterId = 0;
    while (!signal.aborted) {
      const { events, ended } = await poll(afterId);
      for (const event of events) {
        afterId = event.id;
        yield runEventView(event);
      }
      if (ended) return undefined;
      await pause(intervalMs, signal);
    }
    return undefined;
  } finally {
    onEnd();
  }
}

function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}
