import { describe, expect, it } from 'vitest';
import {
  dependsOnInWords,
  fitText,
  GRAPH_BOX,
  layoutSteps,
  listInWords,
  stepAttempts,
  stepDuration,
  stepLabel,
  stepLayers,
  targetInWords,
  whenInWords,
  type RunStep,
  type StepLink,
} from './step-graph.js';

/** `b<a` is step b depending on a; `d<b,c` on b and c. */
const graph = (...specs: string[]): StepLink[] =>
  specs.map((spec) => {
    const [name, upstream] = spec.split('<') as [string, string | undefined];
    return { name, dependsOn: upstream ? upstream.split(',') : [] };
  });

describe('stepLayers', () => {
  it.each<[string, StepLink[], string[][]]>([
    ['a single step', graph('a'), [['a']]],
    ['a chain', graph('a', 'b<a', 'c<b'), [['a'], ['b'], ['c']]],
    ['a diamond', graph('a', 'b<a', 'c<a', 'd<b,c'), [['a'], ['b', 'c'], ['d']]],
    ['parallel roots, declaration order kept', graph('z', 'a', 'm'), [['z', 'a', 'm']]],
    ['parallel roots joined', graph('x', 'y', 'join<x,y'), [['x', 'y'], ['join']]],
    ['a step whose dependsOn is declared later', graph('load<transform', 'transform<extract', 'extract'), [['extract'], ['transform'], ['load']]],
    ['the deepest upstream decides', graph('a', 'b<a', 'c<b', 'd<a,c'), [['a'], ['b'], ['c'], ['d']]],
    ['a shortcut beside a chain', graph('a', 'b<a', 'c<a,b', 'e'), [['a', 'e'], ['b'], ['c']]],
    ['two independent chains', graph('a1', 'b1', 'a2<a1', 'b2<b1', 'b3<b2'), [['a1', 'b1'], ['a2', 'b2'], ['b3']]],
    ['an unknown upstream is ignored', graph('a<ghost', 'b<a'), [['a'], ['b']]],
    ['a cycle does not loop forever', graph('a<b', 'b<a', 'c<b'), [['b'], ['a', 'c']]],
    ['no steps', [], []],
  ])('%s', (_name, steps, layers) => {
    expect(stepLayers(steps)).toEqual(layers);
  });
});

describe('layoutSteps', () => {
  const { width: w, height: h, gapX, gapY, pad } = GRAPH_BOX;

  it('puts each layer in a column, centred on the tallest, and an edge from each upstream step to its step', () => {
    const layout = layoutSteps(graph('a', 'b<a', 'c<a', 'd<b,c'));
    expect(layout.width).toBe(pad * 2 + 3 * w + 2 * gapX);
    expect(layout.height).toBe(pad * 2 + 2 * h + gapY);
    expect(layout.steps.map((s) => [s.name, s.layer, s.x, s.y])).toEqual([
      ['a', 0, pad, pad + (h + gapY) / 2],
      ['b', 1, pad + w + gapX, pad],
      ['c', 1, pad + w + gapX, pad + h + gapY],
      ['d', 2, pad + 2 * (w + gapX), pad + (h + gapY) / 2],
    ]);
    expect(layout.edges.map((e) => `${e.from}→${e.to}`)).toEqual(['a→b', 'a→c', 'b→d', 'c→d']);
    const first = layout.edges[0]!.path;
    expect(first.startsWith(`M ${pad + w} ${pad + (h + gapY) / 2 + h / 2} `)).toBe(true);
    expect(first.endsWith(`${pad + w + gapX} ${pad + h / 2}`)).toBe(true);
  });

  it.each<[string, StepLink[], string[]]>([
    ['a step declared before its upstream', graph('b<a', 'a'), ['a→b']],
    ['an unknown upstream', graph('a<ghost'), []],
    ['a cycle keeps only its rightward edges', graph('a<b', 'b<a'), ['b→a']],
  ])('draws no edge it cannot point rightwards: %s', (_name, steps, edges) => {
    expect(layoutSteps(steps).edges.map((e) => `${e.from}→${e.to}`)).toEqual(edges);
  });

  it('is empty without steps', () => {
    expect(layoutSteps([])).toEqual({ width: 0, height: 0, steps: [], edges: [] });
  });
});

describe('stepDuration and stepAttempts', () => {
  const now = Date.parse('2026-12-01T09:01:00Z');
  it.each<[string | null, string | null, string]>([
    [null, null, 'not started'],
    ['2026-12-01T09:00:00Z', '2026-12-01T09:00:02.500Z', '2.5 s'],
    ['2026-12-01T09:00:00Z', '2026-12-01T09:00:00Z', '0 ms'],
    ['2026-12-01T09:00:30Z', null, '30.0 s so far'],
    ['2026-12-01T08:58:55Z', null, '2 min 5 s so far'],
    ['2026-12-01T09:01:05Z', null, '0 ms so far'],
  ])('%s to %s → %s', (startedAt, finishedAt, words) => {
    expect(stepDuration({ startedAt, finishedAt }, now)).toBe(words);
  });

  it.each([
    [0, 3, 'attempt 0/3'],
    [2, 5, 'attempt 2/5'],
  ])('%d of %d → %s', (attempt, maxAttempts, words) => {
    expect(stepAttempts({ attempt, maxAttempts })).toBe(words);
  });
});

describe('stepLabel', () => {
  const step = (extra: Partial<RunStep>): RunStep => ({
    name: 'load', dependsOn: [], when: 'on_success', state: 'waiting', attempt: 0, maxAttempts: 3, result: null, error: null,
    reasonCode: null, reasonText: null, startedAt: null, finishedAt: null, runId: '00000000-0000-0000-0000-000000000000', ...extra,
  });
  const now = Date.parse('2026-12-01T09:00:10Z');
  it.each<[Partial<RunStep>, string]>([
    [{}, 'Step load, waiting, not started, attempt 0 of 3'],
    [{ state: 'running', attempt: 1, startedAt: '2026-12-01T09:00:06Z', dependsOn: ['extract', 'transform'] }, 'Step load, running, 4.0 s so far, attempt 1 of 3, after extract and transform'],
    [{ name: 'notify', state: 'succeeded', attempt: 1, when: 'always', startedAt: '2026-12-01T09:00:00Z', finishedAt: '2026-12-01T09:00:00.850Z', dependsOn: ['load'] }, 'Step notify, succeeded, 850 ms, attempt 1 of 3, after load, runs always'],
  ])('%j → %s', (extra, label) => {
    expect(stepLabel(step(extra), now)).toBe(label);
  });
});

describe('words', () => {
  it.each<[string[], string]>([
    [[], ''],
    [['a'], 'a'],
    [['a', 'b'], 'a and b'],
    [['a', 'b', 'c'], 'a, b and c'],
  ])('listInWords %j → %s', (items, words) => {
    expect(listInWords(items)).toBe(words);
  });

  it.each<[string[], string]>([
    [[], 'at the start of the run'],
    [['extract', 'clean'], 'after extract and clean'],
  ])('dependsOnInWords %j → %s', (dependsOn, words) => {
    expect(dependsOnInWords(dependsOn)).toBe(words);
  });

  it.each([
    ['on_success', 'when every upstream step succeeded'],
    ['always', 'always, whatever the upstream outcome'],
  ] as const)('whenInWords %s → %s', (when, words) => {
    expect(whenInWords(when)).toBe(words);
  });

  it.each<[string, number, string]>([
    ['extract', 24, 'extract'],
    ['abcdef', 6, 'abcdef'],
    ['abcdefg', 6, 'abcde…'],
  ])('fitText %s to %d → %s', (text, max, fitted) => {
    expect(fitText(text, max)).toBe(fitted);
  });

  it.each<[unknown, string]>([
    [{ type: 'handler', name: 'send-mail', queue: 'default' }, 'handler send-mail on queue default'],
    [{ type: 'http', url: 'https://example.com/hook', method: 'PUT', headers: {}, timeout: '30s' }, 'PUT https://example.com/hook (timeout 30s)'],
    [{ type: 'other', x: 1 }, '{"type":"other","x":1}'],
    [null, 'null'],
  ])('targetInWords %j → %s', (target, words) => {
    expect(targetInWords(target)).toBe(words);
  });
});
