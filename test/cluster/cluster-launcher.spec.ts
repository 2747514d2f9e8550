/**
 * `npm run cluster`: one API, N schedulers and M workers as local processes, each on its own port,
 * their lines prefixed with their names; exactly one scheduler leads, and SIGTERM stops them all.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { useTestEnvironment, waitFor } from '../support/kairos.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

describe('npm run cluster', () => {
  const t = useTestEnvironment();

  it('starts api, two schedulers and two workers, one scheduler leads, and SIGTERM stops them all', async () => {
    const launcher = spawn(process.execPath, ['scripts/cluster.mjs', '--schedulers', '2', '--workers', '2', '--port', '0'], {
      cwd: ROOT,
      env: { ...process.env, ...t.env({ LOG_LEVEL: 'log' }) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    launcher.stdout.on('data', (c: Buffer) => (out += c.toString()));
    launcher.stderr.on('data', (c: Buffer) => (out += c.toString()));
    const exited = new Promise<number | null>((resolve) => launcher.once('exit', (code) => resolve(code)));
    const names = ['api', 'scheduler-1', 'scheduler-2', 'worker-1', 'worker-2'];
    try {
      // Each process's JSON banner, behind its prefix, names its health URL and its pid.
      const banners = await waitFor(
        async () => {
          const found = new Map<string, { health: string; pid: number }>();
          for (const line of out.split('\n')) {
            const match = /^\[(\S+)\s*\] (\{.*\})$/.exec(line);
            if (!match) continue;
            const record = JSON.parse(match[2]!);
            if (record.health) found.set(match[1]!, { health: record.health, pid: record.pid });
          }
          return found.size === names.length ? found : undefined;
        },
        'every process to be up',
        150_000,
        200,
      ).catch((error: Error) => {
        throw new Error(`${error.message}\n${out}`);
      });
      expect([...banners.keys()].sort()).toEqual([...names].sort());
      expect(new Set([...banners.values()].map((b) => new URL(b.health).port)).size).toBe(names.length);
      for (const line of out.split('\n').filter(Boolean)) expect(line).toMatch(/^\[(api|scheduler-\d|worker-\d)\s*\] |^cluster: /);

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

      launcher.kill('SIGTERM');
      expect(await exited).toBe(0);
      expect(out).toMatch(/^cluster: all 5 processes exited$/m);
      for (const { pid } of banners.values()) expect(() => process.kill(pid, 0)).toThrow();
    } finally {
      if (launcher.exitCode === null) {
        launcher.kill('SIGTERM');
        await exited;
      }
    }
  }, 240_000);
});
