/** One schedule: its definition and policies (its deadline, and a badge while it is late; its calendar rule, linking each calendar), the next ten fires (DST changes and the dates its calendar keeps clear marked), its ticks and runs (new runs appear live), the versions of its definition, and its actions. */
import { useEffect, useState } from 'preact/hooks';
import { LateBadge } from '../components/late-badge.js';
import { RunScatter } from '../components/charts.js';
import { useActions } from '../components/actions.js';
import { Link } from '../components/link.js';
import { Failure, Show, useLoad } from '../components/load.js';
import { StateBadge, When } from '../components/when.js';
import { followScheduleRuns, kairosApi } from '../data/kairos-api.js';
import type { CalendarDate, CalendarRule, EventTrigger, Run, Schedule } from '../data/wire/index.js';
import { ON_EXCLUDED_WORDS, weekdayOf, whyExcluded } from '../logic/calendars.js';
import { expectInWords } from '../logic/deadlines.js';
import { eventFilterInWords, matchInWords, triggerInWords } from '../logic/events.js';
import { flowControlLine, flowControlsInWords } from '../logic/flow-control.js';
import { markOffsetChanges, withExcludedDates } from '../logic/fire-preview.js';
import { fairnessInWords, priorityInWords } from '../logic/priority.js';
import { durationBetween } from '../logic/run-story.js';
import { specInWords } from '../logic/spec-words.js';
import { dependsOnInWords, targetInWords, whenInWords, type ScheduleStep } from '../logic/step-graph.js';
import { pathOf } from '../logic/ui-route.js';
import { navigate } from '../navigation.js';
import { useCan } from '../session.js';
import { DefinitionBlock, type DefinitionRow } from '../components/definition.js';

export function SchedulePage({ id }: { id: string }) {
  const [schedule, reload] = useLoad(() => kairosApi.schedule(id), [id]);
  return (
    <Show loaded={schedule}>
      {(s) => (
        <>
          <h1>{s.name}</h1>
          <p class="lead">
            <span data-testid="schedule-timing">{specInWords(s)}</span> · <StateBadge state={s.status} /> <LateBadge schedule={s} />
          </p>
          <Actions schedule={s} onChanged={reload} />
          <Definition schedule={s} />
          {s.on === null ? <NextFires schedule={s} /> : <StartedBy schedule={s} on={s.on} />}
          <Runs scheduleId={s.id} />
          <Ticks scheduleId={s.id} />
          <Versions scheduleId={s.id} />
        </>
      )}
    </Show>
  );
}

function Actions({ schedule, onChanged }: { schedule: Schedule; onChanged: () => void }) {
  const can = useCan();
  const { act, outcome } = useActions(onChanged);
  const [confirmingDelete, setConfirmingDelete] = useState(false);
  if (!can('write')) return null;
  return (
    <section aria-label="Actions" class="actions">
      {schedule.status === 'active' && (
        <button type="button" onClick={() => act('Paused.', () => kairosApi.pause(schedule.id))}>
          Pause
        </button>
      )}
      {schedule.status === 'paused' && (
        <button type="button" onClick={() => act('Resumed.', () => kairosApi.resume(schedule.id))}>
          Resume
        </button>
      )}
      <button type="button" onClick={() => act('Triggered: a run is queued.', () => kairosApi.trigger(schedule.id))}>
        Trigger now
      </button>
      {schedule.on === null && (
        <details>
          <summary>Backfill</summary>
          <form
            class="stack"
            onSubmit={(event) => {
              event.preventDefault();
              const data = new FormData(event.currentTarget);
              const from = new Date(String(data.get('from'))).toISOString();
              const to = new Date(String(data.get('to'))).toISOString();
              void act('Backfill queued.', () => kairosApi.backfill(schedule.id, from, to));
            }}
          >
            <label>
              From (UTC) <input name="from" type="datetime-local" required />
            </label>
            <label>
              To (UTC) <input name="to" type="datetime-local" required />
            </label>
            <button type="submit">Backfill past slots</button>
          </form>
        </details>
      )}
      <details>
        <summary>Edit</summary>
        <form
          class="stack"
          onSubmit={(event) => {
            event.preventDefault();
            const text = String(new FormData(event.currentTarget).get('changes') ?? '{}');
            void act('Saved.', async () => {
              let changes: Record<string, unknown>;
              try {
                changes = JSON.parse(text) as Record<string, unknown>;
              } catch {
                throw new Error('the changes must be a JSON object, e.g. {"every": "30m"}');
              }
              return kairosApi.editSchedule(schedule.id, changes);
            });
          }}
        >
          <label for="changes">Changes (JSON, the fields to replace)</label>
          <textarea id="changes" name="changes" rows={4} value={JSON.stringify({ name: schedule.name, labels: schedule.labels }, null, 2)} />
          <button type="submit">Save</button>
        </form>
      </details>
      {confirmingDelete ? (
        <span role="group" aria-label="Confirm delete">
          Delete {schedule.name}? Its runs stay in the ledger.{' '}
          <button
            type="button"
            class="danger"
            onClick={() =>
              act('Deleted.', async () => {
                await kairosApi.deleteSchedule(schedule.id);
                navigate(pathOf({ page: 'schedules' }));
              })
            }
          >
            Yes, delete
          </button>{' '}
          <button type="button" onClick={() => setConfirmingDelete(false)}>
            Keep it
          </button>
        </span>
      ) : (
        <button type="button" class="danger" onClick={() => setConfirmingDelete(true)}>
          Delete…
        </button>
      )}
      {outcome}
    </section>
  );
}

function Definition({ schedule: s }: { schedule: Schedule }) {
  const steps = s.steps;
  const clock = s.on === null;
  const rows: (DefinitionRow | false)[] = [
    ['Timing', s.on !== null ? `on event ${eventFilterInWords(s.on.event, s.on.match)}` : s.cron !== null ? `cron ${s.cron}` : s.every !== null ? `every ${s.every}` : `at ${s.at}`],
    // A schedule started by events has no slots: the policies of slots do not apply to it.
    clock && ['Time zone', s.timezone],
    clock && ['DST', `gap ${s.dst.gap}, overlap ${s.dst.overlap}`],
    clock && ['Catch-up', `${s.catchup.mode}${s.catchup.window ? `, window ${s.catchup.window}` : ''}${s.catchup.limit !== null ? `, limit ${s.catchup.limit}` : ''}`],
    !clock && ['Flow control', flowControlLine(s)],
    // The runs of a debounce, batch or throttle are spaced by it, whatever the overlap policy says.
    ['Overlap', clock || (s.debounce === null && s.batch === null && s.throttle === null) ? s.overlap : `${s.overlap} (not applied: its flow control spaces the runs)`],
    steps === null ? ['Target', targetInWords(s.target)] : ['Steps', steps.length === 1 ? '1 step, below' : `${steps.length} steps, below`],
    ['Retry', `${s.retry.maxAttempts} attempts, ${s.retry.backoff.type} from ${s.retry.backoff.base} to ${s.retry.backoff.max}, jitter ${s.retry.backoff.jitter}`],
    ['Timeout', s.timeout],
    ['Concurrency', s.concurrency === null ? 'none' : `key ${s.concurrency.key}, at most ${s.concurrency.limit} at once`],
    ['Priority', priorityInWords(s.priority)],
    ['Fairness', fairnessInWords(s.fairness)],
    clock && ['Deadline', expectInWords(s.expect)],
    clock && ['Calendar', <CalendarRuleInWords rule={s.calendar} />],
    clock && ['Bounds', `${s.startAt ?? 'from creation'} to ${s.endAt ?? 'no end'}${s.maxRuns !== null ? `, at most ${s.maxRuns} runs` : ''}`],
    ['Fired', `${s.fireCount} times, last ${s.lastFireAt ?? 'never'}`],
    ['Labels', Object.entries(s.labels).map(([k, v]) => `${k}:${v}`).join(', ') || 'none'],
    ['Payload', JSON.stringify(s.payload)],
  ];
  return (
    <DefinitionBlock rows={rows.filter((row): row is DefinitionRow => row !== false)} title="Definition and policies">
      {steps !== null && <Steps steps={steps} />}
    </DefinitionBlock>
  );
}

/** The graph of steps each run executes, in declaration order: what each waits for, when it runs, its target, and its own policies. */
function Steps({ steps }: { steps: ScheduleStep[] }) {
  return (
    <>
      <h3 id="schedule-steps">Steps</h3>
      <ol class="schedule-steps" aria-labelledby="schedule-steps">
        {steps.map((step) => (
          <li key={step.name} data-step-name={step.name}>
            <strong>
              <code>{step.name}</code>
            </strong>
            <dl class="step-facts">
              <div>
                <dt>Depends on</dt>
                <dd>
                  {step.dependsOn.length === 0 ? (
                    <span class="muted">nothing: {dependsOnInWords(step.dependsOn)}</span>
                  ) : (
                    step.dependsOn.map((name, i) => (
                      <span key={name}>
                        {i > 0 && ', '}
                        <code>{name}</code>
                      </span>
                    ))
                  )}
                </dd>
              </div>
              <div>
                <dt>When</dt>
                <dd>
                  <code>{step.when}</code> <span class="muted">({whenInWords(step.when)})</span>
                </dd>
              </div>
              <div>
                <dt>Target</dt>
                <dd>{targetInWords(step.target)}</dd>
              </div>
              {step.retry && (
                <div>
                  <dt>Retry</dt>
                  <dd>
                    {step.retry.maxAttempts} attempts, {step.retry.backoff.type} from {step.retry.backoff.base} to {step.retry.backoff.max}, jitter {step.retry.backoff.jitter}
                  </dd>
                </div>
              )}
              {step.timeout && (
                <div>
                  <dt>Timeout</dt>
                  <dd>{step.timeout}</dd>
                </div>
              )}
              {step.priority !== null && (
                <div>
                  <dt>Priority</dt>
                  <dd>{priorityInWords(step.priority)}</dd>
                </div>
              )}
              {step.fairness && (
                <div>
                  <dt>Fairness</dt>
                  <dd>{fairnessInWords(step.fairness)}</dd>
                </div>
              )}
            </dl>
          </li>
        ))}
      </ol>
    </>
  );
}

/** "Excludes bavaria, weekends; slots on excluded dates move to the previous allowed date", each calendar linking to its page. */
function CalendarRuleInWords({ rule }: { rule: CalendarRule | null }) {
  if (rule === null) return <>none: it fires on every date</>;
  return (
    <span data-testid="calendar-rule">
      Excludes{' '}
      {rule.exclude.map((name, i) => (
        <span key={name}>
          {i > 0 && ', '}
          <Link href={pathOf({ page: 'calendar', name })}>{name}</Link>
        </span>
      ))}
      {rule.weekdaysOnly && (rule.exclude.length > 0 ? ', weekends' : 'weekends')}; {ON_EXCLUDED_WORDS[rule.onExcluded]}
    </span>
  );
}

/** A schedule started by events has no fire times: what starts it instead, and where its events are listed. */
function StartedBy({ schedule, on }: { schedule: Schedule; on: EventTrigger }) {
  const controls = flowControlsInWords(schedule);
  return (
    <section aria-labelledby="started-by">
      <h2 id="started-by">What starts it</h2>
      <p data-testid="schedule-trigger">
        It {triggerInWords(on)}: each event sent with POST /v1/events of that name{matchInWords(on.match) === '' ? '' : ' whose values match'}{' '}
        {controls.length === 0 ? 'gets a run' : 'asks for a run, as its flow control below allows'}, with the event under{' '}
        <code>{schedule.batch === null ? 'payload.event' : 'payload.events'}</code>. It has no fire times of its own.
      </p>
      {controls.length > 0 && (
        <ul data-testid="flow-controls" aria-label="Flow control">
          {controls.map((c) => (
            <li key={c.control}>
              <strong>{c.short}</strong>: {c.meaning}.
            </li>
          ))}
        </ul>
      )}
      <p>
        <Link href={pathOf({ page: 'events' })}>See the events</Link> and what each started.{schedule.status === 'paused' && ' While paused, an event that matches is recorded as skipped (SCHEDULE_PAUSED).'}
      </p>
    </section>
  );
}

function NextFires({ schedule }: { schedule: Schedule }) {
  const [preview] = useLoad(async () => {
    const { fireTimes, excludedDates = [] } = await kairosApi.preview(schedule.id, 10);
    return { fireTimes, excludedDates, listed: await listedBy(schedule.calendar, excludedDates) };
  }, [schedule.id, schedule.updatedAt]);
  return (
    <section aria-labelledby="next-fires">
      <h2 id="next-fires">Next ten fires</h2>
      <Show loaded={preview}>
        {({ fireTimes, excludedDates, listed }) =>
          fireTimes.length === 0 ? (
            <p>No future fires.</p>
          ) : (
            <>
              {excludedDates.length > 0 && <p class="muted">Marked ✕ among them: the dates its calendar keeps clear, on which nothing fires (a CALENDAR_EXCLUDED tick records each).</p>}
              <ol class="fires">
                {withExcludedDates(markOffsetChanges(fireTimes, schedule.timezone), excludedDates).map((f) =>
                  f.kind === 'excluded' ? (
                    <li key={f.date} class="excluded" data-excluded-date={f.date}>
                      <span class="excluded-mark">✕ {f.date}</span> {weekdayOf(f.date)} · no fire: {whyExcluded(f.date, schedule.calendar!, listed)}
                    </li>
                  ) : (
                    <li key={f.instant} class={f.offsetChanged ? 'dst' : undefined}>
                      <When at={f.instant} /> · {f.local} ({schedule.timezone}, UTC{f.offset})
                      {f.offsetChanged && <strong class="dst-mark"> DST change: offset now {f.offset}</strong>}
                    </li>
                  ),
                )}
              </ol>
            </>
          )
        }
      </Show>
    </section>
  );
}

/** The dates each calendar the rule names lists over the excluded dates, for why each is excluded; a calendar that cannot be read lists none. */
async function listedBy(rule: CalendarRule | null, excludedDates: readonly string[]): Promise<Map<string, CalendarDate[]>> {
  if (rule === null || excludedDates.length === 0) return new Map();
  const sorted = [...excludedDates].sort();
  const range = { from: sorted[0]!, to: sorted[sorted.length - 1]! };
  const lists = await Promise.all(rule.exclude.map(async (name) => [name, (await kairosApi.calendarDates(name, range).catch(() => null))?.items ?? []] as const));
  return new Map(lists);
}

/** The newest runs as marks: how long each took, and how long after its slot it started. */
function RunCharts({ runs }: { runs: readonly Run[] }) {
  return (
    <div class="run-charts">
      <h3 id="run-durations">Duration of each run</h3>
      <RunScatter runs={runs} measure="duration" labelledBy="run-durations" testId="run-durations" />
      <h3 id="run-lateness">Lateness of each run</h3>
      <RunScatter runs={runs} measure="lateness" labelledBy="run-lateness" testId="run-lateness" />
      <ul class="chart-legend" aria-label="Legend">
        {(['succeeded', 'failed', 'dead', 'cancelled'] as const).map((o) => (
          <li key={o}>
            <span class={`swatch outcome-${o}`} /> {o}
          </li>
        ))}
        <li>
          <span class="swatch outcome-active" /> not ended yet
        </li>
        <li class="muted">x: when it started (its slot, if it never started); y: how long it took, how late it started</li>
      </ul>
    </div>
  );
}

/** How many of the newest runs the charts draw; the table lists the first LISTED_RUNS. */
const CHARTED_RUNS = 100;
const LISTED_RUNS = 20;

/**
 * The newest runs, charted (one mark per run: when it started, how long it took, how late it
 * started, coloured by how it ended) and listed; the scheduleRuns subscription adds new ones and
 * updates states as they change.
 */
function Runs({ scheduleId }: { scheduleId: string }) {
  const [runs, setRuns] = useState<Run[] | null>(null);
  const [error, setError] = useState<Error | null>(null);
  useEffect(() => {
    let current = true;
    kairosApi.runs({ scheduleId, limit: CHARTED_RUNS }).then(
      (page) => current && setRuns((live) => merge(page.items, live ?? [])),
      (failure: Error) => current && setError(failure),
    );
    const stop = followScheduleRuns(scheduleId, (run) => setRuns((known) => merge([run], known ?? [])));
    return () => {
      current = false;
      stop();
    };
  }, [scheduleId]);
  return (
    <section aria-labelledby="runs">
      <h2 id="runs">Runs</h2>
      {error && <Failure error={error} />}
      {runs !== null && runs.length === 0 && (
        <p class="empty" data-testid="runs-empty">
          No runs yet. Each run appears here as it starts; Trigger now, above, starts one at once.
        </p>
      )}
      {runs !== null && runs.length > 0 && <RunCharts runs={runs} />}
      {runs !== null && runs.length > 0 && (
        <div class="scroll">
          <table aria-live="polite">
            <thead>
              <tr>
                <th scope="col">Run</th>
                <th scope="col">Origin</th>
                <th scope="col">Slot</th>
                <th scope="col">State</th>
                <th scope="col">Attempt</th>
                <th scope="col">Duration</th>
                <th scope="col">Reason</th>
              </tr>
            </thead>
            <tbody>
              {runs.slice(0, LISTED_RUNS).map((r) => (
                <tr key={r.id} data-run-id={r.id}>
                  <td>
                    <Link href={pathOf({ page: 'run', id: r.id })}>{r.id.slice(0, 13)}…</Link>
                  </td>
                  <td>{r.origin}</td>
                  <td>
                    <When at={r.scheduledFor} />
                  </td>
                  <td>
                    <StateBadge state={r.state} />
                  </td>
                  <td>
                    {r.attempt}/{r.maxAttempts}
                  </td>
                  <td>{durationBetween(r.startedAt, r.finishedAt)}</td>
                  <td>{r.reasonCode ?? ''}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

/** Newer information about a run wins; newest run first (ids are time-ordered). */
function merge(incoming: Run[], known: Run[]): Run[] {
  const byId = new Map(known.map((r) => [r.id, r]));
  for (const run of incoming) byId.set(run.id, { ...byId.get(run.id), ...run });
  return [...byId.values()].sort((a, b) => (a.id < b.id ? 1 : a.id > b.id ? -1 : 0)).slice(0, 50);
}

function Ticks({ scheduleId }: { scheduleId: string }) {
  const [ticks] = useLoad(() => kairosApi.ticks(scheduleId, 50), [scheduleId]);
  return (
    <section aria-labelledby="ticks">
      <h2 id="ticks">Tick timeline</h2>
      <Show loaded={ticks}>
        {(page) =>
          page.items.length === 0 ? (
            <p>No ticks yet.</p>
          ) : (
            <ol class="timeline">
              {page.items.map((t) => (
                <li key={t.scheduledFor}>
                  <When at={t.scheduledFor} /> <StateBadge state={t.outcome} /> {t.reasonCode && <code>{t.reasonCode}</code>}{' '}
                  {t.runId && <Link href={pathOf({ page: 'run', id: t.runId })}>run</Link>}
                </li>
              ))}
            </ol>
          )
        }
      </Show>
    </section>
  );
}

const shown = (value: unknown): string => (value === null || value === undefined ? '—' : JSON.stringify(value));

/** Every version of the definition, newest first: who changed it, when, from which source, and each changed field. */
function Versions({ scheduleId }: { scheduleId: string }) {
  const [versions] = useLoad(() => kairosApi.versions(scheduleId, 20), [scheduleId]);
  return (
    <section aria-labelledby="versions">
      <h2 id="versions">Versions</h2>
      <Show loaded={versions}>
        {(page) => (
          <ol class="timeline versions">
            {page.items.map((v) => (
              <li key={v.version}>
                <strong>v{v.version}</strong> <When at={v.appliedAt} /> by <code>{v.actor}</code>
                {v.source && (
                  <>
                    {' '}
                    from source <code>{v.source}</code>
                  </>
                )}
                {v.version > 1 && v.changes.length > 0 && (
                  <ul class="changes">
                    {v.changes.map((c) => (
                      <li key={c.field}>
                        <code>{c.field}</code>: {shown(c.from)} → {shown(c.to)}
                      </li>
                    ))}
                  </ul>
                )}
              </li>
            ))}
          </ol>
        )}
      </Show>
    </section>
  );
}
