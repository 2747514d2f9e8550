/**
 * Start-up failures an operator can act on print one line, not a stack trace, and exit 1; a
 * process that can start applies the migrations and answers its health checks. (A transport that
 * cannot be reached does not stop a start: see transport-refused.spec.ts.)
 */
import { describe, expect, it } from 'vitest';
import { SPAWNING_TIMEOUT_MS, spawnKairos, useTestEnvironment, waitFor } from '../support/kairos.js';

describe('starting a Kairos process', () => {
  const t = useTestEnvironment();

  it.each([
    ['Postgres is unreachable', { DATABASE_URL: 'postgresql://postgres@127.0.0.1:1/kairos' }, /^kairos: cannot reach Postgres at 127\.0\.0\.1:1 .*start Postgres or point DATABASE_URL at a running server$/],
    ['a setting is invalid', { KAIROS_LEADER_TTL: 'soon' }, /^kairos: KAIROS_LEADER_TTL="soon": /],
    ['a role is unknown', { KAIROS_ROLES: 'api,janitor' }, /^kairos: KAIROS_ROLES: unknown role "janitor"/],
  ])('says so in one line and exits 1 when %s', async (_what, env, message) => {
    const child = spawnKairos('kairos', t.env(env));
    expect(await child.exited).toBe(1);
    const lines = child.output().trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(message);
  }, SPAWNING_TIMEOUT_MS);

  it('creates a missing database, migrates it, and reports ready with a leader', async () => {
    const fresh = `${new URL(t.databaseUrl).pathname.slice(1)}_fresh`;
    const url = new URL(t.databaseUrl);
    url.pathname = `/${fresh}`;
    const child = spawnKairos('kairos', t.env({ DATABASE_URL: url.toString() }));
    try {
      const base = await child.ready;
      expect(child.output()).toContain(`"rest":"${base}/v1/schedules"`);
      const ready = await waitFor(async () => {
        const response = await fetch(`${base}/health/ready`);
        return response.status === 200 ? response : undefined;
      }, 'the process to report ready', 5_000);
      expect(((await ready.json()) as any).info.leader.status).toBe('up');
      expect((await fetch(`${base}/health/live`)).status).toBe(200);
    } finally {
      child.process.kill('SIGTERM');
      expect(await child.exited).toBe(0);
      const { dropDatabase } = await import('../support/services.js');
      await dropDatabase(fresh);
    }
  }, SPAWNING_TIMEOUT_MS);
});
