/**
 * The configuration table of the documentation site (docs/operations/configuration.md), written
 * from the declaration when the site is built, so the two cannot drift apart.
 */
import { configVariables } from './config.js';

/** The markdown table of every declared variable, in declaration order. */
export function configurationTable(): string {
  const rows = configVariables().map((v) => `| \`${v.name}\` | ${v.shownDefault} | ${v.meaning} |`);
  return ['| variable | default | meaning |', '|---|---|---|', ...rows].join('\n');
}
