/** `npm run docs:config`: rewrites the README's configuration table from the declaration in libs/config. */
import { readFileSync, writeFileSync } from 'node:fs';
import { withConfigurationTable } from '@kairos/config';

const readme = new URL('../README.md', import.meta.url);
const before = readFileSync(readme, 'utf8');
const after = withConfigurationTable(before);
if (after !== before) writeFileSync(readme, after);
console.log(after === before ? 'README.md: configuration table already up to date' : 'README.md: configuration table rewritten');
