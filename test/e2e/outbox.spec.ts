/**
 * Domain events: written to the outbox in the transaction of the change, then published by the
 * leader in order, and marked published: to the `<prefix>:events` Redis stream, or on the Postgres
 * transport as NOTIFYs on the channel of that name.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import pg from 'pg';
import type { StartedKairos } from '@kairos/process';
import { api, startInProcess, testEnvironment, waitFor, type TestEnvironment } from '../support/kairos.js';

interface Published {
  id: number;
  topic: string;
  aggregateId: string;
  payload: any;
}

describe('the outbox', () => {
  let t: TestEnvironment;
  let kairos: StartedKairos;
  let redis: Redis | null = null;
  let listener: pg.Client | null = null;
  const notified: Published[] = [];

  beforeAll(async () => {
    t = await testEnvironment();
    if (t.transport.kind === 'redis') {
      redis = new Redis(t.transport.url);
    } else {
      // Listening before anything is published: a NOTIFY reaches only the sessions listening then.
      listener = new pg.Client({ connectionString: t.databaseUrl });
      await listener.connect();
      listener.on('notification', (n) => {
        const f = JSON.parse(n.payload!);
        notified.push({ id: Number(f.id), topic: f.topic, aggregateId: f.aggregateId, payload: JSON.parse(f.payload) });
      });
      await listener.query(`LISTEN ${pg.escapeIdentifier(`${t.redisPrefix}:events`)}`);
    }
    kairos = await startInProcess(t.env());
  });

  afterAll(async () => {
    redis?.disconnect();
    await listener?.end();
    await kairos?.app.close();
    await t?.cleanup();
  });

  /** Everything published so far, in the order it arrived. */
  async function published(): Promise<Published[]> {
    if (!redis) return notified;
    return (await redis.xrange(`${t.redisPrefix}:events`, '-', '+')).map(([, fields]) => {
      const f: Record<string, string> = {};
      for (let i = 0; i < fields.length; i += 2) f[fields[i]!] = fields[i + 1]!;
      return { id: Number(f.id), topic: f.topic!, aggregateId: f.aggregateId!, payload: JSON.parse(f.payload!) };
    });
  }

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

    const events = await waitFor(async () => {
      const found = await published();
      return found.length >= 8 ? [...found] : undefined;
    }, 'the events to be published', 15_000);
    const byAggregate = (id: string) => events.filter((e) => e.aggregateId === id).map((e) => e.topic);
    expect(byAggregate(cron.id)).toEqual(['schedule.created', 'schedule.paused', 'schedule.resumed', 'schedule.updated', 'schedule.deleted']);
    expect(byAggregate(timer.id)).toEqual(['schedule.created', 'schedule.completed']);
    expect(byAggregate(dead.id)).toEqual(['run.dead']);
    expect(events.find((e) => e.topic === 'run.dead')!.payload).toMatchObject({ runId: dead.id, scheduleId: null, reasonCode: 'HANDLER_NON_RETRYABLE' });
    expect(events.find((e) => e.topic === 'schedule.paused')!.payload).toMatchObject({ scheduleId: cron.id, name: 'cron', status: 'paused', actor: 'anonymous' });
    // Each once, and each aggregate's events in the order they were written. Across aggregates the
    // order is the order of commits, which ids need not follow: the tick's schedule.completed may
    // take its id before an API request's event and commit after it.
    const ids = events.map((e) => e.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const aggregate of [cron.id, timer.id, dead.id]) {
      const own = events.filter((e) => e.aggregateId === aggregate).map((e) => e.id);
      expect([...own].sort((a, b) => a - b)).toEqual(own);
    }
    await waitFor(async () => {
      const { rows } = await t.db.query(`SELECT count(*)::int AS n FROM outbox WHERE published_at IS NULL`);
      return rows[0].n === 0 ? true : undefined;
    }, 'every event to be marked published');
  });
});
