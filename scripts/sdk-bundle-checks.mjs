// What a built @kairos/sdk must not hold, checked by `npm run sdk:pack` and by the tests that
// install the packed SDK: an import of a monorepo library (`@kairos/...`), for the package must
// stand on its own; and SQL naming a table of the ledger, for a worker speaks to the ledger only
// through the worker protocol's functions (schema kairos_worker).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const migrations = fileURLToPath(new URL('../prisma/migrations', import.meta.url));

/** Every table the ledger's migrations create in its own schema. */
function ledgerTables() {
  return readdirSync(migrations).flatMap((version) =>
    [...readFileSync(join(migrations, version, 'migration.sql'), 'utf8').matchAll(/CREATE TABLE (?:IF NOT EXISTS )?([a-z_]+)\s*\(/g)].map((m) => m[1]),
  );
}

/** One line per fault found in the files of `dist`; none when the bundle is fit to publish. */
export function bundleFaults(dist) {
  const tableSql = new RegExp(`\\b(?:FROM|JOIN|INTO|UPDATE|TABLE)\\s+(${ledgerTables().join('|')})\\b`);
  const faults = [];
  for (const file of readdirSync(dist)) {
    const text = readFileSync(join(dist, file), 'utf8');
    const leak = /(?:from\s*|import\s*\(\s*)["'](@kairos\/[^"']+)["']/.exec(text);
    if (leak) faults.push(`${file} imports ${leak[1]}: the monorepo's libraries must be bundled`);
    const sql = tableSql.exec(text);
    if (sql) faults.push(`${file} holds SQL on the ledger's table ${sql[1]} ("${sql[0]}"): workers go through the kairos_worker functions`);
  }
  return faults;
}
