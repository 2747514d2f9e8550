/**
 * Seeding a herd fast, with one SQL statement per call (generate_series): schedules numbered
 * `from..to`, one in three each a one-shot `at`, an `every` and a daily cron in one of several
 * zones, either spread at random over the next day or all due at one instant. The bench's herd
 * scenario and the scale test share it.
 */
import type pg from 'pg';
import { firstFireAt, type ScheduleSpec } from '@kairos/domain';
import { readScheduleCreate } from '@kairos/domain/wire';

const ZONES = ['UTC', 'Europe/Berlin', 'America/New_York', 'Asia/Kolkata', 'Asia/Tokyo', 'Australia/Sydney', 'America/Los_Angeles'];
const HOUR = 3_600_000;
/** The spread crons: one per minute of the day in each zone. */
const SPREAD_CRONS = 1_440 * ZONES.length;

/** A schedule spec as POST /v1/schedules would store it. */
const specOf = (body: Record<string, unknown>): ScheduleSpec =>
  readScheduleCreate({ target: { type: 'handler', name: 'noop' }, retry: { maxAttempts: 1 }, ...body }, Date.now()).spec;

/**
 * Inserts schedules `from..to` (by number) with one statement: one in three each kind. `herdAt`
 * (a whole minute, for the crons) makes them all due then, named `herd-<n>`; without it they fall
 * due at random over the next day, named `spread-<n>`.
 */
export async function insertSchedules(db: pg.Pool | pg.PoolClient, from: number, to: number, herdAt: number | null): Promise<void> {
  const template = specOf({ in: '1h' });
  const nowMs = Date.now();
  const crons = herdAt === null ? spreadCrons(nowMs) : herdCrons(herdAt);
  await db.query(
    `INSERT INTO schedules (kind, cron, every_ms, at, timezone, dst_gap, dst_overlap, catchup_mode, overlap, target, retry, timeout_ms,
                            id, namespace_id, name, spec_hash, status, next_fire_at, created_at)
     SELECT k.kind, k.cron, k.every_ms, k.at, k.tz, $1, $2, $3, $4, $5::jsonb, $6::jsonb, $7,
            gen_random_uuid(), (SELECT id FROM namespaces WHERE name = 'default'), $8 || g, 'bench', 'active', k.next, k.created
     FROM generate_series($9::int, $10::int) g
     CROSS JOIN LATERAL (SELECT random() AS r, 1 + (g / 3) % cardinality($12::text[]) AS c) x
     CROSS JOIN LATERAL (
       SELECT CASE g % 3 WHEN 0 THEN 'at' WHEN 1 THEN 'every' ELSE 'cron' END AS kind,
              CASE WHEN g % 3 = 2 THEN ($12::text[])[x.c] END AS cron,
              CASE WHEN g % 3 = 1 THEN e.every_ms END AS every_ms,
              CASE WHEN g % 3 = 0 THEN a.at END AS at,
              CASE WHEN g % 3 = 2 THEN ($13::text[])[x.c] ELSE 'UTC' END AS tz,
              CASE g % 3 WHEN 0 THEN a.at WHEN 1 THEN e.created + e.every_ms * interval '1 millisecond' ELSE ($14::timestamptz[])[x.c] END AS next,
              CASE WHEN g % 3 = 1 THEN e.created ELSE now() END AS created
       FROM (SELECT coalesce($11::timestamptz, now() + (60 + x.r * 86000) * interval '1 second') AS at) a,
            (SELECT CASE WHEN $11::timestamptz IS NULL THEN ${HOUR} * (1 + (g / 3) % 6) ELSE ${HOUR} END::bigint AS every_ms) e0,
            LATERAL (SELECT e0.every_ms,
                            coalesce($11::timestamptz - interval '1 hour', now() - x.r * e0.every_ms * interval '1 millisecond') AS created) e
     ) k`,
    [
      template.dst.gap,
      template.dst.overlap,
      template.catchup.mode,
      template.overlap,
      JSON.stringify(template.target),
      JSON.stringify(template.retry),
      template.timeoutMs,
      herdAt === null ? 'spread-' : 'herd-',
      from,
      to,
      herdAt === null ? null : new Date(herdAt),
      crons.map((c) => c.cron),
      crons.map((c) => c.timezone),
      crons.map((c) => new Date(c.next)),
    ],
  );
}

/** A daily cron at each minute of the day in each zone, with its next fire. */
function spreadCrons(nowMs: number): { cron: string; timezone: string; next: number }[] {
  return Array.from({ length: SPREAD_CRONS }, (_, i) => {
    const cron = `${i % 60} ${Math.floor(i / 60) % 24} * * *`;
    const timezone = ZONES[Math.floor(i / 1_440)]!;
    return { cron, timezone, next: firstFireAt(specOf({ cron, timezone }), nowMs)! };
  });
}

/** One daily cron per zone whose wall time there is `at` (`0 9 * * *` in each user's zone). */
function herdCrons(at: number): { cron: string; timezone: string; next: number }[] {
  return ZONES.map((timezone) => {
    const parts = Object.fromEntries(
      new Intl.DateTimeFormat('en-GB', { timeZone: timezone, hour: 'numeric', minute: 'numeric', hourCycle: 'h23' }).formatToParts(at).map((p) => [p.type, p.value]),
    );
    const cron = `${Number(parts.minute)} ${Number(parts.hour)} * * *`;
    const next = firstFireAt(specOf({ cron, timezone }), at - 1);
    if (next !== at) throw new Error(`bench: ${cron} in ${timezone} next fires at ${next}, not at the herd's instant ${at}`);
    return { cron, timezone, next };
  });
}
