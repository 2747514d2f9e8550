/**
 * The sources import one another without a circle: a module never reaches itself through the
 * relative imports of the server's apps, libraries and packages (type-only imports count too, as
 * they tie the files' meaning together all the same). Reported as the files of each circle. And no
 * hand-written source is longer than MAX_LINES: a longer one is split by area into a folder of
 * modules (tests beside the sources may run longer).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/build.js';

const IMPORT = /^\s*(?:import|export)\s[^'"]*?from\s+['"](\.[^'"]+)['"]/gm;

function sources(dir: string, pattern = /\.tsx?$/): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' || entry.name === 'dist' ? [] : sources(path, pattern);
    return pattern.test(entry.name) && !entry.name.endsWith('.spec.ts') ? [path] : [];
  });
}

/** The longest a hand-written source may be. */
const MAX_LINES = 520;

/** The files each source imports by a relative path. */
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of ['apps', 'libs', 'packages'].flatMap((top) => sources(join(ROOT, top)))) {
    const targets = [...readFileSync(file, 'utf8').matchAll(IMPORT)].flatMap(([, spec]) => {
      const base = normalize(join(dirname(file), spec!));
      const found = [base.replace(/\.js$/, '.ts'), base.replace(/\.js$/, '.tsx'), base].find((candidate) => existsSync(candidate));
      return found === undefined ? [] : [found];
    });
    graph.set(file, targets);
  }
  return graph;
}

/** The strongly connected components of more than one file (Tarjan). */
function circles(graph: Map<string, string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v)!, index.get(w)!));
      }
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      for (let w = stack.pop()!; ; w = stack.pop()!) {
        onStack.delete(w);
        component.push(relative(ROOT, w));
        if (w === v) break;
      }
      if (component.length > 1) found.push(component.sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

describe('the shape of the sources', () => {
  it('has no import circle', () => {
    const graph = importGraph();
    expect(graph.size).toBeGreaterThan(100);
    expect(circles(graph)).toEqual([]);
  });

  it(`keeps every hand-written source to ${MAX_LINES} lines`, () => {
    const files = ['apps', 'libs', 'packages', 'bench', 'scripts', 'test/support'].flatMap((top) => sources(join(ROOT, top), /\.(tsx?|mjs|js)$/));
    expect(files.length).toBeGreaterThan(100);
    const lines = (file: string): number => readFileSync(file, 'utf8').split('\n').length - 1;
    expect(files.filter((file) => lines(file) > MAX_LINES).map((file) => `${relative(ROOT, file)}: ${lines(file)} lines`)).toEqual([]);
  });
});
