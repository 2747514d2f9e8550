/**
 * `npm start` builds only what is stale (scripts/build-state.mjs): the server when an app's entry
 * point is missing or older than a source or build file it is made from, the dashboard when
 * dist/ui is older than a file of apps/ui; specs and what lies under node_modules or dist count for
 * neither. Checked on a tree of its own, with the files' times set by hand.
 */
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SERVER_APPS, isServerStale, isUiStale } from '../../scripts/build-state.mjs';

describe('what npm start builds', () => {
  const root = mkdtempSync(join(tmpdir(), 'kairos-build-state-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  /** Writes `path` under the tree with its modification time `at` seconds after the epoch of the test. */
  const file = (path: string, at: number): void => {
    const full = join(root, path);
    mkdirSync(dirname(full), { recursive: true });
    writeFileSync(full, '');
    utimesSync(full, 1_000_000 + at, 1_000_000 + at);
  };

  const sources = (at: number): void => {
    for (const f of ['tsconfig.json', 'tsconfig.build.json', 'nest-cli.json', 'package-lock.json']) file(f, at);
    file('apps/api/src/main.ts', at);
    file('libs/domain/src/index.ts', at);
    file('packages/sdk/src/index.ts', at);
    file('apps/ui/src/app.tsx', at);
    file('apps/ui/index.html', at);
  };
  const built = (at: number): void => {
    for (const app of SERVER_APPS) file(`dist/apps/${app}/src/main.js`, at);
    file('dist/ui/index.html', at);
  };

  it.each<[string, () => void, boolean, boolean]>([
    ['nothing built yet', () => sources(10), true, true],
    ['everything built after its sources', () => built(20), false, false],
    ['a library source changed', () => file('libs/domain/src/index.ts', 30), true, false],
    ['the server built again', () => built(40), false, false],
    ['a spec beside a source changed (not built)', () => file('libs/domain/src/index.spec.ts', 50), false, false],
    ['a file under node_modules changed', () => file('libs/domain/node_modules/x/index.ts', 60), false, false],
    ['a dashboard source changed', () => file('apps/ui/src/pages/page.tsx', 70), false, true],
    ['the dashboard built again', () => file('dist/ui/index.html', 80), false, false],
    ['the lockfile changed', () => file('package-lock.json', 90), true, true],
    ['everything built again', () => built(100), false, false],
    ['one entry point is missing', () => rmSync(join(root, 'dist/apps/worker/src/main.js')), true, false],
  ])('%s: server stale %s, dashboard stale %s', (_name, change, server, ui) => {
    change();
    expect({ server: isServerStale(root), ui: isUiStale(root) }).toEqual({ server, ui });
  });
});
