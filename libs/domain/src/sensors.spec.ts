import { describe, expect, it } from 'vitest';
import { MAX_SENSOR_RUNS_PER_EVALUATION, readSensorResult } from './sensors.js';

describe('readSensorResult', () => {
  it.each([
    ['runs and a cursor', { runs: [{ runKey: 'a.csv', payload: { file: 'a.csv' } }], cursor: 'a.csv' }, { runs: [{ runKey: 'a.csv', payload: { file: 'a.csv' } }], cursor: 'a.csv' }],
    ['no runs, a new cursor', { runs: [], cursor: { offset: 3 } }, { runs: [], cursor: { offset: 3 } }],
    ['runs without a cursor keep it', { runs: [{ runKey: 'k' }] }, { runs: [{ runKey: 'k', payload: null }] }],
    ['absent runs are none', { cursor: null }, { runs: [], cursor: null }],
    ['an empty object', {}, { runs: [] }],
  ])('reads %s', (_, value, expected) => {
    expect(readSensorResult(value)).toEqual({ kind: 'read', result: expected });
  });

  it.each([
    ['nothing', undefined, 'nothing'],
    ['null', null, 'nothing'],
    ['a string', 'done', 'a string'],
    ['a list', [{ runKey: 'a' }], 'a list'],
    ['an unknown field', { runs: [], next: 1 }, '"next"'],
    ['runs not a list', { runs: { runKey: 'a' } }, 'runs that are not a list'],
    ['a run not an object', { runs: ['a'] }, 'runs[0] that is not an object'],
    ['a run without a key', { runs: [{ payload: 1 }] }, 'runs[0].runKey'],
    ['an empty key', { runs: [{ runKey: '' }] }, 'runs[0].runKey'],
    ['a numeric key', { runs: [{ runKey: 7 }] }, 'runs[0].runKey'],
    ['a key too long', { runs: [{ runKey: 'x'.repeat(513) }] }, 'runs[0].runKey'],
    ['an unknown run field', { runs: [{ runKey: 'a', when: 1 }] }, 'runs[0] with "when"'],
    ['too many runs', { runs: Array.from({ length: MAX_SENSOR_RUNS_PER_EVALUATION + 1 }, (_, i) => ({ runKey: `k${i}` })) }, 'more than'],
  ])('refuses %s', (_, value, words) => {
    const reading = readSensorResult(value);
    expect(reading.kind).toBe('invalid');
    expect(reading.kind === 'invalid' && reading.reason).toContain(words);
  });
});
