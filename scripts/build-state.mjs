// Whether the build in dist/ is older than what it is made from, part by part: the server (`npm
// run build:server`, nest: dist/apps/<app>/src/main.js) and the dashboard (`npm run build:ui`,
// Vite: dist/ui). `npm start` builds only the stale parts (scripts/build-if-stale.mjs), and the
// tests build the server before spawning it (test/support/build.ts).
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** The server's apps, each built to dist/apps/<app>/src/main.js. */
export const SERVER_APPS = ['kairos', 'api', 'scheduler', 'worker', 'cli'];

/** The newest mtime of the files under `dir` that `accept` keeps (node_modules and dist passed over). */
function newestUnder(dir, accept) {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name === 'dist') continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestUnder(path, accept));
    else if (accept(entry.name)) newest = Math.max(newest, statSync(path).mtimeMs);
  }
  return newest;
}

const mtimeOf = (path) => {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return 0;
  }
};

/** What `nest build kairos` compiles (tsconfig.build.json: the src of every app but the dashboard, of every lib and package), and the files that steer it. */
function serverSourcesChangedAt(root) {
  let newest = Math.max(...['tsconfig.json', 'tsconfig.build.json', 'nest-cli.json', 'package-lock.json'].map((f) => mtimeOf(join(root, f))));
  for (const top of ['apps', 'libs', 'packages']) {
    for (const entry of readdirSync(join(root, top), { withFileTypes: true })) {
      if (!entry.isDirectory() || (top === 'apps' && entry.name === 'ui')) continue;
      newest = Math.max(newest, newestUnder(join(root, top, entry.name, 'src'), (name) => name.endsWith('.ts') && !name.endsWith('.spec.ts')));
    }
  }
  return newest;
}

/** True when an app's entry point is missing or older than a source the server is built from. */
export function isServerStale(root) {
  const builtAt = Math.min(...SERVER_APPS.map((app) => mtimeOf(join(root, `dist/apps/${app}/src/main.js`))));
  return builtAt === 0 || builtAt < serverSourcesChangedAt(root);
}

/** True when dist/ui is missing or older than a file of apps/ui (its sources, page, config) or the lockfile. */
export function isUiStale(root) {
  const builtAt = mtimeOf(join(root, 'dist/ui/index.html'));
  const changedAt = Math.max(mtimeOf(join(root, 'package-lock.json')), newestUnder(join(root, 'apps/ui'), (name) => !name.endsWith('.spec.ts')));
  return builtAt === 0 || builtAt < changedAt;
}
