/**
 * A run as it changes, from GET /v1/runs/:id/stream (server-sent events, the session cookie sent
 * with them): `onView` gets the run view now and at each change. The stream ends after the run
 * has ended; until then a broken connection is retried by the browser. Returns the unsubscribe.
 */
import { isActiveRunState } from '../logic/checkpoints.js';
import type { Run } from './wire/index.js';

export function followRun(runId: string, onView: (run: Run) => void, onOpen: (open: boolean) => void = () => undefined): () => void {
  const source = new EventSource(`/v1/runs/${encodeURIComponent(runId)}/stream`, { withCredentials: true });
  let ended = false;
  source.addEventListener('open', () => onOpen(true));
  source.addEventListener('run', (event) => {
    const run = JSON.parse((event as MessageEvent<string>).data) as Run;
    onView(run);
    if (!isActiveRunState(run.state)) ended = true;
  });
  source.addEventListener('error', () => {
    onOpen(false);
    // The server closed an ended run's stream: do not ask again.
    if (ended) source.close();
  });
  return () => source.close();
}
