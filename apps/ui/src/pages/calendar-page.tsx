/** One calendar: where its dates come from, how many schedules exclude it, and the dates it excludes over the next twelve months, drawn as a year of month grids and listed. */
import { Show, useLoad } from '../components/load.js';
import { When } from '../components/when.js';
import { YearStrip } from '../components/year-strip.js';
import { kairosApi } from '../data/kairos-api.js';
import type { Calendar, CalendarDates } from '../data/wire/index.js';
import { holidaysInWords, schedulesInWords, twelveMonthsFrom, weekdayOf } from '../logic/calendars.js';
import { DefinitionBlock, type DefinitionRow } from '../components/definition.js';

export function CalendarPage({ name }: { name: string }) {
  const [calendar] = useLoad(() => kairosApi.calendar(name), [name]);
  // From today (UTC, as the API counts it) to the end of the twelfth month, so the grids and the list show the same dates.
  const [dates] = useLoad(() => kairosApi.calendarDates(name, twelveMonthsFrom(new Date().toISOString().slice(0, 10))), [name]);
  return (
    <Show loaded={calendar}>
      {(c) => (
        <>
          <h1>{c.name}</h1>
          <p class="lead">
            {c.description && <>{c.description} · </>}
            {sourcesInWords(c)} · excluded by {schedulesInWords(c.schedules)}
          </p>
          <Definition calendar={c} />
          <section aria-labelledby="twelve-months">
            <h2 id="twelve-months">The next twelve months</h2>
            <Show loaded={dates}>{(range) => <Dates range={range} />}</Show>
          </section>
        </>
      )}
    </Show>
  );
}

function sourcesInWords(c: Calendar): string {
  const own = c.dates.length === 0 ? null : c.dates.length === 1 ? '1 own date' : `${c.dates.length} own dates`;
  return [holidaysInWords(c.holidays), own].filter((part) => part !== null).join(' and ');
}

function Definition({ calendar: c }: { calendar: Calendar }) {
  const rows: DefinitionRow[] = [
    ['Holidays', holidaysInWords(c.holidays) ?? 'none'],
    ['Own dates', c.dates.length === 0 ? 'none' : c.dates.join(', ')],
    ['Description', c.description ?? 'none'],
    [
      'Excluded by',
      c.schedules === 0 ? (
        <>
          no schedule yet: name it in a schedule's <code>{`"calendar": { "exclude": ["${c.name}"] }`}</code>
        </>
      ) : (
        schedulesInWords(c.schedules)
      ),
    ],
    ['Created', <When at={c.createdAt} />],
    ['Updated', <When at={c.updatedAt} />],
  ];
  return <DefinitionBlock rows={rows} />;
}

function Dates({ range }: { range: CalendarDates }) {
  return (
    <>
      <p class="muted">
        The dates it excludes from {range.from} to {range.to}, each a local date in the zone of the schedule that names it. Point at a marked day for its holiday.
      </p>
      <YearStrip dates={range} />
      <h3 id="dates-excluded">{range.items.length === 1 ? '1 date excluded' : `${range.items.length} dates excluded`}</h3>
      {range.items.length === 0 ? (
        <p>It excludes no date in these twelve months.</p>
      ) : (
        <div class="scroll">
          <table data-testid="calendar-dates" aria-labelledby="dates-excluded">
            <thead>
              <tr>
                <th scope="col">Date</th>
                <th scope="col">Day</th>
                <th scope="col">Why</th>
              </tr>
            </thead>
            <tbody>
              {range.items.map((d) => (
                <tr key={d.date} data-date={d.date}>
                  <td>
                    <time dateTime={d.date}>{d.date}</time>
                  </td>
                  <td>{weekdayOf(d.date)}</td>
                  <td>{d.holiday ?? <span class="muted">one of its own dates</span>}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}
