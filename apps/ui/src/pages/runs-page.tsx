/**
 * The namespace's runs, newest first, filtered by schedule, state, queue and reason code, and a
 * bulk action on every run the filter matches: a dry run shows how many and a sample, then
 * "Cancel N runs" or "Retry N runs" acts after a confirmation (POST /v1/runs/bulk). A run whose
 * priority is not the normal one is marked with it.
 */
import { AnySelect } from '../components/any-select.js';
import { useState } from 'preact/hooks';
import { Link } from '../components/link.js';
import { Failure, Show, useLoad } from '../components/load.js';
import { Pager, usePagedLoad } from '../components/pager.js';
import { PriorityBadge } from '../components/priority-badge.js';
import { StateBadge, When } from '../components/when.js';
import { kairosApi } from '../data/kairos-api.js';
import type { Run, RunBulkFilter, RunBulkResult, RunState } from '../data/wire/index.js';
import { firstPage } from '../logic/cursor-paging.js';
import { pathOf } from '../logic/ui-route.js';
import { useCan } from '../session.js';

const PAGE_SIZE = 50;
const STATES: readonly RunState[] = ['queued', 'running', 'sleeping', 'waiting', 'succeeded', 'failed', 'cancelled', 'dead'];

interface Filter {
  scheduleId: string;
  state: RunState | '';
  queue: string;
  reasonCode: string;
}

const NO_FILTER: Filter = { scheduleId: '', state: '', queue: '', reasonCode: '' };

/** The queue a run travels on, as the API's filter reads it (a multi-step run's is its steps'). */
function queueOf(run: Run): string | null {
  if (run.target === null) return null;
  return run.target.type === 'handler' ? run.target.queue : 'default';
}

/** The filter as POST /v1/runs/bulk takes it: only the fields set. */
function bulkFilterOf(filter: Filter): RunBulkFilter {
  const bulk: RunBulkFilter = {};
  if (filter.scheduleId) bulk.scheduleId = filter.scheduleId;
  if (filter.state) bulk.state = [filter.state];
  if (filter.queue) bulk.queue = filter.queue;
  if (filter.reasonCode) bulk.reasonCode = filter.reasonCode;
  return bulk;
}

export function RunsPage() {
  const [filter, setFilter] = useState<Filter>(NO_FILTER);
  const { page, reload, paging, setPaging } = usePagedLoad(
    (cursor) => kairosApi.runs({ limit: PAGE_SIZE, cursor, scheduleId: filter.scheduleId || undefined, state: filter.state || undefined }),
    [filter.scheduleId, filter.state],
  );
  const [schedules] = useLoad(() => kairosApi.schedules({ limit: 100 }), []);
  const names = schedules.state === 'ready' ? new Map(schedules.value.items.map((s) => [s.id, s.name])) : new Map<string, string>();
  // The list route filters by schedule and state; queue and reason are kept on the page shown.
  const shown = (items: Run[]) => items.filter((r) => (!filter.queue || queueOf(r) === filter.queue) && (!filter.reasonCode || r.reasonCode === filter.reasonCode));
  const can = useCan();

  return (
    <>
      <h1>Runs</h1>
      <form
        class="filters"
        role="search"
        onSubmit={(event) => {
          event.preventDefault();
          const data = new FormData(event.currentTarget);
          setFilter({
            scheduleId: String(data.get('scheduleId') ?? ''),
            state: String(data.get('state') ?? '') as Filter['state'],
            queue: String(data.get('queue') ?? '').trim(),
            reasonCode: String(data.get('reasonCode') ?? '').trim(),
          });
          setPaging(firstPage);
        }}
      >
        <label>
          Schedule
          <select name="scheduleId">
            <option value="">any</option>
            {[...names].map(([id, name]) => (
              <option key={id} value={id}>
                {name}
              </option>
            ))}
          </select>
        </label>
        <AnySelect label="State" name="state" values={STATES} />
        <label>
          Queue <input name="queue" type="search" placeholder="default" />
        </label>
        <label>
          Reason <input name="reasonCode" type="search" placeholder="HANDLER_ERROR" />
        </label>
        <button type="submit">Filter</button>
      </form>
      {can('write') && <BulkAction key={JSON.stringify(filter)} filter={filter} scheduleName={names.get(filter.scheduleId)} onDone={reload} />}
      <Show loaded={page}>
        {(items) =>
          shown(items).length === 0 ? (
            <p>No runs match.</p>
          ) : (
            <div class="scroll">
              <table>
                <caption class="sr-only">Runs, newest first</caption>
                <thead>
                  <tr>
                    <th scope="col">Run</th>
                    <th scope="col">Schedule</th>
                    <th scope="col">State</th>
                    <th scope="col">Queue</th>
                    <th scope="col">Reason</th>
                    <th scope="col">Created</th>
                  </tr>
                </thead>
                <tbody>
                  {shown(items).map((r) => (
                    <tr key={r.id} data-run-id={r.id}>
                      <td>
                        <Link href={pathOf({ page: 'run', id: r.id })}>{r.id}</Link>
                      </td>
                      <td>{r.scheduleId ? <Link href={pathOf({ page: 'schedule', id: r.scheduleId })}>{names.get(r.scheduleId) ?? r.scheduleId}</Link> : <span class="muted">ad hoc</span>}</td>
                      <td>
                        <StateBadge state={r.state} />
                        <PriorityBadge priority={r.priority} />
                      </td>
                      <td>{queueOf(r) ?? <span class="muted">steps</span>}</td>
                      <td>{r.reasonCode ? <code>{r.reasonCode}</code> : <span class="muted">-</span>}</td>
                      <td>
                        <When at={r.createdAt} />
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )
        }
      </Show>
      <Pager paging={paging} onChange={setPaging}>
        <button type="button" onClick={reload}>
          Refresh
        </button>
      </Pager>
    </>
  );
}

/** The current filter in words, as the bulk action will apply it. */
function filterWords(filter: Filter, scheduleName: string | undefined): string {
  const parts = [
    filter.scheduleId && `schedule ${scheduleName ?? filter.scheduleId}`,
    filter.state && `state ${filter.state}`,
    filter.queue && `queue ${filter.queue}`,
    filter.reasonCode && `reason ${filter.reasonCode}`,
  ].filter(Boolean);
  return parts.join(', ');
}

/**
 * Count first (a dry run: how many runs and a sample), then act behind a confirmation. Cancel acts
 * on the active runs the filter matches; retry on the failed and dead ones (and cancelled
 * multi-step runs), each getting a fresh run.
 */
function BulkAction({ filter, scheduleName, onDone }: { filter: Filter; scheduleName: string | undefined; onDone: () => void }) {
  const [action, setAction] = useState<'cancel' | 'retry'>('cancel');
  const [counted, setCounted] = useState<RunBulkResult | null>(null);
  const [confirming, setConfirming] = useState(false);
  const [done, setDone] = useState<RunBulkResult | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<Error | null>(null);
  const words = filterWords(filter, scheduleName);
  const verb = action === 'cancel' ? 'Cancel' : 'Retry';

  const run = async (dryRun: boolean) => {
    setBusy(true);
    setError(null);
    try {
      const result = await kairosApi.bulkRuns({ action, filter: bulkFilterOf(filter), dryRun });
      if (dryRun) setCounted(result);
      else {
        setDone(result);
        setCounted(null);
        onDone();
      }
    } catch (failure) {
      setError(failure as Error);
    } finally {
      setBusy(false);
      setConfirming(false);
    }
  };

  return (
    <section aria-labelledby="bulk" class="bulk">
      <h2 id="bulk">Bulk action</h2>
      {words === '' ? (
        <p class="muted">Filter the runs above (schedule, state, queue or reason) to act on every run the filter matches.</p>
      ) : (
        <>
          <p>
            Filter: <strong>{words}</strong>
          </p>
          <div class="actions">
            <label>
              Action{' '}
              <select
                name="bulkAction"
                value={action}
                onChange={(event) => {
                  setAction((event.currentTarget as HTMLSelectElement).value as 'cancel' | 'retry');
                  setCounted(null);
                  setDone(null);
                }}
              >
                <option value="cancel">cancel the active runs</option>
                <option value="retry">retry the failed and dead runs</option>
              </select>
            </label>
            <button type="button" disabled={busy} onClick={() => void run(true)}>
              Count matching runs
            </button>
          </div>
          {counted && (
            <div role="status" aria-label="Matching runs">
              <p>
                {counted.matched === 0 ? `No run matches: nothing to ${action}.` : `${counted.matched} ${counted.matched === 1 ? 'run matches' : 'runs match'}${counted.matched > counted.sample.length ? `; the first ${counted.sample.length}:` : ':'}`}
              </p>
              {counted.sample.length > 0 && (
                <ul>
                  {counted.sample.map((id) => (
                    <li key={id}>
                      <Link href={pathOf({ page: 'run', id })}>{id}</Link>
                    </li>
                  ))}
                </ul>
              )}
              {counted.matched > 0 &&
                (confirming ? (
                  <span role="group" aria-label="Confirm bulk action">
                    {verb} {counted.matched} runs? {action === 'cancel' ? 'Queued runs end now; running ones are asked to stop.' : 'Each gets a fresh run.'}{' '}
                    <button type="button" class="danger" disabled={busy} onClick={() => void run(false)}>
                      Yes, {action} them
                    </button>{' '}
                    <button type="button" onClick={() => setConfirming(false)}>
                      No
                    </button>
                  </span>
                ) : (
                  <button type="button" class={action === 'cancel' ? 'danger' : undefined} onClick={() => setConfirming(true)}>
                    {verb} {counted.matched} runs
                  </button>
                ))}
            </div>
          )}
          {done && (
            <p role="status" aria-label="Bulk result">
              {action === 'cancel' ? 'Cancelled' : 'Retried'} {done.acted} of {done.matched} runs matched{done.acted < done.matched ? ' (the others ended meanwhile)' : ''}.
            </p>
          )}
          {error && <Failure error={error} />}
        </>
      )}
    </section>
  );
}
