import { describe, expect, it } from 'vitest';
import { debouncedDue, flowKeyOf, rateLimitAdmits, throttledStart } from './flow-control.js';

describe('throttledStart', () => {
  const spec = { key: null, limit: 2, periodMs: 1_000 };
  it.each<[string, number[], number, number]>([
    ['nothing planned', [], 5_000, 5_000],
    ['fewer than the limit planned', [4_900], 5_000, 5_000],
    ['the limit planned long ago', [1_000, 2_000], 5_000, 5_000],
    ['the limit planned within the window', [4_500, 4_800], 5_000, 5_500],
    ['planned ahead already', [5_500, 5_600, 6_500, 6_600], 5_000, 7_500],
    ['unsorted', [4_800, 4_500], 5_000, 5_500],
  ])('%s', (_name, planned, now, expected) => {
    expect(throttledStart(spec, planned, now)).toBe(expected);
  });

  it('never plans more than the limit in any window of the period', () => {
    const planned: number[] = [];
    for (let i = 0; i < 50; i++) planned.push(throttledStart({ key: null, limit: 5, periodMs: 2_000 }, planned, 1_000 + i * 37));
    for (const start of planned) expect(planned.filter((p) => p >= start && p < start + 2_000).length).toBeLessThanOrEqual(5);
    expect(planned).toEqual([...planned].sort((a, b) => a - b));
  });
});

describe('rateLimitAdmits', () => {
  const spec = { key: null, limit: 2, periodMs: 1_000 };
  it.each<[string, number[], number, boolean]>([
    ['none made', [], 5_000, true],
    ['one made in the window', [4_500], 5_000, true],
    ['the limit made in the window', [4_500, 4_999], 5_000, false],
    ['the limit made, one just out of the window', [4_000, 4_999], 5_000, true],
  ])('%s', (_name, made, now, expected) => {
    expect(rateLimitAdmits(spec, made, now)).toBe(expected);
  });
});

describe('debouncedDue', () => {
  it.each<[string, number | null, number, number, number]>([
    ['the quiet period after the event', null, 0, 10_000, 40_000],
    ['capped at maxWait after the first', 35_000, 0, 10_000, 35_000],
    ['the quiet period when it ends first', 60_000, 0, 10_000, 40_000],
  ])('%s', (_name, maxWaitMs, openedAt, now, expected) => {
    expect(debouncedDue({ key: null, periodMs: 30_000, maxWaitMs }, openedAt, now)).toBe(expected);
  });
});

describe('flowKeyOf', () => {
  const payload = { team: 'a', event: { id: 'e', name: 'n', data: { account: 42, nested: { x: 'y' } }, receivedAt: 'r' } };
  it.each<[string, string | null, string | null]>([
    ['no key: one for the schedule', null, ''],
    ['from the event', 'acct-{{event.data.account}}', 'acct-42'],
    ['from the payload and the event', '{{payload.team}}/{{event.data.nested.x}}', 'a/y'],
    ['a path the event lacks', '{{event.data.missing}}', null],
    ['an object', '{{event.data.nested}}', null],
  ])('%s', (_name, template, expected) => {
    expect(flowKeyOf(template, payload)).toBe(expected);
  });
});
