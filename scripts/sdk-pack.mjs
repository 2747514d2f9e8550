// `npm run sdk:pack`: builds @kairos/sdk (packages/sdk) and packs it with `npm pack`. Refuses a
// build that imports a monorepo library or holds SQL on the ledger's tables (see
// sdk-bundle-checks.mjs). The tarball's absolute path is the last line of the output.
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleFaults } from './sdk-bundle-checks.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const sdk = join(root, 'packages', 'sdk');

execFileSync(process.execPath, [join(root, 'node_modules', 'tsup', 'dist', 'cli-default.js'), '--config', 'tsup.config.ts'], {
  cwd: sdk,
  stdio: ['ignore', 'inherit', 'inherit'],
});

const faults = bundleFaults(join(sdk, 'dist'));
if (faults.length > 0) {
  for (const fault of faults) console.error(`packages/sdk/dist/${fault}`);
  process.exit(1);
}

const packed = JSON.parse(execFileSync('npm', ['pack', '--json', '--pack-destination', sdk], { cwd: sdk, encoding: 'utf8' }));
console.log(join(sdk, packed[0].filename));
