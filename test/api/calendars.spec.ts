/**
 * Calendars over REST, and schedules that name them: refusals name the field and store nothing;
 * preview, the schedule's cursor and backfill follow the calendar (a date it excludes fires
 * nothing and is recorded once; a moved slot fires once, also where the date it moves to has a
 * slot of its own); replacing a calendar re-plans the schedules naming it; one in use is not
 * deleted. Only the API runs: no tick moves what these tests look at.
 */
import { describe, expect, it } from 'vitest';
import { useKairos } from '../support/kairos.js';

const echo = { type: 'handler', name: 'echo' };

describe('calendars', () => {
  const { t, client } = useKairos({ roles: ['api'] });

  const count = async (sql: string, params: unknown[] = []): Promise<number> => (await t.db.query(`SELECT count(*)::int AS n FROM ${sql}`, params)).rows[0].n;

  it.each<[string, unknown, string, string]>([
    ['a malformed date', { name: 'c', dates: ['2026-12-24', '24.12.2026'] }, 'INVALID_DATE', 'dates[1]'],
    ['a date the calendar lacks', { name: 'c', dates: ['2027-02-29'] }, 'INVALID_DATE', 'dates[0]'],
    ['an unknown country', { name: 'c', holidays: { country: 'XX' } }, 'UNKNOWN_COUNTRY', 'holidays.country'],
    ['an unknown state', { name: 'c', holidays: { country: 'DE', state: 'ZZ' } }, 'VALIDATION_FAILED', 'holidays.state'],
    ['a region without its state', { name: 'c', holidays: { country: 'DE', region: 'A' } }, 'VALIDATION_FAILED', 'holidays.region'],
    ['neither dates nor holidays', { name: 'c' }, 'MISSING_FIELD', 'dates'],
    ['no name', { dates: ['2026-12-24'] }, 'MISSING_FIELD', 'name'],
    ['a name with spaces', { name: 'my calendar', dates: ['2026-12-24'] }, 'VALIDATION_FAILED', 'name'],
    ['an unknown field', { name: 'c', dates: ['2026-12-24'], timezone: 'UTC' }, 'UNKNOWN_FIELD', 'timezone'],
  ])('refuses a calendar with %s, naming the field and storing nothing', async (_name, body, code, field) => {
    const answer = await client.post('/v1/calendars', body);
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ code, field });
    expect(await count('calendars')).toBe(0);
  });

  it('refuses a PUT whose path is no calendar name, storing nothing', async () => {
    const answer = await client.put(`/v1/calendars/${encodeURIComponent('my calendar')}`, { dates: ['2026-12-24'] });
    expect(answer).toMatchObject({ status: 400, body: { code: 'VALIDATION_FAILED', field: 'name' } });
    expect(await count(`calendars WHERE name = 'my calendar'`)).toBe(0);
    expect((await client.put('/v1/calendars/one', { name: 'other', dates: ['2026-12-24'] })).body).toMatchObject({ code: 'CONFLICTING_FIELDS', field: 'name' });
  });

  it.each<[string, Record<string, unknown>, string, string]>([
    ['an unknown calendar', { exclude: ['nowhere'] }, 'UNKNOWN_CALENDAR', 'calendar.exclude[0]'],
    ['nothing to exclude', { exclude: [] }, 'MISSING_FIELD', 'calendar.exclude'],
    ['a calendar named twice', { exclude: ['holidays', 'holidays'] }, 'VALIDATION_FAILED', 'calendar.exclude[1]'],
    ['an unknown onExcluded', { exclude: ['holidays'], onExcluded: 'later' }, 'VALIDATION_FAILED', 'calendar.onExcluded'],
    ['an unknown field', { exclude: ['holidays'], zone: 'UTC' }, 'UNKNOWN_FIELD', 'calendar.zone'],
  ])('refuses a schedule whose calendar has %s, storing nothing', async (_name, calendar, code, field) => {
    expect((await client.put('/v1/calendars/holidays', { dates: ['2026-12-25'] })).status).toBeLessThan(300);
    const before = await count('schedules');
    const answer = await client.post('/v1/schedules', { cron: '0 9 * * *', target: echo, calendar });
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ code, field });
    expect(await count('schedules')).toBe(before);
    // Through the batch route too, where the other items go on.
    const batch = await client.post('/v1/schedules/batch', { items: [{ cron: '0 9 * * *', target: echo, calendar }, { cron: '0 9 * * *', target: echo }] });
    expect(batch.body.items[0].error).toMatchObject({ code, field });
    expect(batch.body.items[1].id).toEqual(expect.any(String));
    expect(await count('schedules')).toBe(before + 1);
  });

  it('previews an ad-hoc spec with a calendar: the weekend and a holiday fire nothing, and are listed apart', async () => {
    await client.post('/v1/calendars', { name: 'bavaria', holidays: { country: 'DE', state: 'BY' } });
    const preview = await client.post('/v1/cron/preview', {
      cron: '0 9 * * *',
      timezone: 'Europe/Berlin',
      after: '2026-12-31T00:00:00Z',
      count: 4,
      calendar: { exclude: ['bavaria'], weekdaysOnly: true },
    });
    expect(preview.status).toBe(200);
    // 1 January (New Year) and 2-3 January (a weekend) are excluded; 6 January is Epiphany.
    expect(preview.body.fireTimes).toEqual(['2026-12-31T08:00:00Z', '2027-01-04T08:00:00Z', '2027-01-05T08:00:00Z', '2027-01-07T08:00:00Z']);
    expect(preview.body.excludedDates).toEqual(['2027-01-01', '2027-01-02', '2027-01-03', '2027-01-06']);
    expect((await client.post('/v1/cron/preview', { cron: '0 9 * * *', calendar: { exclude: ['gone'] } })).body).toMatchObject({ code: 'UNKNOWN_CALENDAR', field: 'calendar.exclude[0]' });
  });

  it('plans the payroll example: 09:00 Berlin on the last business day of each month, never on a Bavarian holiday', async () => {
    await client.post('/v1/calendars', { name: 'bavaria', holidays: { country: 'DE', state: 'BY' } });
    const created = await client.post('/v1/schedules', {
      name: 'payroll-export',
      cron: '0 9 L * *',
      timezone: 'Europe/Berlin',
      target: echo,
      calendar: { exclude: ['bavaria'], weekdaysOnly: true, onExcluded: 'previous' },
    });
    expect(created.status).toBe(201);
    expect(created.body.calendar).toEqual({ exclude: ['bavaria'], weekdaysOnly: true, onExcluded: 'previous' });
    const preview = await client.get(`/v1/schedules/${created.body.id}/preview?count=6&after=2027-01-01T00:00:00Z`);
    // 31 January and 28 February 2027 are Sundays, 31 October a Sunday too (on summer time until that night).
    expect(preview.body.fireTimes).toEqual([
      '2027-01-29T08:00:00Z',
      '2027-02-26T08:00:00Z',
      '2027-03-31T07:00:00Z',
      '2027-04-30T07:00:00Z',
      '2027-05-31T07:00:00Z',
      '2027-06-30T07:00:00Z',
    ]);
    expect(preview.body.excludedDates).toEqual([]);
    expect((await client.get('/v1/calendars/bavaria')).body.schedules).toBe(1);
  });

  it('backfills a range as the calendar says: an excluded date is one tick CALENDAR_EXCLUDED, a moved slot one run', async () => {
    await client.post('/v1/calendars', { name: 'closed', dates: ['2026-11-04'] });
    const skip = (await client.post('/v1/schedules', { name: 'skip', every: '6h', startAt: '2026-11-01T00:00:00Z', target: echo, calendar: { exclude: ['closed'] } })).body;
    const filled = await client.post(`/v1/schedules/${skip.id}/backfill`, { from: '2026-11-03T00:00:00Z', to: '2026-11-05T23:59:59Z' });
    expect(filled.status).toBe(201);
    // 3 and 5 November have four slots each; 4 November's four are one tick.
    expect(filled.body).toMatchObject({ slots: 8, created: 8 });
    const ticks = (await client.get(`/v1/schedules/${skip.id}/ticks?limit=50`)).body.items;
    expect(ticks.filter((tick: { reasonCode: string }) => tick.reasonCode === 'CALENDAR_EXCLUDED')).toEqual([
      expect.objectContaining({ scheduledFor: '2026-11-04T00:00:00Z', outcome: 'skipped', origin: 'backfill', runId: null }),
    ]);
    expect(ticks).toHaveLength(9);

    // Saturday and Sunday move on to Monday at 09:00, where they coincide: one run.
    const weekend = (await client.post('/v1/schedules', { name: 'weekend', cron: '0 9 * * 6,0', target: echo, calendar: { weekdaysOnly: true, onExcluded: 'next' } })).body;
    const moved = await client.post(`/v1/schedules/${weekend.id}/backfill`, { from: '2026-11-06T00:00:00Z', to: '2026-11-09T23:59:59Z' });
    expect(moved.body).toMatchObject({ slots: 1, created: 1 });
    expect(moved.body.runs.map((r: { scheduledFor: string }) => r.scheduledFor)).toEqual(['2026-11-09T09:00:00Z']);

    // Saturday and Sunday move back onto a Friday with a slot of its own: Friday's slot runs once.
    const daily = (await client.post('/v1/schedules', { name: 'daily', cron: '0 9 * * *', target: echo, calendar: { weekdaysOnly: true, onExcluded: 'previous' } })).body;
    const back = await client.post(`/v1/schedules/${daily.id}/backfill`, { from: '2026-11-06T00:00:00Z', to: '2026-11-08T23:59:59Z' });
    expect(back.body).toMatchObject({ slots: 1, created: 1 });
    expect(back.body.runs.map((r: { scheduledFor: string }) => r.scheduledFor)).toEqual(['2026-11-06T09:00:00Z']);
    // A second backfill of the range finds every slot already ticked.
    expect((await client.post(`/v1/schedules/${daily.id}/backfill`, { from: '2026-11-06T00:00:00Z', to: '2026-11-08T23:59:59Z' })).body).toMatchObject({ created: 0, alreadyTicked: 1 });
  });

  it('re-plans the schedules naming a calendar when it changes, and keeps one in use', async () => {
    const now = Date.now();
    const day = (offset: number) => new Date(now + offset * 86_400_000).toISOString().slice(0, 10);
    await client.post('/v1/calendars', { name: 'closures', dates: [day(30)] });
    const schedule = (await client.post('/v1/schedules', { name: 'nightly', cron: '0 3 * * *', target: echo, calendar: { exclude: ['closures'], onExcluded: 'next' } })).body;
    const firstFire = Date.parse(schedule.nextFireAt);
    // Closing the date it fires on next moves its slot to the next date, which has one of its own: its cursor moves a day on.
    const replaced = await client.put('/v1/calendars/closures', { dates: [schedule.nextFireAt.slice(0, 10), day(30)] });
    expect(replaced.status).toBe(200);
    expect(Date.parse((await client.get(`/v1/schedules/${schedule.id}`)).body.nextFireAt)).toBe(firstFire + 86_400_000);
    // With skip, the closed date's first slot is the cursor: the tick that records the date comes first.
    expect((await client.patch(`/v1/schedules/${schedule.id}`, { calendar: { exclude: ['closures'] } })).status).toBe(200);
    expect(Date.parse((await client.get(`/v1/schedules/${schedule.id}`)).body.nextFireAt)).toBe(firstFire);
    const preview = (await client.get(`/v1/schedules/${schedule.id}/preview?count=1`)).body;
    expect(preview.excludedDates).toEqual([schedule.nextFireAt.slice(0, 10)]);
    expect(Date.parse(preview.fireTimes[0])).toBe(firstFire + 86_400_000);

    const refused = await client.delete('/v1/calendars/closures');
    expect(refused).toMatchObject({ status: 409, body: { code: 'CALENDAR_IN_USE', field: 'name' } });
    expect(await count(`calendars WHERE name = 'closures'`)).toBe(1);
    expect((await client.patch(`/v1/schedules/${schedule.id}`, { calendar: null })).body.calendar).toBeNull();
    expect((await client.delete('/v1/calendars/closures')).status).toBe(204);
    expect((await client.patch(`/v1/schedules/${schedule.id}`, { calendar: { exclude: ['closures'] } })).body).toMatchObject({ code: 'UNKNOWN_CALENDAR', field: 'calendar.exclude[0]' });
  });
});
