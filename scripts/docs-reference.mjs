// The documentation site's generated reference, written before VitePress builds or serves docs/
// (`npm run docs`, `npm run docs:build`): the REST API from the OpenAPI document the server serves at
// /docs/openapi.json, the GraphQL schema /graphql serves, the reason codes, the configuration
// table and the command line's usage. Everything is read from the server build in dist/ (built first when it is older than its
// sources, as `npm start` does), and nothing written here is committed (.gitignore):
//   docs/reference/rest/<tag>.md   one page per tag of the OpenAPI document, an anchor per operation
//   docs/reference/rest/schemas.md every component schema, an anchor per schema
//   docs/.generated/*              fragments the hand-written pages include, and the REST sidebar
import 'reflect-metadata';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { isServerStale } from './build-state.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const restDir = join(root, 'docs/reference/rest');
const fragmentsDir = join(root, 'docs/.generated');
const started = performance.now();

if (isServerStale(root)) {
  console.log('docs: the server build is older than its sources; building it first');
  const built = spawnSync('npm', ['run', '--silent', 'build:server'], { cwd: root, stdio: 'inherit' });
  if (built.status !== 0) process.exit(built.status ?? 1);
}

const fromDist = (path) => import(pathToFileURL(join(root, 'dist', path)).href);

/** Writes `text` to `path` unless it already holds it, so the dev server reloads only what changed. */
function write(path, text) {
  mkdirSync(dirname(path), { recursive: true });
  let before = null;
  try {
    before = readFileSync(path, 'utf8');
  } catch {
    // a new file
  }
  if (before !== text) writeFileSync(path, text);
}

// ---------------------------------------------------------------------------------------------
// Markdown helpers. VitePress compiles every page as a Vue template: outside code, `<` would open
// an element and `{{` an interpolation, so free text from the document is escaped (inline code is
// made v-pre by the site's config).

/** Free text (a description) as inline markdown: code spans kept, `<`, `>` and `{{` escaped elsewhere. */
function prose(text) {
  if (!text) return '';
  return String(text)
    .split(/(`[^`]*`)/)
    .map((part, i) => (i % 2 === 1 ? part : part.replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/\{\{/g, '&#123;&#123;')))
    .join('');
}

/** Text for a table cell: one line, pipes escaped. */
function cell(text) {
  return prose(text).replace(/\r?\n+/g, ' ').replace(/\|/g, '\\|');
}

/** An inline code span holding `text`, whatever backticks it contains. */
function code(text) {
  const s = String(text);
  const ticks = '`'.repeat(Math.max(0, ...[...s.matchAll(/`+/g)].map((m) => m[0].length)) + 1);
  return ticks.length > 1 || s.startsWith(' ') || s.endsWith(' ') ? `${ticks} ${s} ${ticks}` : `\`${s}\``;
}

const fence = (lang, body) => `\`\`\`${lang}\n${body.replace(/\n$/, '')}\n\`\`\``;

const titleOf = (tag) => tag.charAt(0).toUpperCase() + tag.slice(1).replace(/-/g, ' ');

// ---------------------------------------------------------------------------------------------
// The REST reference.

const { OPENAPI_DOCUMENT: doc } = await fromDist('apps/api/src/api.openapi.js');
const schemas = doc.components.schemas;

const refName = (ref) => ref.split('/').pop();
const resolve = (node, kind) => (node?.$ref ? doc.components[kind][refName(node.$ref)] : node);

/** How a schema reads in a table: a link for a component, `a or b` for a union, `array of ...`. */
function typeText(schema, schemasPage) {
  if (!schema || Object.keys(schema).filter((k) => !['description', 'examples', 'title'].includes(k)).length === 0) return 'any JSON';
  if (schema.$ref) {
    const name = refName(schema.$ref);
    return `[${name}](${schemasPage ? '' : './schemas'}#${name})`;
  }
  const union = schema.oneOf ?? schema.anyOf;
  if (union) return [...new Set(union.map((s) => typeText(s, schemasPage)))].join(' or ');
  if (schema.allOf) return schema.allOf.map((s) => typeText(s, schemasPage)).join(' and ');
  if (schema.const !== undefined) return code(JSON.stringify(schema.const));
  if (schema.enum) return schema.enum.map((v) => code(JSON.stringify(v))).join(', ');
  const types = Array.isArray(schema.type) ? schema.type : [schema.type ?? (schema.properties ? 'object' : undefined)];
  return types
    .map((type) => {
      if (type === 'array') return `array of ${typeText(schema.items, schemasPage)}`;
      if (type === 'object' && schema.additionalProperties && typeof schema.additionalProperties === 'object')
        return `object of ${typeText(schema.additionalProperties, schemasPage)}`;
      if (type === 'string' && schema.format) return `string (${schema.format})`;
      return type ?? 'any JSON';
    })
    .join(' or ');
}

/** The constraints a schema states beside its type, in words. */
function constraints(schema) {
  if (!schema) return [];
  const inner = (schema.anyOf ?? schema.oneOf)?.filter((s) => s.type !== 'null');
  if (inner?.length === 1 && !inner[0].$ref) return constraints(inner[0]);
  const out = [];
  const range = (min, max, unit) => {
    const units = (n) => (unit && n === 1 ? unit.replace(/s$/, '') : unit);
    if (min !== undefined && max !== undefined) out.push(`${min} to ${max}${units(max)}`);
    else if (min !== undefined) out.push(`at least ${min}${units(min)}`);
    else if (max !== undefined) out.push(`at most ${max}${units(max)}`);
  };
  range(schema.minimum ?? schema.exclusiveMinimum, schema.maximum, '');
  range(schema.minLength, schema.maxLength, ' characters');
  range(schema.minItems, schema.maxItems, ' items');
  range(schema.minProperties, schema.maxProperties, ' entries');
  if (schema.pattern && schema.format === undefined) out.push(`pattern ${code(schema.pattern)}`);
  if (schema.default !== undefined) out.push(`default ${code(JSON.stringify(schema.default))}`);
  if (schema.examples?.length) out.push(`e.g. ${schema.examples.map((e) => code(JSON.stringify(e))).join(', ')}`);
  return out;
}

/** A description followed by the constraints, as one cell: "Page size. 1 to 500; default `50`." */
function notesCell(description, notes) {
  const text = cell(description ?? '');
  if (notes.length === 0) return text;
  const rest = notes.map(cell).join('; ');
  const sentence = `${rest.charAt(0).toUpperCase()}${rest.slice(1)}.`;
  return text ? `${/[.:!?]$/.test(text) ? text : `${text}.`} ${sentence}` : sentence;
}

/** A property's description: its own, else that of the one non-null member of its union. */
function descriptionOf(schema) {
  if (schema?.description) return schema.description;
  const inner = (schema?.anyOf ?? schema?.oneOf)?.filter((s) => s.type !== 'null');
  return inner?.length === 1 ? inner[0].description ?? '' : '';
}

/** The inline object a property holds (not a component), for its fields to be listed under it. */
function inlineObject(schema) {
  if (!schema || schema.$ref) return null;
  if (schema.properties) return schema;
  const inner = (schema.anyOf ?? schema.oneOf)?.filter((s) => s.type !== 'null');
  return inner?.length === 1 && inner[0].properties ? inner[0] : null;
}

/** Table rows for an object's properties; inline objects add rows `parent.child`. */
function fieldRows(schema, schemasPage, prefix = '') {
  const required = new Set(schema.required ?? []);
  const rows = [];
  for (const [name, property] of Object.entries(schema.properties ?? {})) {
    const path = `${prefix}${name}`;
    rows.push(`| ${code(path)} | ${cell(typeText(property, schemasPage))} | ${required.has(name) ? 'yes' : ''} | ${notesCell(descriptionOf(property), constraints(property))} |`);
    const nested = inlineObject(property);
    if (nested) rows.push(...fieldRows(nested, schemasPage, `${path}.`));
  }
  return rows;
}

function fieldTable(schema, schemasPage) {
  const rows = fieldRows(schema, schemasPage);
  if (rows.length === 0) return '';
  return ['| field | type | required | description |', '|---|---|---|---|', ...rows].join('\n');
}

/** A component schema's section on the schemas page. */
function schemaSection(name, schema) {
  const out = [`## ${name} {#${name}}`, ''];
  if (schema.description) out.push(prose(schema.description), '');
  const union = schema.oneOf ?? schema.anyOf;
  if (schema.properties) {
    out.push(fieldTable(schema, true), '');
    if (schema.additionalProperties === false) out.push('Other fields are refused.', '');
  } else if (schema.enum) {
    out.push(`One of: ${schema.enum.map((v) => code(JSON.stringify(v))).join(', ')}.`, '');
  } else if (union) {
    out.push(`One of: ${union.map((s) => typeText(s, true)).join(', ')}.`, '');
  } else {
    const notes = constraints(schema);
    out.push(`Type: ${typeText(schema, true)}${notes.length ? `; ${notes.join('; ')}` : ''}.`, '');
  }
  return out.join('\n');
}

function parameterTable(parameters) {
  const rows = parameters.map((p) => {
    const parameter = resolve(p, 'parameters');
    return `| ${code(parameter.name)} | ${parameter.in} | ${cell(typeText(parameter.schema, false))} | ${parameter.required ? 'yes' : ''} | ${notesCell(parameter.description, constraints(parameter.schema))} |`;
  });
  return ['| name | in | type | required | description |', '|---|---|---|---|---|', ...rows].join('\n');
}

function responseTable(responses) {
  const rows = Object.entries(responses).map(([status, r]) => {
    const response = resolve(r, 'responses');
    const bodies = Object.entries(response.content ?? {}).map(([type, media]) =>
      type === 'application/json' ? typeText(media.schema, false) : `${code(type)}${media.schema?.description ? `: ${prose(media.schema.description)}` : ''}`,
    );
    return `| ${status} | ${cell(response.description)} | ${cell(bodies.join('; '))} |`;
  });
  return ['| status | meaning | body |', '|---|---|---|', ...rows].join('\n');
}

function operationSection(method, path, operation) {
  const out = [`## ${code(`${method.toUpperCase()} ${path}`)} {#${operation.operationId}}`, '', `**${prose(operation.summary)}**`, ''];
  if (operation.description) out.push(prose(operation.description), '');
  if (operation.parameters?.length) out.push('**Parameters**', '', parameterTable(operation.parameters), '');
  const body = operation.requestBody?.content?.['application/json'];
  if (body) {
    out.push('**Request body**', '');
    const named = body.schema.$ref ? refName(body.schema.$ref) : null;
    const schema = resolve(body.schema, 'schemas');
    out.push(`${operation.requestBody.required ? 'Required' : 'Optional'}, \`application/json\`: ${typeText(body.schema, false)}.`, '');
    if (schema.description && named) out.push(prose(schema.description), '');
    if (schema.properties) out.push(fieldTable(schema, false), '');
    else if (schema.oneOf ?? schema.anyOf) out.push(`One of: ${(schema.oneOf ?? schema.anyOf).map((s) => typeText(s, false)).join(', ')}.`, '');
    for (const [key, example] of Object.entries(body.examples ?? {})) {
      out.push(`Example: ${prose(example.summary ?? key)}`, '', fence('json', JSON.stringify(example.value, null, 2)), '');
    }
  }
  out.push('**Responses**', '', responseTable(operation.responses), '');
  return out.join('\n');
}

const METHODS = ['get', 'put', 'post', 'patch', 'delete'];
const operationsByTag = new Map(doc.tags.map((t) => [t.name, []]));
for (const [path, item] of Object.entries(doc.paths)) {
  for (const method of METHODS) {
    const operation = item[method];
    if (!operation) continue;
    const tag = operation.tags?.[0] ?? 'other';
    if (!operationsByTag.has(tag)) operationsByTag.set(tag, []);
    operationsByTag.get(tag).push([method, path, operation]);
  }
}

const tagDescription = new Map(doc.tags.map((t) => [t.name, t.description]));
const pages = [];
for (const [tag, operations] of operationsByTag) {
  if (operations.length === 0) continue;
  const title = titleOf(tag);
  const lines = [
    '---',
    `title: "REST: ${title}"`,
    '---',
    '',
    `# ${title}`,
    '',
    `${prose(tagDescription.get(tag) ?? '')} Generated from the OpenAPI document the server serves at \`/docs/openapi.json\`; the [REST API](../rest-api) page says how requests, keys, pages and errors work.`,
    '',
    '| operation | what |',
    '|---|---|',
    ...operations.map(([method, path, operation]) => `| [${code(`${method.toUpperCase()} ${path}`)}](#${operation.operationId}) | ${cell(operation.summary)} |`),
    '',
    ...operations.map(([method, path, operation]) => operationSection(method, path, operation)),
  ];
  pages.push({ file: `${tag}.md`, title, text: `${lines.join('\n').trimEnd()}\n` });
}
pages.push({
  file: 'schemas.md',
  title: 'Schemas',
  text: `${[
    '---',
    'title: "REST: Schemas"',
    'outline: false',
    '---',
    '',
    '# Schemas',
    '',
    'Every request and response shape of the REST API (`components.schemas` of the OpenAPI document), in the order the document declares them. A field marked required must be sent in a request and is always present in a response. What each reason code means is in [Reason codes](../reason-codes).',
    '',
    Object.keys(schemas)
      .map((name) => `[${name}](#${name})`)
      .join(' · '),
    '',
    ...Object.entries(schemas).map(([name, schema]) => schemaSection(name, schema)),
  ]
    .join('\n')
    .trimEnd()}\n`,
});

mkdirSync(restDir, { recursive: true });
for (const file of readdirSync(restDir)) if (!pages.some((p) => p.file === file)) rmSync(join(restDir, file), { recursive: true, force: true });
for (const page of pages) write(join(restDir, page.file), page.text);
write(join(fragmentsDir, 'rest-sidebar.json'), `${JSON.stringify(pages.map((p) => ({ text: p.title, link: `/reference/rest/${p.file.replace(/\.md$/, '')}` })), null, 2)}\n`);
// The document's description after its opening paragraph (which introduces Kairos): its conventions.
const descriptionParagraphs = doc.info.description.split(/\n\s*\n/);
write(join(fragmentsDir, 'rest-conventions.md'), `${prose((descriptionParagraphs.length > 1 ? descriptionParagraphs.slice(1) : descriptionParagraphs).join('\n\n'))}\n`);
write(
  join(fragmentsDir, 'rest-areas.md'),
  `${['| area | what |', '|---|---|', ...pages.filter((p) => p.file !== 'schemas.md').map((p) => `| [${p.title}](./rest/${p.file.replace(/\.md$/, '')}) | ${cell(tagDescription.get(p.file.replace(/\.md$/, '')) ?? '')} |`), '| [Schemas](./rest/schemas) | every request and response shape |'].join('\n')}\n`,
);

// ---------------------------------------------------------------------------------------------
// The GraphQL schema: built from the API's resolvers by the schema factory GraphQLModule itself
// uses, printed sorted as the server serves it (sortSchema).

const apiRoot = join(root, 'dist/apps/api/src');
await import(pathToFileURL(join(apiRoot, 'api.module.js')).href);
const { NestFactory } = await import('@nestjs/core');
const { GraphQLSchemaBuilderModule, GraphQLSchemaFactory } = await import('@nestjs/graphql');
const { lexicographicSortSchema, printSchema } = await import('graphql');
const resolvers = [];
for (const file of readdirSync(apiRoot, { recursive: true }).filter((f) => f.endsWith('.resolver.js')).sort()) {
  for (const value of Object.values(await import(pathToFileURL(join(apiRoot, file)).href))) {
    if (typeof value === 'function' && Reflect.hasMetadata('graphql:resolver_type', value)) resolvers.push(value);
  }
}
const context = await NestFactory.createApplicationContext(GraphQLSchemaBuilderModule, { logger: false });
const schema = await context.get(GraphQLSchemaFactory).create(resolvers);
await context.close();
write(join(fragmentsDir, 'graphql-schema.md'), `${fence('graphql', printSchema(lexicographicSortSchema(schema)))}\n`);

// ---------------------------------------------------------------------------------------------
// The reason codes (libs/domain/src/reason-codes.ts, grouped by its comments) and the configuration
// table (libs/config/src/config-table.ts: the one place the table is written from the declaration).

const { REASON_CODES } = await fromDist('libs/domain/src/reason-codes.js');
const groups = [];
for (const line of readFileSync(join(root, 'libs/domain/src/reason-codes.ts'), 'utf8').split('\n')) {
  const comment = /^\s*\/\/\s*(.+?)\.?\s*$/.exec(line);
  const entry = /^\s*([A-Z][A-Z0-9_]+):/.exec(line);
  if (comment) groups.push({ title: comment[1], codes: [] });
  else if (entry && entry[1] in REASON_CODES) (groups.at(-1) ?? groups[groups.push({ title: 'Reason codes', codes: [] }) - 1]).codes.push(entry[1]);
}
const listed = new Set(groups.flatMap((g) => g.codes));
const unlisted = Object.keys(REASON_CODES).filter((c) => !listed.has(c));
if (unlisted.length) groups.push({ title: 'Other', codes: unlisted });
write(
  join(fragmentsDir, 'reason-codes.md'),
  `${groups
    .filter((g) => g.codes.length)
    .map((g) => [`## ${g.title}`, '', '| code | meaning |', '|---|---|', ...g.codes.map((c) => `| <span id="${c}">${code(c)}</span> | ${cell(REASON_CODES[c])} |`)].join('\n'))
    .join('\n\n')}\n`,
);

const { configurationTable } = await fromDist('libs/config/src/config-table.js');
write(join(fragmentsDir, 'configuration.md'), `${configurationTable()}\n`);

// ---------------------------------------------------------------------------------------------
// The command line's own usage text, as `kairos --help` prints it (it needs no database).

const usage = spawnSync(process.execPath, [join(root, 'dist/apps/cli/src/main.js'), '--help'], { cwd: root, encoding: 'utf8' });
if (usage.status !== 0) throw new Error(`kairos --help exited ${usage.status}: ${usage.stderr}`);
write(join(fragmentsDir, 'cli-usage.md'), `${fence('text', usage.stdout)}\n`);

const operations = [...operationsByTag.values()].reduce((n, ops) => n + ops.length, 0);
console.log(
  `docs: reference written (${operations} REST operations on ${pages.length - 1} pages, ${Object.keys(schemas).length} schemas, ${resolvers.length} GraphQL resolvers, ${Object.keys(REASON_CODES).length} reason codes) in ${Math.round(performance.now() - started)} ms`,
);
