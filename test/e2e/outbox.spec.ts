/**
 * Domain events: written to the outbox in the transaction of the change, then published by the
 * leader to the `<prefix>:events` Redis stream in order, and marked published.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { REDIS_URL } from '../support/services.js';
import { api, useKairos, waitFor } from '../support/kairos.js';

describe('the outbox', () => {
  let redis: Redis;

  const { t, kairos } = useKairos();

  beforeAll(async () => {
    redis = new Redis(REDIS_URL);
  });

  afterAll(async () => {
    redis?.disconnect();
  });

  it('publishes schedule lifecycle and dead-letter events, in order, once committed', async () => {
    const client = api(kairos.url);
    const timer = (await client.post('/v1/schedules', { name: 'timer', in: '1s', target: { type: 'handler', name: 'noop' } })).body;
    const cron = (await client.post('/v1/schedules', { name: 'cron', cron: '0 0 1 1 *', target: { type: 'handler', name: 'noop' } })).body;
    await client.post(`/v1/schedules/${cron.id}/pause`);
    await client.post(`/v1/schedules/${cron.id}/pause`);
    await client.post(`/v1/schedules/${cron.id}/resume`);
    await client.patch(`/v1/schedules/${cron.id}`, { labels: { v: '2' } });
    await client.delete(`/v1/schedules/${cron.id}`);
    const refused = (await client.post('/v1/schedules', { name: 'invalid', cron: 'nope', target: { type: 'handler', name: 'noop' } })).status;
    expect(refused).toBe(400);
    const dead = (await client.post('/v1/runs', { target: { type: 'handler', name: 'fail' }, payload: { retryable: false } })).body;

    const key = `${t.redisPrefix}:events`;
    const entries = await waitFor(async () => {
      const found = await redis.xrange(key, '-', '+');
      return found.length >= 8 ? found : undefined;
    }, 'the events to be published', 15_000);
    const events = entries.map(([, fields]) => {
      const f: Record<string, string> = {};
      for (let i = 0; i < fields.length; i += 2) f[fields[i]!] = fields[i + 1]!;
      return { id: Number(f.id), topic: f.topic, aggregateId: f.aggregateId, payload: JSON.parse(f.payload!) };
    });
    const byAggregate = (id: string) => events.filter((e) => e.aggregateId === id).map((e) => e.topic);
    expect(byAggregate(cron.id)).toEqual(['schedule.created', 'schedule.paused', 'schedule.resumed', 'schedule.updated', 'schedule.deleted']);
    expect(byAggregate(timer.id)).toEqual(['schedule.created', 'schedule.completed']);
    expect(byAggregate(dead.id)).toEqual(['run.dead']);
    expect(events.find((e) => e.topic === 'run.dead')!.payload).toMatchObject({ runId: dead.id, scheduleId: null, reasonCode: 'HANDLER_NON_RETRYABLE' });
    expect(events.find((e) => e.topic === 'schedule.paused')!.payload).toMatchObject({ scheduleId: cron.id, name: 'cron', status: 'paused', actor: 'anonymous' });
    // Published in the order written, each once.
    const ids = events.map((e) => e.id);
    expect([...ids].sort((a, b) => a - b)).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
    await waitFor(async () => {
      const { rows } = await t.db.query(`SELECT count(*)::int AS n FROM outbox WHERE published_at IS NULL`);
      return rows[0].n === 0 ? true : undefined;
    }, 'every event to be marked published');
  });
});
