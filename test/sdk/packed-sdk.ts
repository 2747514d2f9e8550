/**
 * The packed @kairos/sdk, installed as a user would: the package's bundle built by tsup from its
 * own config, packed with `npm pack` and `npm install`ed from the tarball into a project in the
 * temporary folder, from the npm cache for the declared dependencies. Built once for everything the
 * bundle is made of: the result is kept under a hash of those files, so the test files and projects
 * of a run, and later runs with the same sources, share one build and one install.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync } from 'node:fs';
import { copyFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import { ROOT, withDirectoryLock } from '../support/build.js';
import type { TestEnvironment } from '../support/kairos.js';
import { spawnProcess, type ChildOutput } from '../support/processes.js';
import { bundleFaults } from '../../scripts/sdk-bundle-checks.mjs';

const run = promisify(execFile);
const SDK = join(ROOT, 'packages/sdk');

/** Every file the bundle is made of: the SDK's and the libraries' sources, and how they are built and packed. */
function inputsHash(): string {
  const files: string[] = ['packages/sdk/package.json', 'packages/sdk/README.md', 'packages/sdk/tsup.config.ts', 'tsconfig.json', 'package-lock.json'].map((f) =>
    join(ROOT, f),
  );
  const visit = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) visit(path);
      else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts')) files.push(path);
    }
  };
  visit(join(SDK, 'src'));
  for (const lib of readdirSync(join(ROOT, 'libs'))) visit(join(ROOT, 'libs', lib, 'src'));
  const hash = createHash('sha256');
  for (const file of files.sort()) hash.update(`${relative(ROOT, file)}\0`).update(readFileSync(file)).update('\0');
  return hash.digest('hex').slice(0, 16);
}

/** Runs `make` into a fresh folder that becomes `target` once complete; one maker at a time. */
async function cached(target: string, make: (dir: string) => Promise<void>): Promise<string> {
  if (existsSync(target)) return target;
  return withDirectoryLock(`${target}.lock`, async () => {
    if (existsSync(target)) return target;
    const staging = await mkdtemp(`${target}.tmp-`);
    try {
      await make(staging);
      renameSync(staging, target);
    } catch (error) {
      await rm(staging, { recursive: true, force: true });
      throw error;
    }
    return target;
  });
}

const tsup = (args: string[]) =>
  run(process.execPath, [join(ROOT, 'node_modules/tsup/dist/cli-default.js'), '--config', 'tsup.config.ts', ...args], { cwd: SDK, maxBuffer: 16 * 1024 * 1024 });

let installing: Promise<string> | null = null;

/**
 * A folder whose node_modules holds the packed SDK, installed from its tarball. Built without
 * declarations: a JavaScript user's worker does not read them (declarations.spec.ts checks them).
 */
export function installedSdk(): Promise<string> {
  installing ??= cached(join(tmpdir(), `kairos-sdk-${inputsHash()}`), async (dir) => {
    const pkg = join(dir, 'package');
    mkdirSync(pkg);
    await Promise.all(['package.json', 'README.md'].map((f) => copyFile(join(SDK, f), join(pkg, f))));
    await tsup(['--no-dts', '--out-dir', join(pkg, 'dist')]);
    const faults = bundleFaults(join(pkg, 'dist'));
    if (faults.length > 0) throw new Error(`the SDK bundle is not fit to publish: ${faults.join('; ')}`);
    const packed = JSON.parse((await run('npm', ['pack', '--json', '--pack-destination', dir], { cwd: pkg })).stdout) as { filename: string }[];
    const project = join(dir, 'project');
    mkdirSync(project);
    await writeFile(join(project, 'package.json'), JSON.stringify({ name: 'sdk-user', private: true, type: 'module' }));
    await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error', join(dir, packed[0]!.filename)], {
      cwd: project,
      maxBuffer: 16 * 1024 * 1024,
    });
  }).then((dir) => join(dir, 'project'));
  return installing;
}

/** The package's dist/ as `npm run sdk:pack` builds it, declarations included, in a folder of its own. */
export function fullBuild(): Promise<string> {
  return cached(join(tmpdir(), `kairos-sdk-full-${inputsHash()}`), async (dir) => {
    await tsup(['--out-dir', join(dir, 'dist')]);
  });
}

export interface UserProject {
  dir: string;
  remove(): Promise<void>;
}

/** A temporary project with the packed SDK installed (in the folder above it) and the given files written in it. */
export async function userProject(files: Record<string, string>): Promise<UserProject> {
  const installed = await installedSdk();
  const dir = await mkdtemp(join(installed, 'user-'));
  await writeFile(join(dir, 'package.json'), JSON.stringify({ name: 'sdk-user', private: true, type: 'module' }));
  for (const [name, text] of Object.entries(files)) await writeFile(join(dir, name), text);
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) };
}

/** A user worker process: `node worker.mjs` in a user project, once it printed `ready <worker id>`. */
export interface UserWorker extends ChildOutput {
  id: string;
}

/**
 * Starts and kills the user workers of a describe block: each runs `worker.mjs` of the project
 * with the test environment's variables, `defaults` and its own; `killAll` (for an afterEach)
 * kills every one started since, with SIGKILL.
 */
export function userWorkers(t: TestEnvironment, project: () => UserProject, defaults: Record<string, string>) {
  const started: ChildOutput[] = [];
  return {
    async start(env: Record<string, string> = {}): Promise<UserWorker> {
      const child = spawnProcess(process.execPath, ['worker.mjs'], { cwd: project().dir, env: { ...process.env, ...t.env({ ...defaults, ...env }) } });
      started.push(child);
      return { ...child, id: (await child.until(/ready (\S+)/, 'the user worker to start'))[1]! };
    },
    async killAll(): Promise<void> {
      const stopping = started.splice(0);
      for (const w of stopping) w.process.kill('SIGKILL');
      await Promise.all(stopping.map((w) => w.exited));
    },
  };
}
