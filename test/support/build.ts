/**
 * The build the tests spawn Kairos from (`dist/`), made by `nest build kairos` when it is missing
 * or older than a source it compiles. A child started from plain JavaScript is up in a few seconds;
 * one that transpiles the sources as it starts took tens of seconds on a loaded machine.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { createHash } from 'node:crypto';

const run = promisify(execFile);
export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

export const APPS = ['kairos', 'api', 'scheduler', 'worker', 'cli'] as const;
export type App = (typeof APPS)[number];

/** The built entry point of an app, relative to the repository root. */
export const builtMain = (app: App): string => `dist/apps/${app}/src/main.js`;

/** What `nest build kairos` compiles (tsconfig.build.json), and the files that steer it. */
const SOURCE_DIRS = ['apps', 'libs', 'packages'];
const BUILD_CONFIG = ['tsconfig.json', 'tsconfig.build.json', 'nest-cli.json', 'package-lock.json'];

function newestSource(): number {
  let newest = 0;
  const visit = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.name === 'node_modules' || entry.name === 'dist') continue;
      const path = join(dir, entry.name);
      if (entry.isDirectory()) visit(path);
      else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts')) newest = Math.max(newest, statSync(path).mtimeMs);
    }
  };
  for (const top of SOURCE_DIRS) {
    for (const entry of readdirSync(join(ROOT, top), { withFileTypes: true })) {
      // The dashboard is Vite's (dist/ui), not nest's.
      if (entry.isDirectory() && !(top === 'apps' && entry.name === 'ui')) visit(join(ROOT, top, entry.name, 'src'));
    }
  }
  for (const file of BUILD_CONFIG) newest = Math.max(newest, statSync(join(ROOT, file)).mtimeMs);
  return newest;
}

/** When the current build was made: its oldest entry point, or 0 when one is missing. */
function builtAt(): number {
  try {
    return Math.min(...APPS.map((app) => statSync(join(ROOT, builtMain(app))).mtimeMs));
  } catch {
    return 0;
  }
}

const isStale = (): boolean => builtAt() < newestSource();

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
