/** The README's configuration table, written from the declaration so the two cannot drift apart. */
import { configVariables } from './config.js';

export const CONFIG_TABLE_START = '<!-- configuration table: written by `npm run docs:config` from libs/config/src/config.ts -->';
export const CONFIG_TABLE_END = '<!-- end of configuration table -->';

/** The markdown table of every declared variable, in declaration order. */
export function configurationTable(): string {
  const rows = configVariables().map((v) => `| \`${v.name}\` | ${v.shownDefault} | ${v.meaning} |`);
  return ['| variable | default | meaning |', '|---|---|---|', ...rows].join('\n');
}

/** `readme` with the block between the markers replaced by the current table. */
export function withConfigurationTable(readme: string): string {
  const start = readme.indexOf(CONFIG_TABLE_START);
  const end = readme.indexOf(CONFIG_TABLE_END);
  if (start < 0 || end < start) throw new Error(`README.md needs the markers ${CONFIG_TABLE_START} and ${CONFIG_TABLE_END}`);
  return `${readme.slice(0, start + CONFIG_TABLE_START.length)}\n${configurationTable()}\n${readme.slice(end)}`;
}
