/**
 * `kairos queues` and `kairos queues set <name> [--max-running N|none] [--rate 100/1m|none]`: the
 * namespace's queues, their limits and what waits on them (by priority and fairness key), through the API (GET /v1/queues, PUT /v1/queues/:name) at
 * KAIROS_URL with KAIROS_API_KEY. A set changes only the limits it is given: the others stay as
 * they are, and `none` lifts one.
 */
import { table, type Output } from '../output.js';
import { ApiRequestError, apiRequest, refusalMessage } from './api-request.js';

interface Queue {
  name: string;
  maxRunning: number | null;
  rate: { max: number; per: string } | null;
  running: number;
  queued: number;
  held: number;
  queuedByPriority: { priority: number; queued: number }[];
  fairnessKeys: { key: string; queued: number }[];
  workers: number;
  updatedAt: string | null;
}

export interface QueuesOptions {
  maxRunning?: string;
  rate?: string;
  json: boolean;
}

const USAGE = 'kairos queues, or kairos queues set <name> [--max-running N|none] [--rate 100/1m|none]';

export async function queuesCommand(out: Output, args: readonly string[], opts: QueuesOptions, env: Record<string, string | undefined>): Promise<number> {
  const [sub, name, ...extra] = args;
  if (sub === undefined || sub === 'list') {
    if (name !== undefined) throw new ApiRequestError(`unexpected "${name}": ${USAGE}`);
    const answer = await apiRequest<{ items: Queue[] }>(env, 'GET', '/v1/queues', undefined);
    if (!answer.ok) throw new ApiRequestError(refusalMessage(answer));
    print(out, answer.body!.items, opts.json);
    return 0;
  }
  if (sub !== 'set') throw new ApiRequestError(`unknown queues command "${sub}": ${USAGE}`);
  if (name === undefined || extra.length > 0) throw new ApiRequestError(`queues set needs one queue name: ${USAGE}`);
  if (opts.maxRunning === undefined && opts.rate === undefined) throw new ApiRequestError(`queues set needs --max-running or --rate (or both): ${USAGE}`);
  const path = `/v1/queues/${encodeURIComponent(name)}`;
  const current = await apiRequest<Queue>(env, 'GET', path, undefined);
  if (!current.ok) throw new ApiRequestError(refusalMessage(current));
  const body = {
    maxRunning: opts.maxRunning === undefined ? current.body!.maxRunning : maxRunningOf(opts.maxRunning),
    rate: opts.rate === undefined ? current.body!.rate : rateOf(opts.rate),
  };
  const answer = await apiRequest<Queue>(env, 'PUT', path, body);
  if (!answer.ok) throw new ApiRequestError(refusalMessage(answer));
  if (opts.json) out.line(JSON.stringify(answer.body, null, 2));
  else print(out, [answer.body!], false);
  return 0;
}

function maxRunningOf(text: string): number | null {
  if (text === 'none') return null;
  if (!/^\d+$/.test(text)) throw new ApiRequestError(`--max-running must be a whole number of runs, or none to lift the limit; got "${text}"`);
  return Number(text);
}

/** `100/1m`: at most 100 starts per minute; `none` lifts the rate limit. */
function rateOf(text: string): { max: number; per: string } | null {
  if (text === 'none') return null;
  const match = /^(\d+)\/(\S+)$/.exec(text);
  if (!match) throw new ApiRequestError(`--rate must be starts per window, such as 100/1m, or none to lift the limit; got "${text}"`);
  return { max: Number(match[1]), per: match[2]! };
}

function print(out: Output, queues: readonly Queue[], json: boolean): void {
  if (json) {
    out.line(JSON.stringify(queues, null, 2));
    return;
  }
  if (queues.length === 0) {
    out.line('no queues: none has limits, active runs or live workers');
    return;
  }
  out.line(
    table(
      ['NAME', 'RUNNING/MAX', 'QUEUED', 'HELD', 'RATE', 'WORKERS'],
      queues.map((q) => [
        q.name,
        q.maxRunning === null ? String(q.running) : `${q.running}/${q.maxRunning}`,
        String(q.queued),
        String(q.held),
        q.rate === null ? '-' : `${q.rate.max}/${q.rate.per}`,
        String(q.workers),
      ]),
    ),
  );
  // Under the table, each queue with runs in state queued: how many per priority, and the keys with the most.
  for (const q of queues) {
    if (!q.queuedByPriority.some((p) => p.queued > 0)) continue;
    out.line('');
    out.line(`queued runs of ${q.name} by priority: ${q.queuedByPriority.map((p) => `p${p.priority} ${p.queued}`).join('  ')}`);
    if (q.fairnessKeys.length > 0) out.line(`  top fairness keys: ${q.fairnessKeys.map((k) => `${k.key} ${k.queued}`).join(', ')}`);
  }
}
