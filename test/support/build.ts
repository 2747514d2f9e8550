/**
 * The build the tests spawn Kairos from (`dist/`), made by `nest build kairos` when it is missing
 * or older than a source it compiles. A child started from plain JavaScript is up in a few seconds;
 * one that transpiles the sources as it starts took tens of seconds on a loaded machine.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { createHash } from 'node:crypto';
import { SERVER_APPS, isServerStale } from '../../scripts/build-state.mjs';

const run = promisify(execFile);
export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

export const APPS = SERVER_APPS;
export type App = (typeof APPS)[number];

/** The built entry point of an app, relative to the repository root. */
export const builtMain = (app: App): string => `dist/apps/${app}/src/main.js`;

const isStale = (): boolean => isServerStale(ROOT);

/**
 * Runs `work` while holding the lock directory `lock`: one holder at a time across processes and
 * test runs. A lock left by a killed run is taken over after ten minutes.
 */
export async function withDirectoryLock<T>(lock: string, work: () => Promise<T>): Promise<T> {
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch {
      try {
        if (Date.now() - statSync(lock).mtimeMs > 600_000) rmSync(lock, { recursive: true, force: true });
      } catch {
        // Released meanwhile.
      }
      await new Promise((r) => setTimeout(r, 500));
    }
  }
  try {
    return await work();
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

/** Another test run in the same checkout may be deciding the same thing: one builds at a time. */
const withBuildLock = <T>(work: () => Promise<T>): Promise<T> =>
  withDirectoryLock(join(tmpdir(), `kairos-build-${createHash('sha256').update(ROOT).digest('hex').slice(0, 12)}.lock`), work);

/** Builds dist/ unless it is newer than every source it compiles. Returns whether it built. */
export async function ensureBuilt(): Promise<boolean> {
  if (!isStale()) return false;
  return withBuildLock(async () => {
    if (!isStale()) return false;
    const started = Date.now();
    await run(process.execPath, [join(ROOT, 'node_modules/@nestjs/cli/bin/nest.js'), 'build', 'kairos'], { cwd: ROOT, maxBuffer: 16 * 1024 * 1024 }).catch(
      (error: Error & { stdout?: string; stderr?: string }) => {
        throw new Error(`nest build kairos failed:\n${error.stdout ?? ''}${error.stderr ?? ''}`);
      },
    );
    console.info(`built dist/ for the spawned processes in ${((Date.now() - started) / 1_000).toFixed(1)} s`);
    return true;
  });
}
