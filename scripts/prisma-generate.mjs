// Generates the Prisma client into prisma/generated (not committed); only the schema test uses it.
// `prisma generate` needs no schema engine, but the CLI insists on locating one; pointing it at any
// existing file keeps it from downloading a binary. Production installs (--omit=dev) have no
// Prisma CLI and need no client, so they skip this.
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
let cli;
try {
  cli = require.resolve('prisma/build/index.js');
} catch {
  process.exit(0);
}
const result = spawnSync(process.execPath, [cli, 'generate'], {
  stdio: 'inherit',
  env: {
    ...process.env,
    PRISMA_SCHEMA_ENGINE_BINARY: process.env.PRISMA_SCHEMA_ENGINE_BINARY ?? process.execPath,
    PRISMA_HIDE_UPDATE_MESSAGE: '1',
    CHECKPOINT_DISABLE: '1',
  },
});
process.exit(result.status ?? 1);
