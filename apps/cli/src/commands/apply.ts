/**
 * `kairos apply -f FILE... [--dry-run] [--prune] [--output json]`: a client of POST /v1/apply. It
 * reads YAML or JSON files (or every .yaml, .yml and .json file of a folder), which must all
 * declare one `source`, sends their calendars, schedules and sensors as one declaration to the
 * Kairos at KAIROS_URL with KAIROS_API_KEY, and prints the plan. Exit 0: nothing to change, or
 * applied; 2: a dry run found changes; 1: an error, which names the file, the schedule (or sensor,
 * or calendar) and the field.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { extname, join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import type { Output } from '../output.js';
import { apiRequest, refusalMessage } from './api-request.js';

/** Exit status of a dry run whose plan would change something. */
export const EXIT_CHANGES = 2;

interface PlanItem {
  kind: string;
  name: string;
  action: 'create' | 'update' | 'unchanged' | 'delete';
  changes: { field: string; from: unknown; to: unknown }[];
}

interface Declaration {
  file: string;
  source: string;
  schedules: unknown[];
  sensors: unknown[];
  calendars: unknown[];
}

/** A refusal the CLI words itself (a file it cannot read, a server it cannot reach). */
export class ApplyError extends Error {}

const DECLARATION_EXTENSIONS = new Set(['.yaml', '.yml', '.json']);

/** The files named, a folder standing for its declaration files in name order. */
function expand(paths: readonly string[]): string[] {
  return paths.flatMap((path) => {
    let isFolder: boolean;
    try {
      isFolder = statSync(path).isDirectory();
    } catch {
      throw new ApplyError(`${path}: no such file or folder`);
    }
    if (!isFolder) return [path];
    const files = readdirSync(path)
      .filter((name) => DECLARATION_EXTENSIONS.has(extname(name)))
      .sort()
      .map((name) => join(path, name));
    if (files.length === 0) throw new ApplyError(`${path}: the folder holds no .yaml, .yml or .json file`);
    return files;
  });
}

function readDeclaration(file: string): Declaration {
  const text = readFileSync(file, 'utf8');
  let doc: unknown;
  try {
    doc = extname(file) === '.json' ? JSON.parse(text) : parseYaml(text);
  } catch (error) {
    throw new ApplyError(`${file}: not valid ${extname(file) === '.json' ? 'JSON' : 'YAML'}: ${(error as Error).message.split('\n')[0]}`);
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) throw new ApplyError(`${file}: must hold an object with "source" and "schedules", "sensors" or "calendars"`);
  const { source, schedules, sensors, calendars, ...rest } = doc as Record<string, unknown>;
  const unknown = Object.keys(rest);
  if (unknown.length > 0) throw new ApplyError(`${file}: unknown field "${unknown[0]}"; a declaration holds source, schedules, sensors and calendars`);
  if (typeof source !== 'string' || source === '') throw new ApplyError(`${file}: source is required: who owns these schedules (a service or team name)`);
  if (schedules !== undefined && !Array.isArray(schedules)) throw new ApplyError(`${file}: schedules must be a list`);
  if (sensors !== undefined && !Array.isArray(sensors)) throw new ApplyError(`${file}: sensors must be a list`);
  if (calendars !== undefined && !Array.isArray(calendars)) throw new ApplyError(`${file}: calendars must be a list`);
  return {
    file,
    source,
    schedules: (schedules as unknown[] | undefined) ?? [],
    sensors: (sensors as unknown[] | undefined) ?? [],
    calendars: (calendars as unknown[] | undefined) ?? [],
  };
}

/** Where each item of the sent declaration's lists came from: its file and its index there. */
interface Origins {
  schedules: readonly { file: string; index: number }[];
  sensors: readonly { file: string; index: number }[];
  calendars: readonly { file: string; index: number }[];
}

/** `schedules[N]...` (or `sensors[N]...`, `calendars[N]...`) of the sent declaration, said of the file and the index it came from. */
function locate(text: string, origins: Origins): string {
  const match = /(schedules|sensors|calendars)\[(\d+)\]/.exec(text);
  const list = match?.[1] as keyof Origins | undefined;
  const origin = match ? origins[list!][Number(match[2])] : undefined;
  if (!origin) return text;
  return `${origin.file}: ${text.replace(new RegExp(`${list}\\[\\d+\\]`, 'g'), `${list}[${origin.index}]`)}`;
}

const show = (value: unknown): string => (value === null || value === undefined ? '(none)' : JSON.stringify(value));

function printPlan(out: Output, plan: PlanItem[], applied: boolean): void {
  const marks = { create: '+', update: '~', delete: '-', unchanged: '=' } as const;
  for (const item of plan) {
    if (item.action === 'unchanged') continue;
    out.line(`${marks[item.action]} ${item.action} ${item.kind} ${item.name}`);
    if (item.action === 'update') for (const c of item.changes) out.line(`    ${c.field}: ${show(c.from)} → ${show(c.to)}`);
  }
  const count = (action: PlanItem['action']) => plan.filter((p) => p.action === action).length;
  out.line(
    `${count('create')} to create, ${count('update')} to update, ${count('delete')} to delete, ${count('unchanged')} unchanged` +
      (applied ? ': applied' : ': dry run, nothing applied'),
  );
}

export async function applyCommand(
  out: Output,
  opts: { files: readonly string[]; dryRun: boolean; prune: boolean; output: string },
  env: Record<string, string | undefined>,
): Promise<number> {
  if (opts.files.length === 0) throw new ApplyError('apply needs the files to apply: kairos apply -f kairos.yaml [-f more.yaml | -f folder/]');
  if (opts.output !== 'text' && opts.output !== 'json') throw new ApplyError(`--output must be text or json, not "${opts.output}"`);
  const declarations = expand(opts.files).map(readDeclaration);
  const source = declarations[0]!.source;
  const other = declarations.find((d) => d.source !== source);
  if (other) throw new ApplyError(`${other.file} declares source "${other.source}" but ${declarations[0]!.file} declares "${source}": apply one source at a time`);
  const origins: Origins = {
    schedules: declarations.flatMap((d) => d.schedules.map((_, index) => ({ file: d.file, index }))),
    sensors: declarations.flatMap((d) => d.sensors.map((_, index) => ({ file: d.file, index }))),
    calendars: declarations.flatMap((d) => d.calendars.map((_, index) => ({ file: d.file, index }))),
  };
  const answer = await apiRequest<{ plan?: PlanItem[]; applied?: boolean }>(env, 'POST', '/v1/apply', {
    source,
    schedules: declarations.flatMap((d) => d.schedules),
    sensors: declarations.flatMap((d) => d.sensors),
    calendars: declarations.flatMap((d) => d.calendars),
    prune: opts.prune,
    dryRun: opts.dryRun,
  });
  const body = answer.body;
  if (!answer.ok || !body?.plan) {
    const message = body?.message ?? `Kairos answered ${answer.status}`;
    if (opts.output === 'json') out.line(JSON.stringify({ ...body, message: locate(message, origins), field: body?.field ? locate(body.field, origins) : null }, null, 2));
    throw new ApplyError(answer.status === 401 || answer.status === 403 ? refusalMessage(answer) : locate(message, origins));
  }
  if (opts.output === 'json') out.line(JSON.stringify(body, null, 2));
  else printPlan(out, body.plan, body.applied ?? false);
  return opts.dryRun && body.plan.some((p) => p.action !== 'unchanged') ? EXIT_CHANGES : 0;
}
