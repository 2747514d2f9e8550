/**
 * A run's transition history as it is written, for the GraphQL runEvents subscription. The ledger
 * is the only source: the feed polls run_events from the last event it delivered, so it needs no
 * pub/sub and survives any process in between restarting. It ends once the run is terminal and
 * every event up to that transition was delivered, or when the subscriber (or shutdown) closes it.
 */
import type { RunEventRow } from '@kairos/ledger';
import { PolledFeed, pause } from './polled-feed.js';
import { runEventView, type RunEventView } from './run.view.js';

/** How often a followed run's events are read. */
export const RUN_EVENT_POLL_MS = 500;

/** One poll: the events after `afterId`, and whether the run had ended before they were read. */
export type RunEventPoll = (afterId: number) => Promise<{ events: RunEventRow[]; ended: boolean }>;

export class RunEventFeed extends PolledFeed<RunEventView> {
  constructor(poll: RunEventPoll, onEnd: () => void = () => undefined, intervalMs = RUN_EVENT_POLL_MS) {
    super((signal) => follow(poll, intervalMs, signal), onEnd);
  }
}

async function* follow(poll: RunEventPoll, intervalMs: number, signal: AbortSignal): AsyncGenerator<RunEventView, undefined> {
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
}
