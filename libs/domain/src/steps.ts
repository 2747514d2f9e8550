/**
 * Multi-step runs: a run may execute a graph of steps instead of one call. The graph is declared
 * with the schedule or run (`steps` instead of `target`), checked here (names, edges, no cycle) and
 * frozen into each run when it is created. Each step executes as a run of its own, a step run,
 * whose state the step's view derives its state from.
 */
import type { ConcurrencySpec } from './concurrency.js';
import type { FairnessSpec } from './priority.js';
import { ValidationError } from './errors.js';
import type { RunState } from './closed-sets.js';
import type { CallTarget, RetryPolicy } from './run-policy.js';

export const MAX_STEPS = 100;
export const STEP_NAME_PATTERN = /^[a-z0-9_-]{1,64}$/;
export const STEP_NAME_HINT = 'must be 1 to 64 lowercase letters, digits, "_" or "-"';

/** When a step runs: once every upstream step succeeded, or once every one ended whatever its outcome. */
export const STEP_WHENS = ['on_success', 'always'] as const;
export type StepWhen = (typeof STEP_WHENS)[number];

/**
 * The states a step is seen in. `waiting`: an upstream step has not ended; `failed`: an attempt
 * failed and another will follow; `skipped`: it never became runnable (an upstream step it needed
 * did not succeed, or the run was cancelled first).
 */
export const STEP_STATES = ['waiting', 'queued', 'running', 'succeeded', 'failed', 'dead', 'skipped', 'cancelled'] as const;
export type StepState = (typeof STEP_STATES)[number];

export interface StepSpec {
  name: string;
  dependsOn: string[];
  when: StepWhen;
  target: CallTarget;
  /** Null: the run's (the schedule's) retry policy. */
  retry: RetryPolicy | null;
  /** Null: the run's (the schedule's) timeout. */
  timeoutMs: number | null;
  /** Absent: none. Its key resolves over the graph's payload. */
  concurrency?: ConcurrencySpec;
  /** Absent: the graph's. */
  priority?: number;
  /** Absent: the graph's. Its key resolves over the graph's payload. */
  fairness?: FairnessSpec;
}

/** A graph of steps, carried where a run's target would be. */
export interface StepsTarget {
  type: 'steps';
  steps: StepSpec[];
}

/** What a run executes: one call, or a graph of steps, each executed as a run of its own. */
export type Target = CallTarget | StepsTarget;

export function isStepsTarget(target: Target): target is StepsTarget {
  return target.type === 'steps';
}

/** Every call a target makes, with the field that declares it: one for a call, one per step for a graph. */
export function callsOf(target: Target): { target: CallTarget; field: string }[] {
  return isStepsTarget(target) ? target.steps.map((step, i) => ({ target: step.target, field: `steps[${i}].target` })) : [{ target, field: 'target' }];
}

/**
 * Refuses a graph whose names repeat, whose edges name no step of the list (or the step itself),
 * or that has a cycle, naming the field at fault (`steps[2].dependsOn[0]`) or the cycle.
 */
export function checkStepGraph(steps: readonly Pick<StepSpec, 'name' | 'dependsOn'>[], field: string): void {
  const index = new Map<string, number>();
  for (const [i, step] of steps.entries()) {
    const earlier = index.get(step.name);
    if (earlier !== undefined) {
      throw new ValidationError('VALIDATION_FAILED', `${field}[${i}].name`, `${field}[${i}].name: "${step.name}" is already the name of ${field}[${earlier}]; step names are unique in a run`);
    }
    index.set(step.name, i);
  }
  for (const [i, step] of steps.entries()) {
    const seen = new Set<string>();
    for (const [j, upstream] of step.dependsOn.entries()) {
      const at = `${field}[${i}].dependsOn[${j}]`;
      if (upstream === step.name) throw new ValidationError('VALIDATION_FAILED', at, `${at}: step "${step.name}" cannot depend on itself`);
      if (!index.has(upstream)) {
        throw new ValidationError('VALIDATION_FAILED', at, `${at}: no step is named "${upstream}"; the steps are ${[...index.keys()].join(', ')}`);
      }
      if (seen.has(upstream)) throw new ValidationError('VALIDATION_FAILED', at, `${at}: "${upstream}" is listed twice`);
      seen.add(upstream);
    }
  }
  const cycle = findCycle(steps);
  if (cycle) throw new ValidationError('VALIDATION_FAILED', field, `${field}: cycle ${cycle.join(' -> ')}`);
}

/** A cycle of the graph in execution order, first step repeated at its end (`a -> b -> a`), or null. */
function findCycle(steps: readonly Pick<StepSpec, 'name' | 'dependsOn'>[]): string[] | null {
  const dependsOn = new Map(steps.map((s) => [s.name, s.dependsOn]));
  const state = new Map<string, 'open' | 'done'>();
  const path: string[] = [];
  const visit = (name: string): string[] | null => {
    if (state.get(name) === 'done') return null;
    if (state.get(name) === 'open') {
      // The path runs from downstream to upstream; read backwards it is the order of execution,
      // told from the step of the cycle declared first.
      const loop = path.slice(path.indexOf(name)).reverse();
      const first = loop.indexOf(steps.find((s) => loop.includes(s.name))!.name);
      const told = [...loop.slice(first), ...loop.slice(0, first)];
      return [...told, told[0]!];
    }
    state.set(name, 'open');
    path.push(name);
    for (const upstream of dependsOn.get(name) ?? []) {
      const found = visit(upstream);
      if (found) return found;
    }
    path.pop();
    state.set(name, 'done');
    return null;
  };
  for (const step of steps) {
    const found = visit(step.name);
    if (found) return found;
  }
  return null;
}

/** The steps in layers: each step one layer after the deepest of its upstream steps (the order a graph is drawn and told in). */
export function stepLayers(steps: readonly Pick<StepSpec, 'name' | 'dependsOn'>[]): string[][] {
  const depth = new Map<string, number>();
  const byName = new Map(steps.map((s) => [s.name, s]));
  const depthOf = (name: string): number => {
    const known = depth.get(name);
    if (known !== undefined) return known;
    const upstream = byName.get(name)?.dependsOn ?? [];
    const d = upstream.length === 0 ? 0 : 1 + Math.max(...upstream.map(depthOf));
    depth.set(name, d);
    return d;
  };
  const layers: string[][] = [];
  for (const step of steps) (layers[depthOf(step.name)] ??= []).push(step.name);
  return layers;
}

/** What a step's view reads of its step run. */
export interface StepRunState {
  state: RunState;
  attempt: number;
  /** Null while the step run is parked: it has never been runnable. */
  availableAt: Date | null;
}

/** The state of a step, read from its step run. */
export function stepStateOf(run: StepRunState): StepState {
  switch (run.state) {
    case 'queued':
      if (run.availableAt === null) return 'waiting';
      return run.attempt > 1 ? 'failed' : 'queued';
    case 'running':
    case 'succeeded':
    case 'dead':
      return run.state;
    // A step whose handler sleeps or waits for a signal is still at work.
    case 'sleeping':
    case 'waiting':
      return 'running';
    case 'failed':
      return 'dead';
    case 'cancelled':
      return run.availableAt === null ? 'skipped' : 'cancelled';
  }
}

/** A body gives exactly one of `target` (one call) and `steps` (a graph); null counts as absent. */
export function checkOneExecutable(body: Record<string, unknown>): void {
  const target = body['target'] !== undefined && body['target'] !== null;
  const steps = body['steps'] !== undefined && body['steps'] !== null;
  if (target && steps) {
    throw new ValidationError('VALIDATION_FAILED', 'steps', 'give either target (one call) or steps (a graph of steps), not both');
  }
  if (!target && !steps) {
    throw new ValidationError(
      'MISSING_FIELD',
      'target',
      'target is required: { "type": "handler", "name": "echo" } or { "type": "http", "url": "https://..." }; or give steps: [{ "name": "extract", "target": {...} }, ...]',
    );
  }
}

/**
 * The steps a graph run again keeps from its earlier run: those that succeeded there and all of
 * whose upstream steps are kept too. A step downstream of one that runs again runs again as well,
 * since its inputs may change.
 */
export function keptSteps(steps: readonly Pick<StepSpec, 'name' | 'dependsOn'>[], succeeded: ReadonlySet<string>): Set<string> {
  const kept = new Set<string>();
  for (const layer of stepLayers(steps)) {
    for (const name of layer) {
      const upstream = steps.find((s) => s.name === name)!.dependsOn;
      if (succeeded.has(name) && upstream.every((u) => kept.has(u))) kept.add(name);
    }
  }
  return kept;
}
