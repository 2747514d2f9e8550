// `npm run sdk:pack`: builds @kairos/sdk (packages/sdk) and packs it with `npm pack`. Refuses a
// build whose JavaScript or declarations still import a monorepo library (`@kairos/...`): the
// package must stand on its own; and one that names a table of the ledger in SQL: a worker speaks
// to the ledger only through the worker protocol's functions. The tarball's absolute path is the
// last line of the output.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const sdk = join(root, 'packages', 'sdk');

execFileSync(process.execPath, [join(root, 'node_modules', 'tsup', 'dist', 'cli-default.js'), '--config', 'tsup.config.ts'], {
  cwd: sdk,
  stdio: ['ignore', 'inherit', 'inherit'],
});

/** Every table the ledger's migrations create in its own schema. */
const migrations = join(root, 'prisma', 'migrations');
const ledgerTables = readdirSync(migrations).flatMap((version) =>
  [...readFileSync(join(migrations, version, 'migration.sql'), 'utf8').matchAll(/CREATE TABLE (?:IF NOT EXISTS )?([a-z_]+)\s*\(/g)].map((m) => m[1]),
);
const tableSql = new RegExp(`\\b(?:FROM|JOIN|INTO|UPDATE|TABLE)\\s+(${ledgerTables.join('|')})\\b`);

const dist = join(sdk, 'dist');
for (const file of readdirSync(dist)) {
  const text = readFileSync(join(dist, file), 'utf8');
  const leak = /(?:from\s*|import\s*\(\s*)["'](@kairos\/[^"']+)["']/.exec(text);
  if (leak) {
    console.error(`packages/sdk/dist/${file} imports ${leak[1]}: the monorepo's libraries must be bundled`);
    process.exit(1);
  }
  const sql = tableSql.exec(text);
  if (sql) {
    console.error(`packages/sdk/dist/${file} holds SQL on the ledger's table ${sql[1]} ("${sql[0]}"): workers go through kairos_worker functions`);
    process.exit(1);
  }
}

const packed = JSON.parse(execFileSync('npm', ['pack', '--json', '--pack-destination', sdk], { cwd: sdk, encoding: 'utf8' }));
console.log(join(sdk, packed[0].filename));
