/** All schedules of the namespace, the late ones marked: search by name or label, filter by status, one cursor page at a time, and a form to add one. */
import { AnySelect } from '../components/any-select.js';
import { useState } from 'preact/hooks';
import { LateBadge } from '../components/late-badge.js';
import { Link } from '../components/link.js';
import { Failure, Show, useLoad } from '../components/load.js';
import { Pager, usePagedLoad } from '../components/pager.js';
import { firstPage } from '../logic/cursor-paging.js';
import { StateBadge, When } from '../components/when.js';
import { kairosApi } from '../data/kairos-api.js';
import { specInWords } from '../logic/spec-words.js';
import { pathOf } from '../logic/ui-route.js';
import { navigate } from '../navigation.js';
import { useCan } from '../session.js';

const PAGE_SIZE = 50;
const STATUSES = ['active', 'paused', 'completed'];

interface Filter {
  name: string;
  label: string;
  status: string;
}

export function SchedulesPage() {
  const [filter, setFilter] = useState<Filter>({ name: '', label: '', status: '' });
  const { page, paging, setPaging } = usePagedLoad((cursor) => kairosApi.schedules({ limit: PAGE_SIZE, cursor, ...filter }), [filter.name, filter.label, filter.status]);
  // Outcomes follow the rows rather than hold them back.
  const ids = page.state === 'ready' ? page.value.map((s) => s.id) : [];
  const [lastTicks] = useLoad(() => kairosApi.lastTicks(ids), [ids.join(',')]);
  const outcomes = lastTicks.state === 'ready' ? lastTicks.value : {};
  const can = useCan();

  return (
    <>
      <h1>Schedules</h1>
      <form
        class="filters"
        role="search"
        onSubmit={(event) => {
          event.preventDefault();
          const data = new FormData(event.currentTarget);
          setFilter({ name: String(data.get('name') ?? '').trim(), label: String(data.get('label') ?? '').trim(), status: String(data.get('status') ?? '') });
          setPaging(firstPage);
        }}
      >
        <label>
          Name <input name="name" type="search" placeholder="exact name" />
        </label>
        <label>
          Label <input name="label" type="search" placeholder="team:billing" />
        </label>
        <AnySelect label="Status" name="status" values={STATUSES} />
        <button type="submit">Search</button>
      </form>
      <Show loaded={page}>
        {(items) =>
          items.length === 0 ? (
            <p>No schedules match.</p>
          ) : (
            <div class="scroll">
              <table>
                <caption class="sr-only">Schedules, newest first</caption>
                <thead>
                  <tr>
                    <th scope="col">Name</th>
                    <th scope="col">When</th>
                    <th scope="col">Status</th>
                    <th scope="col">Next fire</th>
                    <th scope="col">Last outcome</th>
                  </tr>
                </thead>
                <tbody>
                  {items.map((s) => (
                    <tr key={s.id}>
                      <td>
                        <Link href={pathOf({ page: 'schedule', id: s.id })}>{s.name}</Link>
                        {Object.entries(s.labels).map(([k, v]) => (
                          <span key={k} class="label">
                            {k}:{v}
                          </span>
                        ))}
                      </td>
                      <td>{specInWords(s)}</td>
                      <td>
                        <StateBadge state={s.status} /> <LateBadge schedule={s} />
                      </td>
                      <td>
                        <When at={s.nextFireAt} />
                      </td>
                      <td>{outcomes[s.id] ? <StateBadge state={outcomes[s.id]!} /> : <span class="muted">none yet</span>}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )
        }
      </Show>
      <Pager paging={paging} onChange={setPaging} />
      {can('write') && <NewSchedule />}
    </>
  );
}

/** The common case in a few fields; the REST API takes every option. */
function NewSchedule() {
  const [error, setError] = useState<Error | null>(null);
  return (
    <section aria-labelledby="new-schedule">
      <h2 id="new-schedule">New schedule</h2>
      <form
        class="stack"
        onSubmit={async (event) => {
          event.preventDefault();
          const data = new FormData(event.currentTarget);
          const timing = String(data.get('timing') ?? '').trim();
          const kind = String(data.get('kind'));
          const definition: Record<string, unknown> = {
            name: String(data.get('name') ?? '').trim(),
            [kind]: timing,
            target: { type: 'handler', name: String(data.get('handler') ?? 'echo').trim() },
          };
          if (kind === 'cron') definition.timezone = String(data.get('timezone') ?? 'UTC').trim() || 'UTC';
          try {
            const created = await kairosApi.createSchedule(definition);
            navigate(pathOf({ page: 'schedule', id: created.id }));
          } catch (failure) {
            setError(failure as Error);
          }
        }}
      >
        <label>
          Name <input name="name" required />
        </label>
        <fieldset>
          <legend>Timing</legend>
          <label>
            <input type="radio" name="kind" value="every" checked /> every
          </label>
          <label>
            <input type="radio" name="kind" value="cron" /> cron
          </label>
          <label>
            <input type="radio" name="kind" value="in" /> once, in
          </label>
          <label>
            Value <input name="timing" required placeholder="15m, or 0 9 * * *" />
          </label>
          <label>
            Time zone (cron) <input name="timezone" placeholder="UTC" />
          </label>
        </fieldset>
        <label>
          Handler <input name="handler" value="echo" required />
        </label>
        <button type="submit">Create</button>
        {error && <Failure error={error} />}
      </form>
    </section>
  );
}
