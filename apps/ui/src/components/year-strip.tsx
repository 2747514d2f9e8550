/**
 * The dates a calendar excludes over twelve months as a strip of small month grids, Monday first:
 * a public holiday filled, one of the calendar's own dates hatched, today outlined, the days
 * before today faint; a tooltip tells each marked date and why.
 */
import { useMemo } from 'preact/hooks';
import type { CalendarDate } from '../data/wire/index.js';
import { yearStrip, type StripDay } from '../logic/calendars.js';
import { Hatch } from './chart-frame.js';

/** One day's square, and the row of weekday letters above the weeks, in SVG pixels; six weeks fit any month. */
const CELL = 22;
const HEADER = 16;
const WEEKS = 6;
const WEEKDAY_LETTERS = ['M', 'T', 'W', 'T', 'F', 'S', 'S'];

export function YearStrip({ dates }: { dates: { from: string; items: readonly CalendarDate[] } }) {
  const months = useMemo(() => yearStrip(dates), [dates]);
  const width = 7 * CELL;
  const height = HEADER + WEEKS * CELL;
  return (
    <>
      <ol class="year-strip" data-testid="year-strip">
        {months.map((month) => {
          const hatch = `own-date-${month.key}`;
          return (
            <li key={month.key}>
              <figure>
                <figcaption>
                  {month.label}
                  {month.excluded > 0 && (
                    <span class="muted" title={month.excluded === 1 ? '1 date excluded' : `${month.excluded} dates excluded`}>
                      {' '}
                      · {month.excluded}
                    </span>
                  )}
                </figcaption>
                <svg
                  data-testid={`month-${month.key}`}
                  class="month-grid"
                  role="group"
                  aria-label={`${month.label}: ${month.excluded === 1 ? '1 date' : `${month.excluded} dates`} excluded`}
                  width={width}
                  height={height}
                  viewBox={`0 0 ${width} ${height}`}
                >
                  <defs>
                    <Hatch id={hatch} className="own-date-hatch" size={5} />
                  </defs>
                  <g aria-hidden="true">
                    {WEEKDAY_LETTERS.map((letter, column) => (
                      <text key={column} class={column >= 5 ? 'weekday weekend' : 'weekday'} x={column * CELL + CELL / 2} y={HEADER - 5} text-anchor="middle">
                        {letter}
                      </text>
                    ))}
                  </g>
                  {month.days.map((day) => (
                    <Day key={day.date} day={day} hatch={hatch} />
                  ))}
                </svg>
              </figure>
            </li>
          );
        })}
      </ol>
      <ul class="chart-legend" aria-label="Legend">
        <li>
          <span class="swatch day-holiday" /> public holiday
        </li>
        <li>
          <span class="swatch day-own" /> one of the calendar's own dates
        </li>
        <li>
          <span class="swatch day-today" /> today
        </li>
        <li class="muted">faint: days already past</li>
      </ul>
    </>
  );
}

function Day({ day, hatch }: { day: StripDay; hatch: string }) {
  const kind = day.excluded === null ? null : day.excluded.holiday === null ? 'own' : 'holiday';
  const classes = ['day', kind && `day-${kind}`, day.before && 'day-before', day.column >= 5 && 'day-weekend', day.today && 'day-today'].filter(Boolean).join(' ');
  const x = day.column * CELL;
  const y = HEADER + day.row * CELL;
  return (
    <g
      class={classes}
      data-date={day.date}
      data-excluded={kind ?? undefined}
      role={kind ? 'img' : undefined}
      aria-label={kind ? day.words : undefined}
      aria-hidden={kind ? undefined : 'true'}
    >
      {kind && <title>{day.words}</title>}
      <rect x={x + 1} y={y + 1} width={CELL - 2} height={CELL - 2} rx={3} fill={kind === 'own' ? `url(#${hatch})` : undefined} />
      <text x={x + CELL / 2} y={y + CELL / 2 + 4} text-anchor="middle">
        {day.day}
      </text>
    </g>
  );
}
