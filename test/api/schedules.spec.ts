/** Schedule CRUD over REST: pagination, PATCH, PUT by name, pause/resume and delete. */
import { describe, expect, it } from 'vitest';
import { useKairos } from '../support/kairos.js';

const noop = { type: 'handler', name: 'noop' };

describe('schedules over REST', () => {
  const { t, client } = useKairos({ roles: ['api'] });

  it('fills in every default and pages through a listing with a cursor, newest first', async () => {
    const created = await client.post('/v1/schedules', { name: 'defaults', cron: '0 9 * * MON-FRI', target: noop });
    expect(created.body).toMatchObject({
      name: 'defaults',
      cron: '0 9 * * MON-FRI',
      every: null,
      at: null,
      timezone: 'UTC',
      dst: {
        gap: 'auto',
        overlap: 'auto',
        resolved: { gap: 'shift', overlap: 'first' },
        description: 'gap auto (shift), overlap auto (first): neither the minute nor the hour field starts with *, so it runs at fixed times of day',
      },
      catchup: { mode: 'latest', window: null, limit: null },
      overlap: 'skip',
      target: noop,
      payload: null,
      retry: { maxAttempts: 3, backoff: { type: 'exponential', base: '1m', max: '1h', jitter: 0.1 } },
      timeout: '5m',
      jitter: '0s',
      paused: false,
      status: 'active',
      lastFireAt: null,
      fireCount: 0,
      deduped: false,
    });
    expect(created.body.nextFireAt).toMatch(/T09:00:00Z$/);
    for (let i = 0; i < 4; i++) await client.post('/v1/schedules', { name: `page-${i}`, every: '1h', target: noop, labels: { page: i % 2 ? 'odd' : 'even' } });
    const first = await client.get('/v1/schedules?limit=2');
    expect(first.body.items.map((s: any) => s.name)).toEqual(['page-3', 'page-2']);
    const second = await client.get(`/v1/schedules?limit=2&cursor=${first.body.nextCursor}`);
    expect(second.body.items.map((s: any) => s.name)).toEqual(['page-1', 'page-0']);
    const third = await client.get(`/v1/schedules?limit=2&cursor=${second.body.nextCursor}`);
    expect(third.body).toEqual({ items: [expect.objectContaining({ name: 'defaults' })], nextCursor: null });
    expect((await client.get('/v1/schedules?label=page:odd')).body.items.map((s: any) => s.name)).toEqual(['page-3', 'page-1']);
    expect((await client.get('/v1/schedules?name=page-2')).body.items).toHaveLength(1);
  });

  it('shows what the DST policy means for the expression, in the schedule and in both previews', async () => {
    // Berlin repeats 02:00-02:59 on 31 October 2027 (00:00Z-00:59Z in summer time, 01:00Z-01:59Z in winter time).
    const after = '2027-10-30T23:30:00Z';
    const realTime = {
      gap: 'auto',
      overlap: 'auto',
      resolved: { gap: 'skip', overlap: 'both' },
      description: 'gap auto (skip), overlap auto (both): the minute or hour field starts with *, so it follows real time',
    };
    const hourly = (await client.post('/v1/schedules', { name: 'hourly-berlin', cron: '0 * * * *', timezone: 'Europe/Berlin', target: noop })).body;
    expect(hourly.dst).toEqual(realTime);
    expect((await client.get(`/v1/schedules/${hourly.id}`)).body.dst).toEqual(realTime);
    expect((await client.get(`/v1/schedules/${hourly.id}/preview?count=3&after=${after}`)).body).toEqual({
      fireTimes: ['2027-10-31T00:00:00Z', '2027-10-31T01:00:00Z', '2027-10-31T02:00:00Z'],
      dst: realTime,
    });

    // The stateless preview says the same, and an explicit side keeps its meaning.
    const adHoc = { cron: '0 * * * *', timezone: 'Europe/Berlin', after, count: 3 };
    expect((await client.post('/v1/cron/preview', adHoc)).body).toEqual({
      fireTimes: ['2027-10-31T00:00:00Z', '2027-10-31T01:00:00Z', '2027-10-31T02:00:00Z'],
      dst: realTime,
    });
    expect((await client.post('/v1/cron/preview', { ...adHoc, dst: { overlap: 'first' } })).body).toEqual({
      fireTimes: ['2027-10-31T00:00:00Z', '2027-10-31T02:00:00Z', '2027-10-31T03:00:00Z'],
      dst: {
        gap: 'auto',
        overlap: 'first',
        resolved: { gap: 'skip', overlap: 'first' },
        description: 'gap auto (skip), overlap first: the minute or hour field starts with *, so it follows real time',
      },
    });
    expect((await client.post('/v1/cron/preview', { every: '1h', count: 1 })).body.dst).toEqual({
      gap: 'auto',
      overlap: 'auto',
      resolved: null,
      description: 'not applicable: intervals and one-shot timers fire at instants, not wall times',
    });

    // PATCH keeps the declared auto and resolves it again for a new expression.
    const labelled = await client.patch(`/v1/schedules/${hourly.id}`, { labels: { team: 'ops' } });
    expect(labelled.body.dst).toEqual(realTime);
    const daily = await client.patch(`/v1/schedules/${hourly.id}`, { cron: '30 2 * * *' });
    expect(daily.body.dst).toMatchObject({ gap: 'auto', overlap: 'auto', resolved: { gap: 'shift', overlap: 'first' } });
    expect((await client.get(`/v1/schedules/${hourly.id}/preview?count=2&after=${after}`)).body.fireTimes).toEqual([
      '2027-10-31T00:30:00Z',
      '2027-11-01T01:30:00Z',
    ]);

    // A schedule stored with explicit shift and first (as every schedule before auto) fires by them.
    const explicit = (
      await client.post('/v1/schedules', { name: 'hourly-first', cron: '0 * * * *', timezone: 'Europe/Berlin', dst: { gap: 'shift', overlap: 'first' }, target: noop })
    ).body;
    expect(explicit.dst).toEqual({ gap: 'shift', overlap: 'first', resolved: { gap: 'shift', overlap: 'first' }, description: 'gap shift, overlap first' });
    expect((await client.get(`/v1/schedules/${explicit.id}/preview?count=3&after=${after}`)).body.fireTimes).toEqual([
      '2027-10-31T00:00:00Z',
      '2027-10-31T02:00:00Z',
      '2027-10-31T03:00:00Z',
    ]);
  });

  it('PATCHes fields, switching the timing kind when asked', async () => {
    const s = (await client.post('/v1/schedules', { name: 'patchable', cron: '*/5 * * * *', target: noop })).body;
    const switched = await client.patch(`/v1/schedules/${s.id}`, { every: '90s', labels: { team: 'ops' } });
    expect(switched.status).toBe(200);
    expect(switched.body).toMatchObject({ cron: null, every: '1m30s', labels: { team: 'ops' }, name: 'patchable' });
    const paused = await client.patch(`/v1/schedules/${s.id}`, { paused: true });
    expect(paused.body).toMatchObject({ status: 'paused', paused: true, every: '1m30s' });
    const bad = await client.patch(`/v1/schedules/${s.id}`, { timezone: 'Nowhere/Else' });
    expect(bad.body).toMatchObject({ code: 'INVALID_TIMEZONE', field: 'timezone' });
    expect((await client.get(`/v1/schedules/${s.id}`)).body.timezone).toBe('UTC');
    expect((await client.patch(`/v1/schedules/${s.id}`, { idempotencyKey: 'late' })).body.code).toBe('UNKNOWN_FIELD');
  });

  it('PUT by name creates, leaves an unchanged spec alone, and replaces a changed one', async () => {
    const body = { every: '10m', target: noop, payload: { v: 1 } };
    const created = await client.put('/v1/schedules/by-name/nightly', body);
    expect(created.status).toBe(201);
    const same = await client.put('/v1/schedules/by-name/nightly', body);
    expect(same.status).toBe(200);
    expect(same.body.updatedAt).toBe(created.body.updatedAt);
    const changed = await client.put('/v1/schedules/by-name/nightly', { ...body, payload: { v: 2 } });
    expect(changed.status).toBe(200);
    expect(changed.body).toMatchObject({ id: created.body.id, payload: { v: 2 } });
    expect((await client.put('/v1/schedules/by-name/nightly', { ...body, name: 'other' })).body).toMatchObject({ code: 'CONFLICTING_FIELDS', field: 'name' });
    await client.post('/v1/schedules', { name: 'keyed', every: '1h', target: noop, idempotencyKey: 'k-1' });
    const stolenKey = await client.put('/v1/schedules/by-name/thief', { every: '1h', target: noop, idempotencyKey: 'k-1' });
    expect(stolenKey.status).toBe(409);
    // Another body under the same key: the key already names another request.
    expect(stolenKey.body).toMatchObject({ code: 'IDEMPOTENCY_CONFLICT', field: 'idempotencyKey' });
  });

  it('pauses and resumes, refusing both on a completed one-shot', async () => {
    const s = (await client.post('/v1/schedules', { in: '1h', target: noop })).body;
    expect((await client.post(`/v1/schedules/${s.id}/pause`)).body).toMatchObject({ status: 'paused', paused: true });
    expect((await client.post(`/v1/schedules/${s.id}/pause`)).body.status).toBe('paused');
    expect((await client.post(`/v1/schedules/${s.id}/resume`)).body).toMatchObject({ status: 'active', paused: false });
    await t.db.query(`UPDATE schedules SET status = 'completed', next_fire_at = NULL, completed_at = now() WHERE id = $1`, [s.id]);
    const refused = await client.post(`/v1/schedules/${s.id}/resume`);
    expect(refused.status).toBe(409);
    expect(refused.body.code).toBe('INVALID_STATE');
  });

  it('deletes a schedule: gone from reads, its queued runs cancelled, its name free again', async () => {
    const s = (await client.post('/v1/schedules', { name: 'doomed', cron: '0 0 1 1 *', target: noop })).body;
    const run = (await client.post(`/v1/schedules/${s.id}/trigger`)).body;
    expect((await client.delete(`/v1/schedules/${s.id}`)).status).toBe(204);
    expect((await client.get(`/v1/schedules/${s.id}`)).status).toBe(404);
    expect((await client.get(`/v1/runs/${run.id}`)).body).toMatchObject({ state: 'cancelled', reasonCode: 'SCHEDULE_DELETED' });
    expect((await client.delete(`/v1/schedules/${s.id}`)).status).toBe(404);
    expect((await client.post('/v1/schedules', { name: 'doomed', cron: '0 0 1 1 *', target: noop })).status).toBe(201);
  });

  it('republishes only dead letters', async () => {
    const run = (await client.post('/v1/runs', { target: noop, availableAt: '2999-01-01T00:00:00Z' })).body;
    const refused = await client.post(`/v1/dead-letters/${run.id}/republish`);
    expect(refused.status).toBe(409);
    expect(refused.body.message).toMatch(/not a dead letter/);
  });
});
