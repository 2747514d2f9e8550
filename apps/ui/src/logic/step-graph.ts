/**
 * A multi-step run's graph as the run page draws it: the steps in layers left to right (a step one
 * layer after the deepest of the steps it depends on), their boxes and the edges between them, and
 * how each step is told in words (duration, attempts, label, target).
 */
import type { RunStep, StepState, StepWhen } from '../data/wire/index.js';
import { durationBetween, formatElapsed } from './run-story.js';

export type { RunStep, Step as ScheduleStep } from '../data/wire/index.js';

/** What the layering reads of a step. */
export interface StepLink {
  name: string;
  dependsOn: readonly string[];
}

/**
 * The step names in layers: a root (no dependsOn) in layer 0, any other step in 1 + the deepest
 * layer of its upstream steps; within a layer, declaration order. An upstream name that names no
 * step, or an edge closing a cycle (the API refuses both), is ignored.
 */
export function stepLayers(steps: readonly StepLink[]): string[][] {
  const byName = new Map(steps.map((s) => [s.name, s]));
  const depth = new Map<string, number>();
  const open = new Set<string>();
  const depthOf = (name: string): number => {
    const known = depth.get(name);
    if (known !== undefined) return known;
    open.add(name);
    let d = 0;
    for (const upstream of byName.get(name)?.dependsOn ?? []) {
      if (!byName.has(upstream) || open.has(upstream)) continue;
      d = Math.max(d, 1 + depthOf(upstream));
    }
    open.delete(name);
    depth.set(name, d);
    return d;
  };
  const layers: string[][] = [];
  const placed = new Set<string>();
  for (const step of steps) {
    if (placed.has(step.name)) continue;
    placed.add(step.name);
    const d = depthOf(step.name);
    for (let i = layers.length; i <= d; i++) layers.push([]);
    layers[d]!.push(step.name);
  }
  return layers;
}

/** The size of a step's box and the room around it, in SVG pixels. */
export const GRAPH_BOX = { width: 200, height: 88, gapX: 64, gapY: 20, pad: 12 } as const;

export interface PlacedStep {
  name: string;
  layer: number;
  /** The top left corner of its box. */
  x: number;
  y: number;
}

export interface PlacedEdge {
  from: string;
  to: string;
  /** An SVG path from the right side of `from`'s box to the left side of `to`'s. */
  path: string;
}

export interface GraphLayout {
  width: number;
  height: number;
  /** In the layers' order, top to bottom within each. */
  steps: PlacedStep[];
  /** In declaration order of the downstream step, then of its dependsOn. */
  edges: PlacedEdge[];
}

/** The boxes, one column per layer (each column centred on the tallest), and the edges from each upstream step to its step. */
export function layoutSteps(steps: readonly StepLink[], box: typeof GRAPH_BOX = GRAPH_BOX): GraphLayout {
  const layers = stepLayers(steps);
  const rows = Math.max(0, ...layers.map((l) => l.length));
  const pitchX = box.width + box.gapX;
  const pitchY = box.height + box.gapY;
  const placed: PlacedStep[] = [];
  const at = new Map<string, PlacedStep>();
  layers.forEach((layer, l) => {
    const offset = ((rows - layer.length) * pitchY) / 2;
    layer.forEach((name, row) => {
      const step = { name, layer: l, x: box.pad + l * pitchX, y: box.pad + offset + row * pitchY };
      placed.push(step);
      at.set(name, step);
    });
  });
  const edges: PlacedEdge[] = [];
  const drawn = new Set<string>();
  for (const step of steps) {
    const to = at.get(step.name);
    for (const upstream of step.dependsOn) {
      const from = at.get(upstream);
      // Only edges that point rightwards: an unknown name or a cycle's closing edge is left out, as in the layering.
      if (!to || !from || from.layer >= to.layer || drawn.has(`${upstream}\n${step.name}`)) continue;
      drawn.add(`${upstream}\n${step.name}`);
      const x1 = from.x + box.width;
      const y1 = from.y + box.height / 2;
      const x2 = to.x;
      const y2 = to.y + box.height / 2;
      const bend = box.gapX / 2;
      edges.push({ from: upstream, to: step.name, path: `M ${x1} ${y1} C ${x1 + bend} ${y1}, ${x2 - bend} ${y2}, ${x2} ${y2}` });
    }
  }
  return {
    width: layers.length === 0 ? 0 : box.pad * 2 + layers.length * pitchX - box.gapX,
    height: rows === 0 ? 0 : box.pad * 2 + rows * pitchY - box.gapY,
    steps: placed,
    edges,
  };
}

/** How long a step took (`2.5 s`), or has been running (`4.0 s so far`), or `not started`. */
export function stepDuration(step: Pick<RunStep, 'startedAt' | 'finishedAt'>, nowMs: number): string {
  if (step.startedAt === null) return 'not started';
  if (step.finishedAt !== null) return durationBetween(step.startedAt, step.finishedAt) || '0 ms';
  return `${formatElapsed(Math.max(0, nowMs - Date.parse(step.startedAt))) || '0 ms'} so far`;
}

/** `attempt 2/3`. */
export function stepAttempts(step: Pick<RunStep, 'attempt' | 'maxAttempts'>): string {
  return `attempt ${step.attempt}/${step.maxAttempts}`;
}

/** What a screen reader says for a step's box: name, state, duration, attempts, what it waits for and when it runs. */
export function stepLabel(step: Pick<RunStep, 'name' | 'state' | 'dependsOn' | 'when' | 'attempt' | 'maxAttempts' | 'startedAt' | 'finishedAt'>, nowMs: number): string {
  const parts = [`Step ${step.name}`, step.state, stepDuration(step, nowMs), `attempt ${step.attempt} of ${step.maxAttempts}`];
  if (step.dependsOn.length > 0) parts.push(`after ${listInWords(step.dependsOn)}`);
  if (step.when === 'always') parts.push('runs always');
  return parts.join(', ');
}

/** `a`, `a and b`, `a, b and c`. */
export function listInWords(items: readonly string[]): string {
  if (items.length <= 1) return items.join('');
  return `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}`;
}

/** The text cut to `max` characters, the last one an ellipsis when it is cut. */
export function fitText(text: string, max: number): string {
  const chars = [...text];
  return chars.length <= max ? text : `${chars.slice(0, Math.max(0, max - 1)).join('')}…`;
}

/** A call target in words: `handler send-mail on queue default`, `POST https://…`; anything else as JSON. */
export function targetInWords(target: unknown): string {
  if (typeof target === 'object' && target !== null) {
    const t = target as Record<string, unknown>;
    if (t.type === 'handler' && typeof t.name === 'string') return `handler ${t.name}${typeof t.queue === 'string' ? ` on queue ${t.queue}` : ''}`;
    if (t.type === 'http' && typeof t.url === 'string') return `${typeof t.method === 'string' ? t.method : 'POST'} ${t.url}${typeof t.timeout === 'string' ? ` (timeout ${t.timeout})` : ''}`;
  }
  return JSON.stringify(target) ?? String(target);
}

/** `after a and b`, or `at the start of the run`. */
export function dependsOnInWords(dependsOn: readonly string[]): string {
  return dependsOn.length === 0 ? 'at the start of the run' : `after ${listInWords(dependsOn)}`;
}

/** `on_success` → "when every upstream step succeeded"; `always` → "always, whatever the upstream outcome". */
export function whenInWords(when: StepWhen): string {
  return when === 'always' ? 'always, whatever the upstream outcome' : 'when every upstream step succeeded';
}

/** What each state means for a step, beside the state's name. */
export const STEP_STATE_WORDS: Record<StepState, string> = {
  waiting: 'an upstream step has not ended yet',
  queued: 'ready, waiting for a worker',
  running: 'an attempt is running',
  succeeded: 'done',
  failed: 'an attempt failed; another will follow',
  dead: 'failed for good: no attempt left, or not retryable',
  skipped: 'never became runnable: an upstream step it needed did not succeed, or the run was cancelled first',
  cancelled: 'cancelled',
};
