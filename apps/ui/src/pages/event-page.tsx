/** One event: its data, the runs it started (with their schedules and states), the matching schedules it skipped and why, and the waiting runs it resumed. */
import type { ComponentChildren } from 'preact';
import { Link } from '../components/link.js';
import { Show, useLoad } from '../components/load.js';
import { StateBadge, When } from '../components/when.js';
import { kairosApi } from '../data/kairos-api.js';
import type { EventSkip, KairosEvent, Run } from '../data/wire/index.js';
import { outcomeInWords, sendEventCommand, skipInWords } from '../logic/events.js';
import { pathOf } from '../logic/ui-route.js';

/** The runs and schedules read for their states and names: the first this many of each list. */
const DETAILED = 50;

export function EventPage({ id }: { id: string }) {
  const [event] = useLoad(() => kairosApi.event(id), [id]);
  return (
    <Show loaded={event}>
      {(e) => (
        <>
          <h1>Event {e.name}</h1>
          <p class="lead" data-testid="event-lead">
            <code>{e.id}</code> · received <When at={e.receivedAt} /> · {outcomeInWords(e)}
          </p>
          <section aria-labelledby="event-data">
            <h2 id="event-data">Data</h2>
            <pre data-testid="event-data">{JSON.stringify(e.data, null, 2)}</pre>
          </section>
          <StartedRuns event={e} />
          <Skipped event={e} />
          <ResumedRuns event={e} />
        </>
      )}
    </Show>
  );
}

/** Each run with its schedule and state; a run that cannot be read is listed by its id alone. */
function RunList({ ids, testId, labelledBy }: { ids: readonly string[]; testId: string; labelledBy: string }) {
  const [runs] = useLoad(() => Promise.all(ids.slice(0, DETAILED).map((runId) => kairosApi.run(runId).catch(() => null))), [ids.join(',')]);
  const byId = new Map<string, Run>();
  if (runs.state === 'ready') for (const run of runs.value) if (run !== null) byId.set(run.id, run);
  return (
    <ul class="timeline" data-testid={testId} aria-labelledby={labelledBy}>
      {ids.map((runId) => {
        const run = byId.get(runId);
        return (
          <li key={runId} data-run-id={runId}>
            <Link href={pathOf({ page: 'run', id: runId })}>run {runId}</Link>
            {run && (
              <>
                {' '}
                <StateBadge state={run.state} />
                {run.scheduleId && (
                  <>
                    {' '}
                    of <Link href={pathOf({ page: 'schedule', id: run.scheduleId })}>its schedule</Link>
                  </>
                )}
              </>
            )}
          </li>
        );
      })}
    </ul>
  );
}

function Section({ id, title, children }: { id: string; title: string; children: ComponentChildren }) {
  return (
    <section aria-labelledby={id}>
      <h2 id={id}>{title}</h2>
      {children}
    </section>
  );
}

function StartedRuns({ event }: { event: KairosEvent }) {
  return (
    <Section id="event-runs" title="Runs started">
      {event.runs.length === 0 ? (
        <p data-testid="no-runs-started">
          No schedule with <code>on</code> matched it. A schedule with <code>{`"on": { "event": "${event.name}" }`}</code> (and a <code>match</code> its data fits) gets a run for each
          such event.
        </p>
      ) : (
        <RunList ids={event.runs} testId="event-runs" labelledBy="event-runs" />
      )}
    </Section>
  );
}

function Skipped({ event }: { event: KairosEvent }) {
  const skipped = event.skipped;
  const [schedules] = useLoad(
    () => Promise.all(skipped.slice(0, DETAILED).map((s) => kairosApi.schedule(s.scheduleId).then((found) => [s.scheduleId, found.name] as const, () => [s.scheduleId, null] as const))),
    [event.id],
  );
  const names = new Map(schedules.state === 'ready' ? schedules.value : []);
  return (
    <Section id="event-skipped" title="Schedules skipped">
      {skipped.length === 0 ? (
        <p>None: every schedule it matched got a run.</p>
      ) : (
        <ul class="timeline" data-testid="event-skipped">
          {skipped.map((s: EventSkip) => (
            <li key={s.scheduleId} data-schedule-id={s.scheduleId}>
              <Link href={pathOf({ page: 'schedule', id: s.scheduleId })}>{names.get(s.scheduleId) ?? s.scheduleId}</Link> · <code>{s.reasonCode}</code>{' '}
              <span class="muted">{skipInWords(s.reasonCode)}</span>
            </li>
          ))}
        </ul>
      )}
    </Section>
  );
}

function ResumedRuns({ event }: { event: KairosEvent }) {
  return (
    <Section id="event-resumed" title="Waits resumed">
      {event.resumed.length === 0 ? (
        <p>
          No durable function was waiting for it. A run that calls <code>{`ctx.waitForEvent("${event.name}", { match, timeout })`}</code> parks until the next such event
          arrives; to send one by hand:
        </p>
      ) : (
        <RunList ids={event.resumed} testId="event-resumed" labelledBy="event-resumed" />
      )}
      {event.resumed.length === 0 && <pre class="command">{sendEventCommand(location.origin, event.name, event.data)}</pre>}
    </Section>
  );
}
