/**
 * A run as it changes, for GET /v1/runs/:id/stream and the GraphQL runUpdated subscription: the
 * run view now, then again each time it differs (its state, progress, steps, checkpoints, any
 * field), ending once the view of the ended run was delivered, or when the subscriber (or the
 * API's shutdown) closes it.
 *
 * Why polling, not LISTEN/NOTIFY: a run changes in many places of several processes (the claim,
 * a worker's progress and checkpoints, verdicts, the reaper, the API's cancellations), most of
 * them on the scheduler's hot path; a NOTIFY in each would make every run pay (a NOTIFY serialises
 * commits on a global lock) for the few that someone watches, and a notification lost while a
 * listener reconnects would need polling anyway. Reading the run every 250 ms costs only the runs
 * watched: one primary-key read of the run and one of its checkpoints (and its steps, for a graph)
 * per open stream, bounded, whatever process made the change. As with the runEvents feed
 * (run-event-feed.ts), the ledger is the only source, so any API replica serves any run.
 */
import { isTerminalRunState } from '@kairos/domain';
import type { RunView } from './run.view.js';

/** How often a watched run is read. */
export const RUN_VIEW_POLL_MS = 250;

/** One read of the run: its view, or null once it is gone (pruned by retention). */
export type RunViewPoll = () => Promise<RunView | null>;

export class RunViewFeed implements AsyncIterableIterator<RunView> {
  private readonly stopped = new AbortController();
  private readonly source: AsyncGenerator<RunView, undefined>;

  /** `onEnd` runs once the feed is finished or closed, whichever comes first (and may run again). */
  constructor(
    poll: RunViewPoll,
    private readonly onEnd: () => void = () => undefined,
    intervalMs = RUN_VIEW_POLL_MS,
  ) {
    this.source = follow(poll, intervalMs, this.stopped.signal, onEnd);
  }

  /** Aborted when the feed is closed: a consumer waiting on something else (a heartbeat) may watch it. */
  get signal(): AbortSignal {
    return this.stopped.signal;
  }

  next(): Promise<IteratorResult<RunView, undefined>> {
    return this.source.next();
  }

  /** The subscriber went away: the abort wakes a generator waiting between polls. */
  return(): Promise<IteratorResult<RunView, undefined>> {
    this.close();
    return this.source.return(undefined);
  }

  throw(error: unknown): Promise<IteratorResult<RunView, undefined>> {
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

async function* follow(poll: RunViewPoll, intervalMs: number, signal: AbortSignal, onEnd: () => void): AsyncGenerator<RunView, undefined> {
  try {
    let last: string | null = null;
    while (!signal.aborted) {
      const view = await poll();
      if (view === null || signal.aborted) return undefined;
      const text = JSON.stringify(view);
      if (text !== last) {
        last = text;
        yield view;
      }
      // The view of the ended run was delivered: nothing about it changes any more.
      if (isTerminalRunState(view.state)) return undefined;
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
