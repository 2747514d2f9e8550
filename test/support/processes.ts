/** Processes a test starts (Kairos apps, the cluster launcher, a user's worker), with their output. */
import { spawn, type ChildProcess } from 'node:child_process';
import { ROOT } from './build.js';

export interface ChildOutput {
  process: ChildProcess;
  /** Everything it wrote so far, stdout and stderr interleaved. */
  output(): string;
  /** Its exit code, null after a signal. */
  exited: Promise<number | null>;
  /** Resolves with the first match of `pattern` in its output; fails if it exits first or after `timeoutMs`. */
  until(pattern: RegExp, what: string, timeoutMs?: number): Promise<RegExpExecArray>;
}

/**
 * Spawns a process of the test (a Kairos app, the cluster launcher, a user's worker) with its output
 * collected. `env` is its whole environment.
 */
export function spawnProcess(command: string, args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): ChildOutput {
  const child = spawn(command, args, { cwd: options.cwd ?? ROOT, env: options.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const watchers = new Set<() => void>();
  const append = (chunk: Buffer): void => {
    output += chunk.toString();
    for (const check of watchers) check();
  };
  child.stdout!.on('data', append);
  child.stderr!.on('data', append);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const until = (pattern: RegExp, what: string, timeoutMs = 60_000): Promise<RegExpExecArray> =>
    new Promise<RegExpExecArray>((resolve, reject) => {
      const done = (): void => {
        watchers.delete(check);
        clearTimeout(timer);
      };
      const check = (): void => {
        const match = pattern.exec(output);
        if (match) {
          done();
          resolve(match);
        }
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}:\n${output}`));
      }, timeoutMs);
      watchers.add(check);
      check();
      void exited.then((code) => {
        if (!watchers.has(check)) return;
        done();
        reject(new Error(`${what}: the process exited with ${code ?? child.signalCode} first:\n${output}`));
      });
    });
  return { process: child, output: () => output, exited, until };
}
