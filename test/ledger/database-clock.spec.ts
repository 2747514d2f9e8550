/**
 * The database's clock as a process reads it: anchored by round trips to the real Postgres, it
 * agrees with clock_timestamp() within the uncertainty it states, and keeps agreeing between
 * refreshes without a query.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { DatabaseClock } from '@kairos/ledger';
import { sleep, useTestEnvironment } from '../support/kairos.js';

describe('DatabaseClock', () => {
  const t = useTestEnvironment();
  let clock: DatabaseClock | null = null;
  afterAll(() => clock?.stop());

  /** The database's clock_timestamp() bracketed by two readings of `clock`: how far the bracket's middle is from it. */
  async function disagreementMs(c: DatabaseClock): Promise<{ ms: number; roundTripMs: number }> {
    const before = c.now();
    const { rows } = await t.db.query<{ ms: number }>(`SELECT (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS ms`);
    const after = c.now();
    return { ms: Math.abs(rows[0]!.ms - (before + after) / 2), roundTripMs: after - before };
  }

  it('reads the host clock until it has measured, then the database clock within its stated uncertainty', async () => {
    clock = new DatabaseClock(t.db, { refreshMs: 60_000 });
    expect(clock.lastReading).toBeNull();
    expect(Math.abs(clock.now() - Date.now())).toBeLessThanOrEqual(1);

    const readings: { offsetMs: number }[] = [];
    clock.onReading((reading) => readings.push(reading));
    await clock.start();
    expect(readings).toHaveLength(1);
    const reading = clock.lastReading!;
    // The test's host and the database's are the same machine: one clock, so the offset is only the measure's error.
    expect(Math.abs(reading.offsetMs)).toBeLessThanOrEqual(reading.uncertaintyMs + 2);
    expect(reading.uncertaintyMs).toBeGreaterThanOrEqual(0);

    for (let i = 0; i < 5; i++) {
      const { ms, roundTripMs } = await disagreementMs(clock);
      expect(ms).toBeLessThanOrEqual(reading.uncertaintyMs + roundTripMs / 2 + 2);
      await sleep(100);
    }
  });

  it('returns whole milliseconds, as Date.now() does', () => {
    for (let i = 0; i < 100; i++) expect(Number.isInteger(clock!.now())).toBe(true);
  });
});
