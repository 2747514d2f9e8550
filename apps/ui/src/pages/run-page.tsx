/**
 * A run's story: its events (live until it ends), each attempt with worker, duration and response or
 * error, payload and result, cancel and retry. A multi-step run also shows its graph of steps (re-read
 * while it runs), and the story of the step selected in it. A durable function shows its checkpoints
 * (re-read while it runs), and an active run takes signals: the one it waits for, or any ahead of time.
 * Its version of the code shows, and an active run may be moved to another. Its priority and fairness
 * key show, and a run waiting for its key's turn (FAIR_SHARE) says so.
 */
import { useEffect, useState } from 'preact/hooks';
import { CheckpointTimeline } from '../components/checkpoint-timeline.js';
import { Link } from '../components/link.js';
import { Failure, Show, useLoad } from '../components/load.js';
import { RunEvents } from '../components/run-events.js';
import { SignalPanel } from '../components/signal-form.js';
import { StepDetail } from '../components/step-detail.js';
import { StepGraph } from '../components/step-graph.js';
import { StateBadge, When } from '../components/when.js';
import { RunProgress } from '../components/run-progress.js';
import { VersionMove, VersionWaitNote } from '../components/version-panel.js';
import { followRun } from '../data/run-stream.js';
import { followRunEvents, kairosApi } from '../data/kairos-api.js';
import type { Run, RunEvent, RunWithAttempts } from '../data/wire/index.js';
import { isActiveRunState, readsAgain } from '../logic/checkpoints.js';
import { awaitedEvent, awaitInWords } from '../logic/events.js';
import { holdInWords, holdOf, queueOf, type HoldReason } from '../logic/limits.js';
import { fairnessKeyInWords, priorityInWords } from '../logic/priority.js';
import { durationBetween } from '../logic/run-story.js';
import { targetInWords, type RunStep } from '../logic/step-graph.js';
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
  // The run as it changes (GET /v1/runs/:id/stream): its state, progress, steps and checkpoints,
  // live without a reload; a change of state reads its attempts again.
  const [live, setLive] = useState<Run | null>(null);
  const [streaming, setStreaming] = useState(false);
  useEffect(() => {
    setLive(null);
    let lastState: string | null = null;
    return followRun(
      id,
      (view) => {
        setLive(view);
        if (lastState !== null && view.state !== lastState) reload();
        lastState = view.state;
      },
      setStreaming,
    );
  }, [id]);
  const shown: typeof run = run.state === 'ready' && live !== null && live.id === id ? { state: 'ready', value: { ...run.value, ...live } } : run;
  // Without the stream (a proxy that drops it), a step's progress and a durable function's are read again every few seconds while either runs.
  const polling = run.state === 'ready' && readsAgain(run.value) && !streaming;
  useEffect(() => {
    if (!polling) return;
    const timer = setInterval(reload, STEPS_REFRESH_MS);
    return () => clearInterval(timer);
  }, [polling, reload]);
  const [selectedStep, setSelectedStep] = useState<string | null>(null);
  useEffect(() => setSelectedStep(null), [id]);
  return (
    <Show loaded={shown}>
      {(r) => {
        const steps = r.steps;
        const parent = r.parentRunId !== null && r.stepName !== null ? { runId: r.parentRunId, stepName: r.stepName } : null;
        return (
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
              {parent && (
                <>
                  {' '}
                  · step <code>{parent.stepName}</code> of <Link href={pathOf({ page: 'run', id: parent.runId })}>its multi-step run</Link>
                </>
              )}
              {r.eventId && (
                <>
                  {' '}
                  · started by{' '}
                  <span data-testid="run-event">
                    <Link href={pathOf({ page: 'event', id: r.eventId })}>event {r.eventId}</Link>
                  </span>
                </>
              )}
              {r.sensorId && (
                <>
                  {' '}
                  ·{' '}
                  {r.runKey === null ? (
                    <>
                      an evaluation of <Link href={pathOf({ page: 'sensor', id: r.sensorId })}>its sensor</Link>
                    </>
                  ) : (
                    <>
                      asked for by <Link href={pathOf({ page: 'sensor', id: r.sensorId })}>its sensor</Link> as run key <code data-testid="run-key">{r.runKey}</code>
                    </>
                  )}
                </>
              )}
            </p>
            {holdOf(r) !== null && <HeldNote key={r.id} run={r} reason={holdOf(r)!} />}
            <VersionWaitNote run={r} />
            <AwaitedEventNote run={r} events={events} />
            <RunActions run={r} onChanged={reload} />
            <SignalPanel key={r.id} run={r} onSent={reload} />
            <VersionMove key={`version-${r.id}`} run={r} onMoved={reload} />
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
                <dt>Version</dt>
                <dd data-testid="run-version">{r.version === null ? 'any (the next worker to claim it sets it)' : <code>{r.version}</code>}</dd>
              </div>
              <div>
                <dt>Priority</dt>
                <dd data-testid="run-priority">{priorityInWords(r.priority)}</dd>
              </div>
              <div>
                <dt>Fairness key</dt>
                <dd data-testid="run-fairness-key">{r.fairnessKey === null ? <span class="muted">{fairnessKeyInWords(null)}</span> : <code>{r.fairnessKey}</code>}</dd>
              </div>
              {r.concurrency !== null && (
                <div>
                  <dt>Concurrency key</dt>
                  <dd>
                    <code>{r.concurrency.key}</code> (at most {r.concurrency.limit} at once)
                  </dd>
                </div>
              )}
              {steps === null ? (
                <div>
                  <dt>Target</dt>
                  <dd>{targetInWords(r.target)}</dd>
                </div>
              ) : (
                <div>
                  <dt>Steps</dt>
                  <dd>{steps.length === 1 ? '1 step' : `${steps.length} steps`}</dd>
                </div>
              )}
            </dl>
            <RunProgress progress={r.progress} />
            {steps !== null && <Steps steps={steps} selected={selectedStep} onSelect={setSelectedStep} />}
            {r.checkpoints.length > 0 && <CheckpointTimeline checkpoints={r.checkpoints} />}
            <RunEvents events={events} headingId="story" title="Events" empty="Waiting for events…" />
            <Attempts run={r} multiStep={steps !== null} />
            <section aria-labelledby="data">
              <h2 id="data">Payload and result</h2>
              <h3>Payload</h3>
              <pre>{JSON.stringify(r.payload, null, 2)}</pre>
              <h3>Result</h3>
              <pre>{JSON.stringify(r.result ?? r.error, null, 2)}</pre>
            </section>
          </>
        );
      }}
    </Show>
  );
}

/** Why a held run has not started: the limit holding it back, or its fairness key's turn (with its queue's numbers, read once), its concurrency key, and when it starts. */
function HeldNote({ run, reason }: { run: RunWithAttempts; reason: HoldReason }) {
  const queueLimited = reason !== 'CONCURRENCY_LIMIT';
  const [queue] = useLoad(() => (queueLimited ? kairosApi.queue(queueOf(run.target)).catch(() => null) : Promise.resolve(null)), [run.id, reason]);
  return (
    <p role="note" class="held-note" data-testid="held-note">
      <strong>
        {reason === 'FAIR_SHARE' ? 'Waiting for its turn' : 'Held back'} · {reason}
      </strong>{' '}
      {holdInWords(reason, run, queue.state === 'ready' ? queue.value : null)}
      {queueLimited && run.concurrency !== null && (
        <>
          {' '}
          Its concurrency key: <code>{run.concurrency.key}</code> (limit {run.concurrency.limit}).
        </>
      )}{' '}
      {queueLimited && <Link href={pathOf({ page: 'cluster' })}>See the queues</Link>}
    </p>
  );
}

/** What a run parked by ctx.waitForEvent waits for: the event's name and match, and until when (from its newest awaiting_event run event). */
function AwaitedEventNote({ run, events }: { run: RunWithAttempts; events: readonly RunEvent[] }) {
  const awaited = awaitedEvent(run, events);
  if (awaited === null) return null;
  return (
    <p role="note" class="held-note" data-testid="awaited-event">
      <strong>Waiting for an event</strong> It {awaitInWords(awaited)}. An event of that name whose values match resumes it:{' '}
      <Link href={pathOf({ page: 'events' })}>see the events</Link>.
    </p>
  );
}

/** How often a running multi-step run or durable function is read again. */
const STEPS_REFRESH_MS = 2_000;

/** The graph of a multi-step run and, below it, the selected step. */
function Steps({ steps, selected, onSelect }: { steps: RunStep[]; selected: string | null; onSelect: (name: string) => void }) {
  const step = steps.find((s) => s.name === selected) ?? null;
  return (
    <section aria-labelledby="steps" class="steps">
      <h2 id="steps">Steps</h2>
      <p class="muted">Each step starts once the steps with an arrow to it have ended; select a step for its story. A dashed box runs always, whatever its upstream steps did.</p>
      <StepGraph steps={steps} selected={selected} onSelect={onSelect} labelledBy="steps" />
      {step === null ? <p class="muted">No step selected.</p> : <StepDetail key={step.runId} step={step} />}
    </section>
  );
}

function RunActions({ run, onChanged }: { run: RunWithAttempts; onChanged: () => void }) {
  const can = useCan();
  const [error, setError] = useState<Error | null>(null);
  if (!can('write')) return null;
  const active = isActiveRunState(run.state);
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

function Attempts({ run, multiStep }: { run: RunWithAttempts; multiStep: boolean }) {
  return (
    <section aria-labelledby="attempts">
      <h2 id="attempts">Attempts</h2>
      {run.attempts.length === 0 ? (
        <p>{multiStep ? 'Each step is attempted in a run of its own: select a step above for its attempts and events.' : 'Not attempted yet.'}</p>
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
