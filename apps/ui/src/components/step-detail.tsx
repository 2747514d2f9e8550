/** The selected step of a multi-step run: its state and reason, attempts, times, result, error, and its own run's events. */
import { kairosApi } from '../data/kairos-api.js';
import { dependsOnInWords, STEP_STATE_WORDS, stepAttempts, stepDuration, whenInWords, type RunStep } from '../logic/step-graph.js';
import { pathOf } from '../logic/ui-route.js';
import { Link } from './link.js';
import { Failure, useLoad } from './load.js';
import { RunEvents } from './run-events.js';
import { useNow } from './use-now.js';
import { StateBadge, When } from './when.js';

export function StepDetail({ step }: { step: RunStep }) {
  // Read again whenever the step moves on (the run page re-reads the run while its steps run).
  const [events] = useLoad(() => kairosApi.runEvents(step.runId), [step.runId, step.state, step.attempt, step.finishedAt]);
  const now = useNow(step.startedAt !== null && step.finishedAt === null ? 1_000 : null);
  return (
    <section data-testid="step-detail" class="step-detail" aria-labelledby="step-detail-heading">
      <h3 id="step-detail-heading">
        Step <code>{step.name}</code>
      </h3>
      <dl class="pairs">
        <div>
          <dt>State</dt>
          <dd>
            <StateBadge state={step.state} /> <span class="muted">{STEP_STATE_WORDS[step.state] ?? ''}</span>
          </dd>
        </div>
        <div>
          <dt>Reason</dt>
          <dd>
            {step.reasonCode === null && step.reasonText === null ? (
              <span class="muted">—</span>
            ) : (
              <>
                {step.reasonCode && <code>{step.reasonCode}</code>} {step.reasonText}
              </>
            )}
          </dd>
        </div>
        <div>
          <dt>Attempts</dt>
          <dd>{stepAttempts(step)}</dd>
        </div>
        <div>
          <dt>Started</dt>
          <dd>
            <When at={step.startedAt} />
          </dd>
        </div>
        <div>
          <dt>Finished</dt>
          <dd>
            <When at={step.finishedAt} />
          </dd>
        </div>
        <div>
          <dt>Duration</dt>
          <dd>{stepDuration(step, now)}</dd>
        </div>
        <div>
          <dt>Starts</dt>
          <dd>{dependsOnInWords(step.dependsOn)}</dd>
        </div>
        <div>
          <dt>Runs</dt>
          <dd>
            <code>{step.when}</code>: {whenInWords(step.when)}
          </dd>
        </div>
        <div>
          <dt>Step run</dt>
          <dd>
            <Link href={pathOf({ page: 'run', id: step.runId })}>{step.runId}</Link>
          </dd>
        </div>
      </dl>
      <h4>Result</h4>
      {step.result === null || step.result === undefined ? <p class="muted">None.</p> : <pre>{JSON.stringify(step.result, null, 2)}</pre>}
      <h4>Error</h4>
      {step.error === null || step.error === undefined ? <p class="muted">None.</p> : <pre>{JSON.stringify(step.error, null, 2)}</pre>}
      {events.state === 'failed' ? (
        <Failure error={events.error} />
      ) : (
        <RunEvents
          events={events.state === 'ready' ? events.value : []}
          headingId="step-events"
          title={`Events of step ${step.name}`}
          level={4}
          empty={events.state === 'loading' ? 'Loading…' : 'No events yet.'}
        />
      )}
    </section>
  );
}
