/** Where the CLI writes: stdout in real use, a buffer in tests. */
import { formatOptionalInstant } from '@kairos/domain';

export interface Output {
  line(text: string): void;
}

export const consoleOutput: Output = { line: (text) => process.stdout.write(`${text}\n`) };

/** Renders rows as aligned columns. */
export function table(headers: string[], rows: string[][]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const render = (cells: string[]): string => cells.map((c, i) => (c ?? '').padEnd(widths[i]!)).join('  ').trimEnd();
  return [render(headers), ...rows.map(render)].join('\n');
}

export const iso = (d: Date | null | undefined): string => formatOptionalInstant(d) ?? '-';
