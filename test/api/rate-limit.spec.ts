/**
 * Rate limits: KAIROS_RATE_LIMIT requests per second per key (per address without one), counted in
 * Redis so every replica shares them; 429 RATE_LIMITED with Retry-After; health and metrics exempt.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StartedKairos } from '@kairos/process';
import { issueKey, sleepUntil, startInProcess, useTestEnvironment } from '../support/kairos.js';

const LIMIT = 5;

/** Waits for the start of the next second, so a burst falls in one counting window. */
async function atSecondStart(): Promise<void> {
  await sleepUntil(Math.ceil((Date.now() + 1) / 1_000) * 1_000 + 20);
}

describe('rate limits', () => {
  let replicas: StartedKairos[];
  let key: string;
  let other: string;

  const t = useTestEnvironment();

  beforeAll(async () => {
    replicas = [await startInProcess(t.env({ KAIROS_RATE_LIMIT: String(LIMIT) }), ['api']), await startInProcess(t.env({ KAIROS_RATE_LIMIT: String(LIMIT) }), ['api'])];
    key = await issueKey(t, 'default', 'read,write');
    other = await issueKey(t, 'default', 'read,write');
  });

  afterAll(async () => {
    await Promise.all((replicas ?? []).map((r) => r.app.close()));
  });

  const get = (base: string, path: string, apiKey?: string) => fetch(`${base}${path}`, { headers: apiKey ? { authorization: `Bearer ${apiKey}` } : {} });

  it('answers 429 with Retry-After past the limit, per key, counted across replicas', async () => {
    await atSecondStart();
    // Eight requests to each replica at once: shared counting lets five through in all, not five each.
    const burst = await Promise.all(replicas.flatMap((r) => Array.from({ length: 8 }, () => get(r.url, '/v1/schedules', key))));
    const statuses = burst.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 200)).toHaveLength(LIMIT);
    expect(statuses.filter((s) => s === 429)).toHaveLength(16 - LIMIT);
    const refused = burst.find((r) => r.status === 429)!;
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(await refused.json()).toMatchObject({ code: 'RATE_LIMITED', field: null });
    // Another key has its own budget, in the same second.
    expect((await get(replicas[0]!.url, '/v1/schedules', other)).status).toBe(200);
    // Health checks and metrics are never limited.
    expect((await get(replicas[0]!.url, '/health/live', key)).status).toBe(200);
    expect((await get(replicas[1]!.url, '/metrics', key)).status).toBe(200);
    // The next second starts afresh.
    await atSecondStart();
    expect((await get(replicas[1]!.url, '/v1/schedules', key)).status).toBe(200);
  });

  it('limits callers without a key by address', async () => {
    await atSecondStart();
    const burst = await Promise.all(Array.from({ length: 10 }, () => get(replicas[0]!.url, '/v1/schedules')));
    expect(burst.filter((r) => r.status === 200)).toHaveLength(LIMIT);
    expect(burst.filter((r) => r.status === 429)).toHaveLength(10 - LIMIT);
  });
});
