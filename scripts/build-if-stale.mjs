// `npm start`'s build: the parts of dist/ older than their sources are built again (see
// build-state.mjs), the rest kept, so a restart with nothing changed starts at once.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { isServerStale, isUiStale } from './build-state.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const stale = [...(isServerStale(root) ? ['build:server'] : []), ...(isUiStale(root) ? ['build:ui'] : [])];
for (const script of stale) {
  const built = spawnSync('npm', ['run', '--silent', script], { cwd: root, stdio: 'inherit' });
  if (built.status !== 0) process.exit(built.status ?? 1);
}
