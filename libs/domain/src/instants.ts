/**
 * Instants on the wire: ISO 8601 in UTC with `Z`, and milliseconds only when there are some, so a
 * cron slot reads "2026-12-01T01:30:00Z" rather than "2026-12-01T01:30:00.000Z".
 */
export function formatInstant(instant: Date | number): string {
  const iso = (typeof instant === 'number' ? new Date(instant) : instant).toISOString();
  return iso.endsWith('.000Z') ? `${iso.slice(0, -5)}Z` : iso;
}

export function formatOptionalInstant(instant: Date | null | undefined): string | null {
  return instant === null || instant === undefined ? null : formatInstant(instant);
}
