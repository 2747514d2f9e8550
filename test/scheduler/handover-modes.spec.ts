/**
 * A clean hand-over across connection modes: Kairos stopped with SIGTERM while it leads, started
 * again on the same ledger in the other mode (a session-capable DATABASE_URL, then a pooled one
 * with no DATABASE_DIRECT_URL, whose leases are judged by their expiry alone, and back), takes the
 * leadership and every partition at once and fires the next slot of an every-second schedule
 * within seconds of being up, not after a lease's expiry.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPgBouncer, type PgBouncerUnderTest } from '../support/engines.js';
import { SPAWNING_TIMEOUT_MS, api, spawnKairos, useTestEnvironment, waitFor } from '../support/kairos.js';

let pooler: PgBouncerUnderTest;
beforeAll(async () => {
  pooler = await startPgBouncer();
});
afterAll(async () => {
  await pooler?.stop();
});

describe('a clean hand-over across connection modes, through PgBouncer', () => {
  const t = useTestEnvironment();

  const database = () => new URL(t.databaseUrl).pathname.slice(1);
  const modes = {
    // Through the pooler, sessions (presence locks, LISTEN) on Postgres itself.
    session: () => ({ DATABASE_URL: pooler.url(database()), DATABASE_DIRECT_URL: t.databaseUrl }),
    // Through the pooler alone: leases judged by their expiry.
    pooled: () => ({ DATABASE_URL: `${pooler.url(database())}?pgbouncer=true` }),
  };

  /** The newest slot an every-second schedule fired, as an epoch ms; 0 before any. */
  const lastFire = async (scheduleId: string): Promise<number> =>
    Number((await t.db.query(`SELECT coalesce(max(extract(epoch FROM scheduled_for) * 1000), 0) AS at FROM ticks WHERE schedule_id = $1`, [scheduleId])).rows[0].at);

  it(
    'fires the next slot within 5 s of being up after a restart in the other mode, session to pooled and back',
    async () => {
      let scheduleId: string | null = null;
      for (const mode of ['session', 'pooled', 'session'] as const) {
        const kairos = spawnKairos('kairos', t.env({ ...modes[mode](), KAIROS_ROLES: 'api,scheduler,worker' }));
        try {
          const url = await kairos.ready;
          const up = Date.now();
          if (scheduleId === null) {
            const created = await api(url).post('/v1/schedules', { name: 'every-second', every: '1s', target: { type: 'handler', name: 'noop' } });
            expect(created.status, JSON.stringify(created.body)).toBe(201);
            scheduleId = created.body.id as string;
          }
          const id = scheduleId;
          const fired = await waitFor(async () => ((await lastFire(id)) >= up ? Date.now() : undefined), `a slot fired after the ${mode} start`, 90_000, 50);
          console.info(`${mode}: its first slot fired ${fired - up} ms after the process was up`);
          expect(fired - up, `${mode}: ${kairos.output()}`).toBeLessThan(5_000);
        } finally {
          kairos.process.kill('SIGTERM');
          expect(await kairos.exited).toBe(0);
        }
      }
    },
    SPAWNING_TIMEOUT_MS * 2,
  );
});
