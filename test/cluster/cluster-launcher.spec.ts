/**
 * `npm run cluster`: one API, N schedulers and M workers as local processes, each on its own port,
 * their lines prefixed with their names; exactly one scheduler leads, and SIGTERM stops them all.
 */
import { describe, expect, it } from 'vitest';
import { SPAWNING_TIMEOUT_MS, useTestEnvironment, waitFor } from '../support/kairos.js';
import { spawnProcess } from '../support/processes.js';

describe('npm run cluster', () => {
  const t = useTestEnvironment();

  it('starts api, two schedulers and two workers, one scheduler leads, and SIGTERM stops them all', async () => {
    const launcher = spawnProcess(process.execPath, ['scripts/cluster.mjs', '--schedulers', '2', '--workers', '2', '--port', '0'], {
      env: { ...process.env, ...t.env({ LOG_LEVEL: 'log' }) },
    });
    const names = ['api', 'scheduler-1', 'scheduler-2', 'worker-1', 'worker-2'];
    try {
      // Each process's JSON banner, behind its prefix, names its health URL and its pid.
      const banners = await waitFor(
        async () => {
          const found = new Map<string, { health: string; pid: number }>();
          for (const line of launcher.output().split('\n')) {
            const match = /^\[(\S+)\s*\] (\{.*\})$/.exec(line);
            if (!match) continue;
            const record = JSON.parse(match[2]!);
            if (record.health) found.set(match[1]!, { health: record.health, pid: record.pid });
          }
          return found.size === names.length ? found : undefined;
        },
        'every process to be up',
        SPAWNING_TIMEOUT_MS,
        200,
      ).catch((error: Error) => {
        throw new Error(`${error.message}\n${launcher.output()}`);
      });
      expect([...banners.keys()].sort()).toEqual([...names].sort());
      expect(new Set([...banners.values()].map((b) => new URL(b.health).port)).size).toBe(names.length);
      for (const line of launcher.output().split('\n').filter(Boolean)) expect(line).toMatch(/^\[(api|scheduler-\d|worker-\d)\s*\] |^cluster: /);

      const leading = await waitFor(
        async () => {
          let sum = 0;
          for (const name of ['scheduler-1', 'scheduler-2']) {
            const metrics = await (await fetch(banners.get(name)!.health.replace('/health/ready', '/metrics'))).text();
            sum += Number(/^kairos_leader (\d)$/m.exec(metrics)![1]);
          }
          return sum === 1 ? sum : undefined;
        },
        'one scheduler to lead',
        20_000,
      );
      expect(leading).toBe(1);
      expect((await fetch(banners.get('api')!.health)).status).toBe(200);

      launcher.process.kill('SIGTERM');
      expect(await launcher.exited).toBe(0);
      expect(launcher.output()).toMatch(/^cluster: all 5 processes exited$/m);
      for (const { pid } of banners.values()) expect(() => process.kill(pid, 0)).toThrow();
    } finally {
      if (launcher.process.exitCode === null) {
        launcher.process.kill('SIGTERM');
        await launcher.exited;
      }
    }
  }, SPAWNING_TIMEOUT_MS + 30_000);
});
