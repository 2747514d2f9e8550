/**
 * `kairos runs cancel|retry [--schedule NAME] [--state S,...] [--reason CODE] [--queue Q]
 * [--since T] [--dry-run] [--yes]`: a client of POST /v1/runs/bulk at KAIROS_URL with
 * KAIROS_API_KEY. It first asks for a dry run and prints how many runs the filter matches and a
 * sample of them; then, on a terminal, asks before acting; `--yes` acts without asking, and is
 * required when stdin is not a terminal.
 */
import { createInterface } from 'node:readline/promises';
import { parseDuration, parseInstant } from '@kairos/domain';
import { ConfigError } from '@kairos/config';
import type { Output } from '../output.js';
import { ApiRequestError, apiRequest, refusalMessage } from './api-request.js';

/** How the command asks before acting: whether stdin is a terminal, and the question put to it. */
export interface Prompt {
  isTTY: boolean;
  /** True when the answer is yes. */
  confirm(question: string): Promise<boolean>;
}

/** Asks on the process's terminal: stdin when it is one, the question written to stdout. */
export function terminalPrompt(): Prompt {
  return {
    isTTY: process.stdin.isTTY === true,
    confirm: async (question) => {
      const rl = createInterface({ input: process.stdin, output: process.stdout });
      try {
        return /^y(es)?$/i.test((await rl.question(question)).trim());
      } finally {
        rl.close();
      }
    },
  };
}

export interface RunsBulkOptions {
  /** The schedule's name (resolved through the API). */
  schedule?: string;
  /** Comma-separated run states. */
  state?: string;
  reason?: string;
  queue?: string;
  /** createdAfter: an instant, or a duration back from now (2h). */
  since?: string;
  dryRun: boolean;
  yes: boolean;
  json: boolean;
}

interface BulkResult {
  matched: number;
  acted: number;
  sample: string[];
}

const USAGE = 'use: kairos runs cancel|retry [--schedule NAME] [--state S,...] [--reason CODE] [--queue Q] [--since 2h|INSTANT] [--dry-run] [--yes]';

const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;

export async function runsBulkCommand(out: Output, args: string[], env: Record<string, string | undefined>, options: RunsBulkOptions, prompt: Prompt): Promise<number> {
  const [action, ...extra] = args;
  if ((action !== 'cancel' && action !== 'retry') || extra.length > 0) {
    out.line(USAGE);
    return 2;
  }
  try {
    const filter = await filterOf(env, options);
    if (Object.keys(filter).length === 0) {
      out.line(`kairos runs ${action} needs a filter: at least one of --schedule, --state, --reason, --queue, --since`);
      return 2;
    }
    const verb = action === 'cancel' ? 'cancel' : 'retry';
    const which = action === 'cancel' ? 'active' : 'failed, dead or cancelled';
    const dry = await bulk(env, { action, filter, dryRun: true });
    if (options.dryRun || dry.matched === 0) {
      if (options.json) out.line(JSON.stringify(dry, null, 2));
      else out.line(dry.matched === 0 ? `no ${which} run matches: nothing to ${verb}` : describe(`would ${verb}`, dry));
      return 0;
    }
    if (!options.json) out.line(describe(`would ${verb}`, dry));
    if (!options.yes) {
      if (!prompt.isTTY) {
        out.line(`kairos runs ${action}: refusing to ${verb} ${plural(dry.matched, 'run')} without confirmation (stdin is not a terminal); pass --yes to ${verb} them`);
        return 2;
      }
      if (!(await prompt.confirm(`${verb === 'cancel' ? 'Cancel' : 'Retry'} ${plural(dry.matched, 'run')}? [y/N] `))) {
        out.line(`nothing ${verb === 'cancel' ? 'cancelled' : 'retried'}`);
        return 1;
      }
    }
    const done = await bulk(env, { action, filter, dryRun: false });
    if (options.json) out.line(JSON.stringify(done, null, 2));
    else {
      const past = verb === 'cancel' ? 'cancelled' : 'retried';
      out.line(`${past} ${done.acted} of ${plural(done.matched, 'run')} matched${done.acted < done.matched ? ' (the others ended meanwhile)' : ''}`);
      for (const id of done.sample) out.line(`  ${id}`);
    }
    return 0;
  } catch (error) {
    if (error instanceof ApiRequestError || error instanceof ConfigError) {
      out.line(`kairos runs ${action}: ${error.message}`);
      return 1;
    }
    throw error;
  }
}

function describe(what: string, result: BulkResult): string {
  const more = result.matched > result.sample.length ? `\n  … and ${result.matched - result.sample.length} more` : '';
  return `${what} ${plural(result.matched, 'run')}:\n${result.sample.map((id) => `  ${id}`).join('\n')}${more}`;
}

async function bulk(env: Record<string, string | undefined>, body: unknown): Promise<BulkResult> {
  const answer = await apiRequest<BulkResult>(env, 'POST', '/v1/runs/bulk', body);
  if (!answer.ok) throw new ApiRequestError(refusalMessage(answer));
  return answer.body!;
}

/** The request's filter from the flags: the schedule found by name, --since made an instant. */
async function filterOf(env: Record<string, string | undefined>, options: RunsBulkOptions): Promise<Record<string, unknown>> {
  const filter: Record<string, unknown> = {};
  if (options.schedule !== undefined) filter.scheduleId = await scheduleIdOf(env, options.schedule);
  if (options.state !== undefined) filter.state = options.state.split(',').map((s) => s.trim()).filter((s) => s !== '');
  if (options.reason !== undefined) filter.reasonCode = options.reason;
  if (options.queue !== undefined) filter.queue = options.queue;
  if (options.since !== undefined) filter.createdAfter = sinceInstant(options.since);
  return filter;
}

async function scheduleIdOf(env: Record<string, string | undefined>, name: string): Promise<string> {
  const answer = await apiRequest<{ items: { id: string }[] }>(env, 'GET', `/v1/schedules?name=${encodeURIComponent(name)}&limit=1`, undefined);
  if (!answer.ok) throw new ApiRequestError(refusalMessage(answer));
  const found = answer.body!.items[0];
  if (!found) throw new ConfigError(`no schedule is named "${name}"`);
  return found.id;
}

/** --since: an ISO 8601 instant, or a duration back from now ("2h", "30m", "1d"). */
export function sinceInstant(since: string, nowMs = Date.now()): string {
  try {
    return new Date(parseInstant(since, '--since')).toISOString();
  } catch {
    try {
      return new Date(nowMs - parseDuration(since)).toISOString();
    } catch {
      throw new ConfigError(`--since must be an instant ("2026-12-01T09:00:00Z") or a duration back from now ("2h", "30m", "1d"); got ${JSON.stringify(since)}`);
    }
  }
}
