/**
 * The next fire instants of a schedule in its zone's wall clock, each marked where the UTC offset
 * changed since the one before (a DST transition), and the local dates its calendar kept clear
 * between them.
 */
export interface PreviewFire {
  instant: string;
  /** Wall-clock time in the schedule's zone, `2027-03-28 03:30`. */
  local: string;
  /** `+02:00`. */
  offset: string;
  /** The offset differs from the previous fire's: a DST (or zone rule) change lies between them. */
  offsetChanged: boolean;
}

export function markOffsetChanges(fireTimes: readonly string[], timezone: string): PreviewFire[] {
  const format = new Intl.DateTimeFormat('en-CA', {
    timeZone: timezone,
    year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', hourCycle: 'h23',
    timeZoneName: 'longOffset',
  });
  let previous: string | null = null;
  return fireTimes.map((instant) => {
    const parts = Object.fromEntries(format.formatToParts(new Date(instant)).map((p) => [p.type, p.value]));
    const offset = offsetOf(parts.timeZoneName ?? 'GMT');
    const fire = {
      instant,
      local: `${parts.year}-${parts.month}-${parts.day} ${parts.hour}:${parts.minute}`,
      offset,
      offsetChanged: previous !== null && previous !== offset,
    };
    previous = offset;
    return fire;
  });
}

/** `GMT+01:00` → `+01:00`; `GMT` (UTC itself) → `+00:00`. */
function offsetOf(zoneName: string): string {
  const match = /^GMT([+-]\d{2}:\d{2})$/.exec(zoneName);
  return match ? match[1]! : '+00:00';
}

/** A line of the preview: a fire, or a local date (YYYY-MM-DD) on which the calendar let nothing fire. */
export type PreviewEntry = ({ kind: 'fire' } & PreviewFire) | { kind: 'excluded'; date: string };

/** The fires with the excluded dates among them, in local date order: a date goes before the first fire on a later date. */
export function withExcludedDates(fires: readonly PreviewFire[], excludedDates: readonly string[]): PreviewEntry[] {
  const dates = [...excludedDates].sort();
  const entries: PreviewEntry[] = [];
  let next = 0;
  for (const fire of fires) {
    while (next < dates.length && dates[next]! < fire.local.slice(0, 10)) entries.push({ kind: 'excluded', date: dates[next++]! });
    entries.push({ kind: 'fire', ...fire });
  }
  for (const date of dates.slice(next)) entries.push({ kind: 'excluded', date });
  return entries;
}
