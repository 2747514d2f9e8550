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
import { PolledFeed, pause } from './polled-feed.js';
import type { RunView } from './run.view.js';

/** How often a watched run is read. */
export const RUN_VIEW_POLL_MS = 250;

/** One read of the run: its view, or null once it is gone (pruned by retention). */
export type RunViewPoll = () => Promise<RunView | null>;

export class RunViewFeed extends PolledFeed<RunView> {
  constructor(poll: RunViewPoll, onEnd: () => void = () => undefined, intervalMs = RUN_VIEW_POLL_MS) {
    super((signal) => follow(poll, intervalMs, signal), onEnd);
  }
}

async function* follow(poll: RunViewPoll, intervalMs: number, signal: AbortSignal): AsyncGenerator<RunView, undefined> {
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
}
