/** The events applications sent, newest first, one cursor page at a time: filter by name; each with what it started, skipped and resumed. */
import { useState } from 'preact/hooks';
import { Link } from '../components/link.js';
import { Show } from '../components/load.js';
import { Pager, usePagedLoad } from '../components/pager.js';
import { When } from '../components/when.js';
import { kairosApi } from '../data/kairos-api.js';
import { firstPage } from '../logic/cursor-paging.js';
import { sendEventCommand } from '../logic/events.js';
import { pathOf } from '../logic/ui-route.js';

const PAGE_SIZE = 50;

export function EventsPage() {
  const [name, setName] = useState('');
  const { page, paging, setPaging } = usePagedLoad((cursor) => kairosApi.events({ limit: PAGE_SIZE, cursor, name }), [name]);
  return (
    <>
      <h1>Events</h1>
      <p class="muted">
        An application sends an event with POST /v1/events: each schedule whose <code>on</code> matches it gets a run, and each durable function waiting for it
        (ctx.waitForEvent) resumes.
      </p>
      <form
        class="filters"
        role="search"
        onSubmit={(event) => {
          event.preventDefault();
          setName(String(new FormData(event.currentTarget).get('name') ?? '').trim());
          setPaging(firstPage);
        }}
      >
        <label>
          Name <input name="name" type="search" placeholder="order.paid" />
        </label>
        <button type="submit">Search</button>
      </form>
      <Show loaded={page}>
        {(items) =>
          items.length === 0 ? (
            <NoEvents name={name} />
          ) : (
            <div class="scroll">
              <table data-testid="events">
                <caption class="sr-only">Events, newest first</caption>
                <thead>
                  <tr>
                    <th scope="col">Name</th>
                    <th scope="col">Id</th>
                    <th scope="col">Received</th>
                    <th scope="col">Runs started</th>
                    <th scope="col">Schedules skipped</th>
                    <th scope="col">Waits resumed</th>
                  </tr>
                </thead>
                <tbody>
                  {items.map((e) => (
                    <tr key={e.id} data-event-id={e.id}>
                      <td>
                        <Link href={pathOf({ page: 'event', id: e.id })}>{e.name}</Link>
                      </td>
                      <td>
                        <code>{e.id}</code>
                      </td>
                      <td>
                        <When at={e.receivedAt} />
                      </td>
                      <td>{e.runs.length}</td>
                      <td>{e.skipped.length}</td>
                      <td>{e.resumed.length}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )
        }
      </Show>
      <Pager paging={paging} onChange={setPaging} />
    </>
  );
}

/** No events (of the name searched for): how to send one, and how to make it start a run. */
function NoEvents({ name }: { name: string }) {
  return (
    <div data-testid="no-events">
      <p>{name === '' ? 'No events yet.' : `No events named ${name}.`} Send one from a shell (with an API key of write scope):</p>
      <pre class="command">{sendEventCommand(location.origin, name || undefined)}</pre>
      <p>
        To have it start a run, give a schedule <code>{`"on": { "event": "${name || 'order.paid'}", "match": { "data.plan": "pro" } }`}</code> instead of cron, every or at; a
        durable function waits for one with <code>{`ctx.waitForEvent("${name || 'order.paid'}", { match, timeout })`}</code>.
      </p>
    </div>
  );
}
