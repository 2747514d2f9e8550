import { describe, expect, it } from 'vitest';
import { ValidationError } from './errors.js';
import { checkOneExecutable, checkStepGraph, keptSteps, stepLayers, stepStateOf, type StepRunState, type StepState } from './steps.js';

const s = (name: string, ...dependsOn: string[]) => ({ name, dependsOn });
const ETL = [s('extract'), s('transform', 'extract'), s('load', 'transform'), s('audit', 'extract'), s('cleanup', 'load', 'audit')];

function refusal(run: () => void): { field: string | null; message: string } | null {
  try {
    run();
    return null;
  } catch (error) {
    if (!(error instanceof ValidationError)) throw error;
    return { field: error.field, message: error.message };
  }
}

describe('checkStepGraph', () => {
  it.each([
    ['the issue example', ETL, null],
    ['one step', [s('only')], null],
    ['an edge to a step declared later', [s('b', 'a'), s('a')], null],
    ['parallel roots joined', [s('a'), s('b'), s('c', 'a', 'b')], null],
    ['a repeated name', [s('a'), s('b'), s('a')], { field: 'steps[2].name', message: 'steps[2].name: "a" is already the name of steps[0]; step names are unique in a run' }],
    ['an unknown dependsOn', [s('a'), s('b', 'a', 'x')], { field: 'steps[1].dependsOn[1]', message: 'steps[1].dependsOn[1]: no step is named "x"; the steps are a, b' }],
    ['a step depending on itself', [s('a', 'a')], { field: 'steps[0].dependsOn[0]', message: 'steps[0].dependsOn[0]: step "a" cannot depend on itself' }],
    ['an upstream listed twice', [s('a'), s('b', 'a', 'a')], { field: 'steps[1].dependsOn[1]', message: 'steps[1].dependsOn[1]: "a" is listed twice' }],
    ['a two-step cycle', [s('extract', 'transform'), s('transform', 'extract')], { field: 'steps', message: 'steps: cycle extract -> transform -> extract' }],
    ['a cycle behind a root', [s('root'), s('a', 'root', 'c'), s('b', 'a'), s('c', 'b')], { field: 'steps', message: 'steps: cycle a -> b -> c -> a' }],
  ])('%s', (_name, steps, expected) => {
    expect(refusal(() => checkStepGraph(steps, 'steps'))).toEqual(expected);
  });
});

describe('stepLayers', () => {
  it.each([
    ['a chain', [s('a'), s('b', 'a'), s('c', 'b')], [['a'], ['b'], ['c']]],
    ['the issue example', ETL, [['extract'], ['transform', 'audit'], ['load'], ['cleanup']]],
    ['a diamond', [s('a'), s('b', 'a'), s('c', 'a'), s('d', 'b', 'c')], [['a'], ['b', 'c'], ['d']]],
    ['parallel roots', [s('a'), s('b'), s('c')], [['a', 'b', 'c']]],
    ['an edge to a later declaration', [s('b', 'a'), s('a')], [['a'], ['b']]],
  ])('%s', (_name, steps, layers) => {
    expect(stepLayers(steps)).toEqual(layers);
  });
});

describe('stepStateOf', () => {
  const at = new Date('2026-12-01T02:00:00Z');
  it.each<[string, StepRunState, StepState]>([
    ['parked: waiting for upstream steps', { state: 'queued', attempt: 1, availableAt: null }, 'waiting'],
    ['released, first attempt', { state: 'queued', attempt: 1, availableAt: at }, 'queued'],
    ['an attempt failed, the next one waits', { state: 'queued', attempt: 2, availableAt: at }, 'failed'],
    ['running', { state: 'running', attempt: 1, availableAt: at }, 'running'],
    ['succeeded', { state: 'succeeded', attempt: 1, availableAt: at }, 'succeeded'],
    ['dead', { state: 'dead', attempt: 3, availableAt: at }, 'dead'],
    ['a final failure', { state: 'failed', attempt: 1, availableAt: at }, 'dead'],
    ['cancelled once runnable', { state: 'cancelled', attempt: 1, availableAt: at }, 'cancelled'],
    ['cancelled before it was runnable: skipped', { state: 'cancelled', attempt: 1, availableAt: null }, 'skipped'],
  ])('%s', (_name, run, state) => {
    expect(stepStateOf(run)).toBe(state);
  });
});

describe('keptSteps', () => {
  it.each([
    ['transform died: its downstream runs again, audit is kept', ['extract', 'audit', 'cleanup'], ['extract', 'audit']],
    ['everything succeeded', ['extract', 'transform', 'load', 'audit', 'cleanup'], ['extract', 'transform', 'load', 'audit', 'cleanup']],
    ['the first step died', ['audit'], []],
    ['only the last step died', ['extract', 'transform', 'load', 'audit'], ['extract', 'transform', 'load', 'audit']],
  ])('%s', (_name, succeeded, kept) => {
    expect([...keptSteps(ETL, new Set(succeeded))].sort()).toEqual([...kept].sort());
  });
});

describe('checkOneExecutable', () => {
  it.each([
    ['a target', { target: {} }, null],
    ['steps', { steps: [] }, null],
    ['steps with a null target', { target: null, steps: [] }, null],
    ['both', { target: {}, steps: [] }, 'steps'],
    ['neither', {}, 'target'],
    ['both null', { target: null, steps: null }, 'target'],
  ])('%s', (_name, body, field) => {
    expect(refusal(() => checkOneExecutable(body))?.field ?? null).toBe(field);
  });
});
