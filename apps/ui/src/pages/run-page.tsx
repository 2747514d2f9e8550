/** A run's story: its events (live until it ends), each attempt with worker, duration and response or error, payload and result, cancel and retry. */
import { useEffect, useState } from 'preact/hooks';
import { Link } from '../components/link.js';
import { Failure, Show, useLoad } from '../components/load.js';
import { StateBadge, When } from '../components/when.js';
import { followRunEvents, kairosApi } from '../data/kairos-api.js';
import type { RunEvent, RunWithAttempts } from '../data/wire.js';
import { durationBetween, runStory } from '../logic/run-story.js';
import { pathOf } from '../logic/ui-route.js';
import { navigate } from '../navigation.js';
import { useCan } from '../session.js';

export function RunPage({ id }: { id: string }) {
  const [run, reload] = useLoad(() => kairosApi.run(id), [id]);
  const [events, setEvents] = useState<RunEvent[]>([]);
  useEffect(() => {
    setEvents([]);
    // The subscription replays the events so far, then each new one; a state change reloads the run's attempts.
    return followRunEvents(id, (event) => {
      setEvents((known) => (known.some((e) => e.id === event.id) ? known : [...known, event]));
      if (event.toState !== null && event.toState !== event.fromState) reload();
    });
  }, [id]);
  return (
    <Show loaded={run}>
      {(r) => (
        <>
          <h1>Run {r.id}</h1>
          <p class="lead">
            <StateBadge state={r.state} /> {r.reasonCode && <code>{r.reasonCode}</code>} {r.reasonText}
            {r.scheduleId && (
              <>
                {' '}
                · <Link href={pathOf({ page: 'schedule', id: r.scheduleId })}>its schedule</Link>
              </>
            )}
          </p>
          <RunActions run={r} onChanged={reload} />
          <dl class="pairs">
            <div>
              <dt>Origin</dt>
              <dd>{r.origin}</dd>
            </div>
            <div>
              <dt>Slot</dt>
              <dd>
                <When at={r.scheduledFor} />
              </dd>
            </div>
            <div>
              <dt>Attempt</dt>
              <dd>
                {r.attempt} of {r.maxAttempts}
              </dd>
            </div>
            <div>
              <dt>Duration</dt>
              <dd>{durationBetween(r.startedAt, r.finishedAt) || '—'}</dd>
            </div>
            <div>
              <dt>Target</dt>
              <dd>{JSON.stringify(r.target)}</dd>
            </div>
          </dl>
          <Story events={events} />
          <Attempts run={r} />
          <section aria-labelledby="data">
            <h2 id="data">Payload and result</h2>
            <h3>Payload</h3>
            <pre>{JSON.stringify(r.payload, null, 2)}</pre>
            <h3>Result</h3>
            <pre>{JSON.stringify(r.result ?? r.error, null, 2)}</pre>
          </section>
        </>
      )}
    </Show>
  );
}

function RunActions({ run, onChanged }: { run: RunWithAttempts; onChanged: () => void }) {
  const can = useCan();
  const [error, setError] = useState<Error | null>(null);
  if (!can('write')) return null;
  const active = run.state === 'queued' || run.state === 'running';
  return (
    <section aria-label="Actions" class="actions">
      {active && (
        <button type="button" onClick={() => kairosApi.cancelRun(run.id).then(onChanged, setError)}>
          Cancel
        </button>
      )}
      {!active && (
        <button type="button" onClick={() => kairosApi.retryRun(run.id).then((next) => navigate(pathOf({ page: 'run', id: next.id })), setError)}>
          Retry as a new run
        </button>
      )}
      {error && <Failure error={error} />}
    </section>
  );
}

function Story({ events }: { events: RunEvent[] }) {
  const rows = runStory(events);
  return (
    <section aria-labelledby="story">
      <h2 id="story">Events</h2>
      {rows.length === 0 ? (
        <p>Waiting for events…</p>
      ) : (
        <div class="scroll">
          <table>
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">Kind</th>
                <th scope="col">Transition</th>
                <th scope="col">Reason</th>
                <th scope="col">Epoch</th>
                <th scope="col">Actor</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((row) => (
                <tr key={row.id}>
                  <td>
                    <When at={row.at} /> <span class="muted">{row.sinceStart}</span>
                  </td>
                  <td>{row.kind}</td>
                  <td>{row.transition}</td>
                  <td>{row.reason && <code>{row.reason}</code>}</td>
                  <td>{row.epoch}</td>
                  <td>{row.actor}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

function Attempts({ run }: { run: RunWithAttempts }) {
  return (
    <section aria-labelledby="attempts">
      <h2 id="attempts">Attempts</h2>
      {run.attempts.length === 0 ? (
        <p>Not attempted yet.</p>
      ) : (
        <ol class="attempts">
          {run.attempts.map((a) => (
            <li key={a.attempt}>
              <p>
                Attempt {a.attempt} on <code>{a.worker}</code> (epoch {a.leaseEpoch}) · {a.outcome ? <StateBadge state={a.outcome} /> : 'running'}{' '}
                {a.reasonCode && <code>{a.reasonCode}</code>} · {durationBetween(a.startedAt, a.finishedAt) || 'in progress'}
              </p>
              {(a.response || a.error) && <pre>{JSON.stringify(a.response ?? a.error, null, 2)}</pre>}
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}
