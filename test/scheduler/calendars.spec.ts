/**
 * The tick follows calendars: a per-second schedule on a calendar that excludes today starts
 * nothing today and records one tick CALENDAR_EXCLUDED (not one a second), while a schedule
 * beside it without a calendar fires every second; once the calendar no longer excludes today,
 * the schedule is re-planned from then on and fires.
 */
import { describe, expect, it } from 'vitest';
import { useKairos, waitFor } from '../support/kairos.js';

const echo = { type: 'handler', name: 'echo' };

/** A zone whose wall clock is far from midnight now, so "today" holds for the whole test. */
function zoneAwayFromMidnight(): { zone: string; today: string } {
  for (const zone of ['UTC', 'Asia/Tokyo', 'America/Los_Angeles', 'Asia/Kolkata', 'Pacific/Auckland']) {
    const parts = Object.fromEntries(
      new Intl.DateTimeFormat('en-CA', { timeZone: zone, year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', hourCycle: 'h23' })
        .formatToParts(new Date())
        .map((p) => [p.type, p.value]),
    );
    if (Number(parts.hour) >= 1 && Number(parts.hour) <= 22) return { zone, today: `${parts.year}-${parts.month}-${parts.day}` };
  }
  throw new Error('no zone is away from midnight');
}

describe('calendars in the tick', () => {
  const { t, client } = useKairos();

  const ticksOf = async (id: string) =>
    (await t.db.query(`SELECT reason_code AS "reasonCode", outcome, scheduled_for AS "scheduledFor", run_id AS "runId" FROM ticks WHERE schedule_id = $1 ORDER BY scheduled_for`, [id])).rows;
  const runsOf = async (id: string): Promise<number> => (await t.db.query(`SELECT count(*)::int AS n FROM runs WHERE schedule_id = $1`, [id])).rows[0].n;

  it('starts nothing on a date the calendar excludes and records it once; fires again once the date is allowed', async () => {
    const { zone, today } = zoneAwayFromMidnight();
    expect((await client.post('/v1/calendars', { name: 'closed-today', dates: [today] })).status).toBe(201);
    const closed = (await client.post('/v1/schedules', { name: 'closed', every: '1s', timezone: zone, target: echo, calendar: { exclude: ['closed-today'] } })).body;
    const open = (await client.post('/v1/schedules', { name: 'open', every: '1s', timezone: zone, target: echo })).body;

    // Three slots of the schedule beside it have fired: the tick has passed three of the closed one's too.
    await waitFor(async () => ((await runsOf(open.id)) >= 3 ? true : undefined), 'three runs of the schedule without a calendar');
    expect(await runsOf(closed.id)).toBe(0);
    const ticks = await ticksOf(closed.id);
    expect(ticks).toEqual([expect.objectContaining({ reasonCode: 'CALENDAR_EXCLUDED', outcome: 'skipped', runId: null })]);
    const next = (await client.get(`/v1/schedules/${closed.id}`)).body.nextFireAt as string;
    const nextLocalDate = new Intl.DateTimeFormat('en-CA', { timeZone: zone }).format(new Date(next));
    expect(nextLocalDate > today).toBe(true);

    // The calendar now excludes another date: from now on the schedule fires as planned.
    expect((await client.put('/v1/calendars/closed-today', { dates: ['2000-01-01'] })).status).toBe(200);
    await waitFor(async () => ((await runsOf(closed.id)) >= 2 ? true : undefined), 'two runs once today is allowed');
    const after = await ticksOf(closed.id);
    expect(after.filter((tick) => tick.reasonCode === 'CALENDAR_EXCLUDED')).toHaveLength(1);
    expect(after.filter((tick) => tick.reasonCode === 'TRIGGERED').length).toBeGreaterThanOrEqual(2);
  });
});
