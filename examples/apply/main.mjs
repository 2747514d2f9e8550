// Schedules as code: plans kairos.yaml with the CLI (a dry run), applies it, and plans it again: nothing to change.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

// The kairos command line, which reads KAIROS_URL and KAIROS_API_KEY: the repository's build (npm run build), or KAIROS_CLI.
const cli = process.env.KAIROS_CLI ?? fileURLToPath(new URL('../../dist/apps/cli/src/main.js', import.meta.url));
const here = fileURLToPath(new URL('.', import.meta.url));

/** Runs `kairos <args>` in this folder, printing its plan, and answers its exit status. */
function kairos(...args) {
  console.log(`$ kairos ${args.join(' ')}`);
  const { status, error } = spawnSync(process.execPath, [cli, ...args], { cwd: here, stdio: 'inherit' });
  if (error) throw error;
  return status;
}

// A dry run exits 2 when the cluster differs from the files (0 when it matches them already), 1 when they are invalid.
if (![0, 2].includes(kairos('apply', '-f', 'kairos.yaml', '--dry-run'))) throw new Error('the plan failed');
if (kairos('apply', '-f', 'kairos.yaml') !== 0) throw new Error('the apply failed'); // one transaction: every change or none
if (kairos('apply', '-f', 'kairos.yaml', '--dry-run') !== 0) throw new Error('a second plan still found changes');
console.log('applied: the cluster matches kairos.yaml');
