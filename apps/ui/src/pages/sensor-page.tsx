/**
 * One sensor: its definition, its cursor, pause and resume, and a picture of its recent
 * evaluations (one bar per tick: the runs it asked for, created or deduplicated, in its state's
 * colour), then the ticks themselves with their evaluation runs and the runs they created. The page
 * reads the sensor and its ticks again every few seconds.
 */
import { useEffect } from 'preact/hooks';
import { useActions } from '../components/actions.js';
import { Link } from '../components/link.js';
import { Show, useLoad } from '../components/load.js';
import { SensorEvaluations } from '../components/sensor-evaluations.js';
import { StateBadge, When } from '../components/when.js';
import { kairosApi } from '../data/kairos-api.js';
import type { Sensor, SensorTick } from '../data/wire/index.js';
import { formatElapsed } from '../logic/run-story.js';
import { fairnessInWords, priorityInWords } from '../logic/priority.js';
import { countsInWords, TICK_STATES } from '../logic/sensor-evaluations.js';
import { durationInWords } from '../logic/spec-words.js';
import { targetInWords } from '../logic/step-graph.js';
import { pathOf } from '../logic/ui-route.js';
import { useCan } from '../session.js';
import { DefinitionBlock, type DefinitionRow } from '../components/definition.js';

/** The ticks drawn and listed: the newest this many. */
const TICKS_SHOWN = 60;
/** How often the page reads the sensor and its ticks again. */
const REFRESH_MS = 5_000;

export function SensorPage({ id }: { id: string }) {
  const [sensor, reload] = useLoad(() => kairosApi.sensor(id), [id]);
  const [ticks, reloadTicks] = useLoad(() => kairosApi.sensorTicks(id, TICKS_SHOWN), [id]);
  useEffect(() => {
    const timer = setInterval(() => {
      reload();
      reloadTicks();
    }, REFRESH_MS);
    return () => clearInterval(timer);
  }, [reload, reloadTicks]);
  return (
    <Show loaded={sensor}>
      {(s) => (
        <>
          <h1>{s.name}</h1>
          <p class="lead">
            Every {durationInWords(s.every)}, evaluated by <code>{s.target.name}</code> on queue {s.target.queue} · <StateBadge state={s.paused ? 'paused' : 'active'} />
            {s.evaluating && (
              <>
                {' '}
                · <StateBadge state="evaluating" />
              </>
            )}
          </p>
          <Actions
            sensor={s}
            onChanged={() => {
              reload();
              reloadTicks();
            }}
          />
          <Definition sensor={s} />
          <section aria-labelledby="cursor">
            <h2 id="cursor">Cursor</h2>
            <p class="muted">
              Where the last committed evaluation left off (version {s.cursorVersion}); the next evaluation starts from it.
            </p>
            <pre data-testid="sensor-cursor">{JSON.stringify(s.cursor, null, 2)}</pre>
          </section>
          <section aria-labelledby="evaluations">
            <h2 id="evaluations">Evaluations</h2>
            <Show loaded={ticks}>
              {(page) =>
                page.items.length === 0 ? (
                  <p>No evaluations yet.</p>
                ) : (
                  <>
                    <p class="muted">
                      The newest {page.items.length === 1 ? 'evaluation' : `${page.items.length} evaluations`}, oldest left: each bar as tall as the runs it asked for. Point at a bar
                      for its story.
                    </p>
                    <SensorEvaluations ticks={page.items} labelledBy="evaluations" />
                    <Ticks ticks={page.items} />
                  </>
                )
              }
            </Show>
          </section>
        </>
      )}
    </Show>
  );
}

function Actions({ sensor, onChanged }: { sensor: Sensor; onChanged: () => void }) {
  const can = useCan();
  const { act, outcome } = useActions(onChanged);
  if (!can('write')) return null;
  return (
    <section aria-label="Actions" class="actions">
      {sensor.paused ? (
        <button type="button" onClick={() => act('Resumed.', () => kairosApi.resumeSensor(sensor.id))}>
          Resume
        </button>
      ) : (
        <button type="button" onClick={() => act('Paused: no evaluation starts until it is resumed.', () => kairosApi.pauseSensor(sensor.id))}>
          Pause
        </button>
      )}
      {outcome}
    </section>
  );
}

function Definition({ sensor: s }: { sensor: Sensor }) {
  const run = s.run;
  const rows: DefinitionRow[] = [
    ['Every', s.every],
    ['Evaluation', `${targetInWords(s.target)}, timeout ${s.timeout}`],
    ['Next evaluation', s.evaluating ? 'under way now' : s.paused ? 'none while paused' : <When at={s.nextEvaluationAt} />],
    [
      'Its runs execute',
      run.steps === null
        ? targetInWords(run.target)
        : `${run.steps.length === 1 ? '1 step' : `${run.steps.length} steps`}: ${run.steps.map((step) => `${step.name} (${targetInWords(step.target)})`).join(', ')}`,
    ],
    ['Their retry', `${run.retry.maxAttempts} attempts, ${run.retry.backoff.type} from ${run.retry.backoff.base} to ${run.retry.backoff.max}, jitter ${run.retry.backoff.jitter}`],
    ['Their timeout', run.timeout],
    ['Their concurrency', run.concurrency === null ? 'none' : `key ${run.concurrency.key}, at most ${run.concurrency.limit} at once`],
    ['Their priority', priorityInWords(run.priority)],
    ['Their fairness', fairnessInWords(run.fairness)],
    ['Payload', JSON.stringify(s.payload)],
    ['Labels', Object.entries(s.labels).map(([k, v]) => `${k}:${v}`).join(', ') || 'none'],
    ['Source', s.source ?? 'the API'],
    ['Created', <When at={s.createdAt} />],
    ['Updated', <When at={s.updatedAt} />],
  ];
  return <DefinitionBlock rows={rows} />;
}

/** The ticks drawn above, newest first: what each asked for, how it ended, its evaluation run and the runs it created. */
function Ticks({ ticks }: { ticks: readonly SensorTick[] }) {
  return (
    <div class="scroll">
      <table data-testid="sensor-ticks">
        <caption class="sr-only">Evaluations, newest first</caption>
        <thead>
          <tr>
            <th scope="col">Started</th>
            <th scope="col">State</th>
            <th scope="col">Runs</th>
            <th scope="col">Took</th>
            <th scope="col">Reason</th>
            <th scope="col">Evaluation</th>
            <th scope="col">Runs created</th>
          </tr>
        </thead>
        <tbody>
          {ticks.map((t) => (
            <tr key={t.id} data-tick-id={t.id}>
              <td>
                <When at={t.startedAt} />
              </td>
              <td>
                <StateBadge state={t.state} /> <span class="sr-only">{TICK_STATES[t.state]}</span>
              </td>
              <td>{countsInWords(t)}</td>
              <td>{t.durationMs === null ? <span class="muted">evaluating</span> : formatElapsed(t.durationMs)}</td>
              <td>
                {t.reasonCode && <code>{t.reasonCode}</code>} {t.reason}
              </td>
              <td>
                <Link href={pathOf({ page: 'run', id: t.runId })}>{t.runId.slice(0, 13)}…</Link>
              </td>
              <td>
                {t.runIds.length === 0 ? (
                  <span class="muted">none</span>
                ) : (
                  <ul class="run-links">
                    {t.runIds.map((runId) => (
                      <li key={runId}>
                        <Link href={pathOf({ page: 'run', id: runId })}>{runId.slice(0, 13)}…</Link>
                      </li>
                    ))}
                  </ul>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
