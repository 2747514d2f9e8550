/**
 * `kairos sensors [get|ticks|pause|resume|cursor|reset]`: a client of the sensor routes of the API
 * at KAIROS_URL with KAIROS_API_KEY, like `kairos signal`. Without a subcommand it lists the
 * sensors, newest first; `--json` (or `--output json`) prints what the API answered.
 */
import type { Output } from '../output.js';
import { table } from '../output.js';
import { ApiRequestError, apiRequest, refusalMessage } from './api-request.js';

/** The parts of a sensor and a tick the tables show. */
interface SensorTick {
  id: string;
  runId: string;
  state: string;
  requested: number;
  created: number;
  deduplicated: number;
  reasonCode: string | null;
  reason: string | null;
  startedAt: string;
  durationMs: number | null;
}

interface Sensor {
  id: string;
  name: string;
  every: string;
  target: { name: string; queue: string };
  paused: boolean;
  evaluating: boolean;
  cursor: unknown;
  cursorVersion: number;
  nextEvaluationAt: string | null;
  lastTick: SensorTick | null;
  source: string | null;
}

interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

export interface SensorsOptions {
  limit: number;
  json: boolean;
  /** --cursor of `reset`: the JSON to start from. */
  cursor?: string;
  forgetRunKeys: boolean;
}

const USAGE = 'use: kairos sensors [get|ticks|pause|resume <id> | cursor <id> <json> | reset <id> [--cursor <json>] [--forget-run-keys]]';

function parseJson(text: string, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new ApiRequestError(`${what} must be JSON: ${(error as Error).message}`);
  }
}

const state = (s: Sensor): string => (s.paused ? 'paused' : s.evaluating ? 'evaluating' : 'active');
const show = (value: unknown): string => (value === null || value === undefined ? '-' : JSON.stringify(value));
const clip = (text: string, width = 40): string => (text.length > width ? `${text.slice(0, width - 1)}…` : text);

function sensorsTable(items: readonly Sensor[]): string {
  return table(
    ['id', 'name', 'every', 'evaluator', 'state', 'next evaluation', 'cursor', 'last tick'],
    items.map((s) => [
      s.id,
      s.name,
      s.every,
      `${s.target.name}@${s.target.queue}`,
      state(s),
      s.nextEvaluationAt ?? '-',
      `v${s.cursorVersion} ${clip(show(s.cursor), 30)}`,
      s.lastTick ? `${s.lastTick.state} ${s.lastTick.startedAt}` : '-',
    ]),
  );
}

function ticksTable(items: readonly SensorTick[]): string {
  return table(
    ['started', 'state', 'requested', 'created', 'deduplicated', 'duration', 'evaluation run', 'reason'],
    items.map((t) => [
      t.startedAt,
      t.state,
      String(t.requested),
      String(t.created),
      String(t.deduplicated),
      t.durationMs === null ? '-' : `${t.durationMs}ms`,
      t.runId,
      t.reasonCode ? `${t.reasonCode}${t.reason ? `: ${clip(t.reason, 60)}` : ''}` : '-',
    ]),
  );
}

/** One sensor, field per line. */
function sensorLines(s: Sensor): string {
  return [
    `sensor ${s.name} (${s.id}): ${state(s)}`,
    `  every ${s.every}, evaluated by handler ${s.target.name} on queue ${s.target.queue}`,
    `  next evaluation ${s.nextEvaluationAt ?? '- (paused)'}`,
    `  cursor v${s.cursorVersion}: ${show(s.cursor)}`,
    `  last tick: ${s.lastTick ? `${s.lastTick.state} at ${s.lastTick.startedAt}, ${s.lastTick.created} of ${s.lastTick.requested} runs created` : '-'}`,
    ...(s.source ? [`  declared by source ${s.source}`] : []),
  ].join('\n');
}

export async function sensorsCommand(out: Output, args: readonly string[], env: Record<string, string | undefined>, opts: SensorsOptions): Promise<number> {
  const [action, id, text] = args;
  const call = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const answer = await apiRequest<T>(env, method, path, body);
    if (!answer.ok) throw new ApiRequestError(refusalMessage(answer));
    return answer.body as T;
  };
  const print = (value: unknown, text: string): void => out.line(opts.json ? JSON.stringify(value, null, 2) : text);
  if (action === undefined || action === 'list') {
    const page = await call<Page<Sensor>>('GET', `/v1/sensors?limit=${opts.limit}`);
    print(page.items, sensorsTable(page.items));
    return 0;
  }
  if (!['get', 'ticks', 'pause', 'resume', 'cursor', 'reset'].includes(action)) throw new ApiRequestError(USAGE);
  if (id === undefined) throw new ApiRequestError(`sensors ${action} needs a sensor id: ${USAGE}`);
  const path = `/v1/sensors/${encodeURIComponent(id)}`;
  switch (action) {
    case 'get': {
      const sensor = await call<Sensor>('GET', path);
      print(sensor, sensorLines(sensor));
      return 0;
    }
    case 'ticks': {
      const page = await call<Page<SensorTick>>('GET', `${path}/ticks?limit=${opts.limit}`);
      print(page.items, ticksTable(page.items));
      return 0;
    }
    case 'pause':
    case 'resume': {
      const sensor = await call<Sensor>('POST', `${path}/${action}`);
      print(sensor, `${action === 'pause' ? 'paused' : 'resumed'} sensor ${sensor.name} (${sensor.id})${action === 'resume' ? ': it is evaluated at once' : ''}`);
      return 0;
    }
    case 'cursor': {
      if (text === undefined) throw new ApiRequestError('sensors cursor needs the new cursor as JSON: kairos sensors cursor <id> <json>');
      const sensor = await call<Sensor>('POST', `${path}/cursor`, { cursor: parseJson(text, 'the cursor') });
      print(sensor, `moved the cursor of sensor ${sensor.name} to ${show(sensor.cursor)} (version ${sensor.cursorVersion}); an evaluation under way commits nothing`);
      return 0;
    }
    default: {
      const body = { cursor: opts.cursor === undefined ? null : parseJson(opts.cursor, '--cursor'), forgetRunKeys: opts.forgetRunKeys };
      const sensor = await call<Sensor>('POST', `${path}/reset`, body);
      print(
        sensor,
        `reset sensor ${sensor.name} to cursor ${show(sensor.cursor)} (version ${sensor.cursorVersion})${opts.forgetRunKeys ? '; its run keys were forgotten' : ''}`,
      );
      return 0;
    }
  }
}
