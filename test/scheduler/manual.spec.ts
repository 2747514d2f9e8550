/**
 * Manual operations: trigger (works while paused, honours overlap unless overridden), backfill
 * (each slot once, idempotent when repeated, bounded), and previews of stored and ad-hoc specs.
 */
import { describe, expect, it } from 'vitest';
import { runInState, useKairos } from '../support/kairos.js';

describe('manual operations', () => {
  const { t, client } = useKairos();

  const settled = (id: string) => runInState(client, id);

  it('triggers a paused schedule now, with its payload or an override', async () => {
    const schedule = (await client.post('/v1/schedules', { cron: '0 0 1 1 *', paused: true, target: { type: 'handler', name: 'echo' }, payload: { from: 'schedule' } })).body;
    expect(schedule.status).toBe('paused');
    const run = await client.post(`/v1/schedules/${schedule.id}/trigger`);
    expect(run.status).toBe(201);
    expect(run.body).toMatchObject({ scheduleId: schedule.id, origin: 'manual', state: 'queued' });
    expect((await settled(run.body.id)).result).toEqual({ from: 'schedule' });
    const custom = await client.post(`/v1/schedules/${schedule.id}/trigger`, { payload: { from: 'trigger' } });
    expect((await settled(custom.body.id)).result).toEqual({ from: 'trigger' });
    // Still paused, and no slot was consumed.
    expect((await client.get(`/v1/schedules/${schedule.id}`)).body).toMatchObject({ status: 'paused', fireCount: 0 });
  });

  it('refuses a trigger that overlap skip would drop, and accepts it with an override', async () => {
    const schedule = (await client.post('/v1/schedules', { cron: '0 0 1 1 *', target: { type: 'handler', name: 'sleep' }, payload: { ms: 1_500 } })).body;
    const first = await client.post(`/v1/schedules/${schedule.id}/trigger`);
    expect(first.status).toBe(201);
    const refused = await client.post(`/v1/schedules/${schedule.id}/trigger`);
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({ code: 'CONFLICT', field: 'overlap' });
    const allowed = await client.post(`/v1/schedules/${schedule.id}/trigger`, { overlap: 'allow' });
    expect(allowed.status).toBe(201);
    await settled(allowed.body.id);
  });

  it('backfills each slot of a range once, however often it is repeated', async () => {
    const schedule = (await client.post('/v1/schedules', { cron: '0 * * * *', target: { type: 'handler', name: 'echo' }, payload: { n: 1 } })).body;
    const hour = 3_600_000;
    const end = Math.floor(Date.now() / hour) * hour - hour;
    const range = { from: new Date(end - 4 * hour).toISOString(), to: new Date(end).toISOString() };
    const first = await client.post(`/v1/schedules/${schedule.id}/backfill`, range);
    expect(first.status).toBe(201);
    expect(first.body).toMatchObject({ slots: 5, created: 5, alreadyTicked: 0 });
    expect(first.body.runs.map((r: any) => Date.parse(r.scheduledFor))).toEqual([4, 3, 2, 1, 0].map((k) => end - k * hour));
    expect(first.body.runs.every((r: any) => r.origin === 'backfill')).toBe(true);
    const again = await client.post(`/v1/schedules/${schedule.id}/backfill`, range);
    expect(again.body).toMatchObject({ slots: 5, created: 0, alreadyTicked: 5, runs: [] });
    const wider = await client.post(`/v1/schedules/${schedule.id}/backfill`, { ...range, from: new Date(end - 6 * hour).toISOString() });
    expect(wider.body).toMatchObject({ slots: 7, created: 2, alreadyTicked: 5 });
    for (const run of [...first.body.runs, ...wider.body.runs]) expect((await settled(run.id)).state).toBe('succeeded');
    const ticks = (await client.get(`/v1/schedules/${schedule.id}/ticks?limit=100`)).body.items;
    expect(ticks).toHaveLength(7);
    expect(new Set(ticks.map((tk: any) => tk.scheduledFor)).size).toBe(7);
    expect(ticks.every((tk: any) => tk.origin === 'backfill' && tk.outcome === 'triggered')).toBe(true);
  });

  it('refuses a backfill covering more than 1000 slots or reaching into the future, storing nothing', async () => {
    const schedule = (await client.post('/v1/schedules', { cron: '* * * * * *', paused: true, target: { type: 'handler', name: 'noop' } })).body;
    const response = await client.post(`/v1/schedules/${schedule.id}/backfill`, { from: '2026-01-01T00:00:00Z', to: '2026-01-02T00:00:00Z' });
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ code: 'VALIDATION_FAILED', field: 'to' });
    expect((await t.db.query('SELECT count(*)::int AS n FROM ticks WHERE schedule_id = $1', [schedule.id])).rows[0].n).toBe(0);
    const future = await client.post(`/v1/schedules/${schedule.id}/backfill`, { from: '2026-01-01T00:00:00Z', to: '2999-01-01T00:00:00Z' });
    expect(future.status).toBe(400);
    expect(future.body.message).toMatch(/future/);
  });

  it('previews a stored schedule and an ad-hoc spec in UTC', async () => {
    const schedule = (
      await client.post('/v1/schedules', { cron: '30 2 * * *', timezone: 'America/New_York', target: { type: 'handler', name: 'noop' }, paused: true })
    ).body;
    const stored = await client.get(`/v1/schedules/${schedule.id}/preview?count=3&after=2027-03-12T12:00:00Z`);
    // 2027-03-14 is spring-forward day in New York: 02:30 does not exist and shifts to 03:30 EDT.
    expect(stored.body.fireTimes).toEqual(['2027-03-13T07:30:00Z', '2027-03-14T07:30:00Z', '2027-03-15T06:30:00Z']);
    const skip = await client.post('/v1/cron/preview', {
      cron: '30 2 * * *',
      timezone: 'America/New_York',
      dst: { gap: 'skip' },
      after: '2027-03-12T12:00:00Z',
      count: 3,
    });
    expect(skip.body.fireTimes).toEqual(['2027-03-13T07:30:00Z', '2027-03-15T06:30:00Z', '2027-03-16T06:30:00Z']);
    const bad = await client.post('/v1/cron/preview', { cron: '* * * *', count: 3 });
    expect(bad.status).toBe(400);
    expect(bad.body.field).toBe('cron');
    const maxRuns = (await client.post('/v1/schedules', { every: '1h', maxRuns: 2, target: { type: 'handler', name: 'noop' } })).body;
    expect((await client.get(`/v1/schedules/${maxRuns.id}/preview?count=10`)).body.fireTimes).toHaveLength(2);
  });
});
