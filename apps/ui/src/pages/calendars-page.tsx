/** Every calendar of the namespace, one cursor page at a time: where its holidays come from, how many dates of its own it lists, and how many schedules exclude it. */
import { Link } from '../components/link.js';
import { Show } from '../components/load.js';
import { Pager, usePagedLoad } from '../components/pager.js';
import { When } from '../components/when.js';
import { kairosApi } from '../data/kairos-api.js';
import { holidaysInWords, schedulesInWords } from '../logic/calendars.js';
import { pathOf } from '../logic/ui-route.js';

const PAGE_SIZE = 50;

export function CalendarsPage() {
  const { page, paging, setPaging } = usePagedLoad((cursor) => kairosApi.calendars({ limit: PAGE_SIZE, cursor }));
  return (
    <>
      <h1>Calendars</h1>
      <p class="muted">
        A calendar is a named set of local dates, its own and the public holidays of a country (and state and region): a schedule that names it in calendar.exclude fires on none
        of them.
      </p>
      <Show loaded={page}>
        {(items) =>
          items.length === 0 ? (
            <p>
              No calendars yet. Create one with POST /v1/calendars, e.g. {'{ "name": "bavaria", "holidays": { "country": "DE", "state": "BY" } }'}, then name it in a schedule's{' '}
              {'"calendar": { "exclude": ["bavaria"] }'}.
            </p>
          ) : (
            <div class="scroll">
              <table data-testid="calendars">
                <caption class="sr-only">Calendars, by name</caption>
                <thead>
                  <tr>
                    <th scope="col">Name</th>
                    <th scope="col">Holidays</th>
                    <th scope="col">Own dates</th>
                    <th scope="col">Excluded by</th>
                    <th scope="col">Updated</th>
                  </tr>
                </thead>
                <tbody>
                  {items.map((c) => (
                    <tr key={c.name} data-testid={`calendar-row-${c.name}`}>
                      <td>
                        <Link href={pathOf({ page: 'calendar', name: c.name })}>{c.name}</Link>
                        {c.description && <div class="muted">{c.description}</div>}
                      </td>
                      <td>{holidaysInWords(c.holidays) ?? <span class="muted">none</span>}</td>
                      <td>{c.dates.length}</td>
                      <td>{schedulesInWords(c.schedules)}</td>
                      <td>
                        <When at={c.updatedAt} />
                      </td>
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
