/**
 * The packed @kairos/sdk, installed as a user would: `npm run sdk:pack` once per test run (the
 * tarball is reused by every test that asks), then `npm install <tarball>` into a fresh temporary
 * project, from the npm cache for the declared dependencies.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../../', import.meta.url));

let packing: Promise<string> | null = null;

/** The tarball's absolute path: the last line `npm run sdk:pack` prints. */
export function packedSdk(): Promise<string> {
  packing ??= run('npm', ['run', '--silent', 'sdk:pack'], { cwd: ROOT, maxBuffer: 16 * 1024 * 1024 }).then(({ stdout }) =>
    stdout.trim().split('\n').at(-1)!.trim(),
  );
  return packing;
}

export interface UserProject {
  dir: string;
  remove(): Promise<void>;
}

/** A temporary project with the tarball installed and the given files written beside it. */
export async function userProject(files: Record<string, string>): Promise<UserProject> {
  const tarball = await packedSdk();
  const dir = await mkdtemp(join(tmpdir(), 'kairos-sdk-user-'));
  await writeFile(join(dir, 'package.json'), JSON.stringify({ name: 'sdk-user', private: true, type: 'module' }));
  await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error', tarball], { cwd: dir, maxBuffer: 16 * 1024 * 1024 });
  for (const [name, text] of Object.entries(files)) await writeFile(join(dir, name), text);
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) };
}
