/**
 * The documentation site's links. VitePress's build fails on a link to a page that does not exist,
 * but not on a link to a missing anchor or to a missing file that is not a page (an image linked
 * rather than shown): every relative link of docs/, the generated reference included, must reach a
 * page, an anchor on it, or a file. VitePress renders a code snippet whose file is missing as a
 * warning, so every `<<< @/...` import must name a file too (the examples the guides show).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { configurationTable } from '@kairos/config';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const DOCS = join(ROOT, 'docs');

/** VitePress's heading slugs (its markdown anchor plugin's slugify). */
function slugify(text: string): string {
  return text
    .normalize('NFKD')
    .replace(/[\u0300-\u036F]/g, '')
    // eslint-disable-next-line no-control-regex -- VitePress drops control characters from slugs
    .replace(/[\u0000-\u001f]/g, '')
    .replace(/[\s~`!@#$%^&*()\-_+=[\]{}|\\;:"'“”‘’<>,.?/]+/g, '-')
    .replace(/-{2,}/g, '-')
    .replace(/^-+|-+$/g, '')
    .replace(/^(\d)/, '_$1')
    .toLowerCase();
}

/** The pages of the site: every .md under docs/ but the fragments pages include (docs/.generated) and VitePress's own folder. */
function pages(dir = DOCS): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (name.startsWith('.') || name === 'node_modules') return [];
    if (statSync(path).isDirectory()) return pages(path);
    return name.endsWith('.md') ? [path] : [];
  });
}

/** A page's text with `<!--@include: path-->` fragments inlined, as VitePress renders it. */
function source(path: string): string {
  return readFileSync(path, 'utf8').replace(/<!--\s*@include:\s*(.+?)\s*-->/g, (_, included: string) => source(resolve(dirname(path), included)));
}

/** Markdown without fenced code blocks, where a bracket is text. */
const withoutFences = (text: string): string => text.replace(/^(`{3,}|~{3,}).*?^\1/gms, '');

/** The anchors a page has: its headings' slugs (a custom `{#id}` instead where given, repeats numbered) and `id="..."` attributes. */
function anchors(path: string): Set<string> {
  const text = withoutFences(source(path));
  const found = new Set<string>();
  const seen = new Map<string, number>();
  for (const [, heading] of text.matchAll(/^#{1,6}\s+(.+?)\s*$/gm)) {
    const custom = /\{#([^}]+)\}$/.exec(heading!);
    if (custom) {
      found.add(custom[1]!);
      continue;
    }
    const plain = heading!.replace(/\[([^\]]*)\]\([^)]*\)/g, '$1').replace(/[`*]/g, '');
    const slug = slugify(plain);
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    found.add(count === 0 ? slug : `${slug}-${count}`);
  }
  for (const [, id] of text.matchAll(/\bid="([^"]+)"/g)) found.add(id!);
  return found;
}

/** Every link and image target of a page outside code. */
function links(path: string): string[] {
  const text = withoutFences(source(path)).replace(/(`+)[^`]*?\1/g, '');
  return [...text.matchAll(/!?\[(?:[^\]]|\][^(])*?\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((m) => m[1]!);
}

/** The file a link names (a page without .md, a page's folder index, or a file), or null. */
function target(from: string, link: string): string | null {
  const base = link.startsWith('/') ? join(DOCS, link) : resolve(dirname(from), link);
  for (const candidate of [base, `${base}.md`, join(base, 'index.md')]) {
    if (existsSync(candidate) && statSync(candidate).isFile()) return candidate;
  }
  return null;
}

describe('the documentation site', () => {
  beforeAll(() => {
    // The generated reference (REST pages and the fragments pages include) is written from the build.
    const generated = spawnSync(process.execPath, [join(ROOT, 'scripts/docs-reference.mjs')], { cwd: ROOT, encoding: 'utf8' });
    expect(generated.status, generated.stderr).toBe(0);
  }, 180_000);

  it('links only to pages, anchors and files that exist', () => {
    const broken: string[] = [];
    const anchorsOf = new Map<string, Set<string>>();
    const all = pages();
    expect(all.length).toBeGreaterThan(20);
    for (const page of all) {
      for (const link of links(page)) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(link)) continue; // https:, mailto:: outside this site
        const [path, anchor] = link.split('#', 2) as [string, string | undefined];
        const file = path === '' ? page : target(page, path);
        const where = `${relative(DOCS, page)}: ${link}`;
        if (file === null) {
          broken.push(`${where} (no such page or file)`);
          continue;
        }
        if (anchor === undefined || !file.endsWith('.md')) continue;
        if (!anchorsOf.has(file)) anchorsOf.set(file, anchors(file));
        if (!anchorsOf.get(file)!.has(anchor)) broken.push(`${where} (no anchor #${anchor} in ${relative(DOCS, file)})`);
      }
    }
    expect(broken).toEqual([]);
  });

  it('imports only code snippets that exist', () => {
    const imports = pages().flatMap((page) =>
      [...source(page).matchAll(/^<<<\s+(\S+?)(?:\{[^}]*\})?(?:\s|$)/gm)].map((m) => ({ page, path: m[1]!.replace(/#.*$/, '') })),
    );
    expect(imports.map((i) => i.path)).toContain('@/../examples/worker/main.mjs');
    const missing = imports.filter(({ page, path }) => {
      const file = path.startsWith('@/') ? join(DOCS, path.slice(2)) : resolve(dirname(page), path);
      return !existsSync(file) || !statSync(file).isFile();
    });
    expect(missing.map(({ page, path }) => `${relative(DOCS, page)}: ${path}`)).toEqual([]);
  });

  it('shows the configuration table written from the declaration', () => {
    expect(source(join(DOCS, 'operations/configuration.md'))).toContain(configurationTable());
  });

  it('finds a missing anchor and a missing image', () => {
    // The checks above, shown to fail: a heading's slug is what VitePress makes of it.
    const runs = join(DOCS, 'runs.md');
    expect(anchors(runs)).toContain('bulk-cancel-and-retry');
    expect(anchors(runs)).not.toContain('bulk-cancel');
    expect(target(join(DOCS, 'dashboard.md'), './images/dashboard-overview.png')).not.toBeNull();
    expect(target(join(DOCS, 'dashboard.md'), './images/missing.png')).toBeNull();
    expect(slugify('`ctx.waitForEvent`'.replace(/`/g, ''))).toBe('ctx-waitforevent');
  });
});
