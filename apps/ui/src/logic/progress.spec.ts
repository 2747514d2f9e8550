import { describe, expect, it } from 'vitest';
import { progressShape } from './progress.js';

describe('a run progress as a page draws it', () => {
  it('is a bar for counts, percents and fractions', () => {
    expect(progressShape({ done: 3, total: 12 })).toMatchObject({ kind: 'bar', fraction: 0.25, label: '3 of 12 (25%)' });
    expect(progressShape({ percent: 40, stage: 'upload' })).toMatchObject({ kind: 'bar', fraction: 0.4, label: '40%' });
    expect(progressShape({ fraction: 0.5 })).toMatchObject({ kind: 'bar', fraction: 0.5, label: '50%' });
    expect(progressShape(0.75)).toMatchObject({ kind: 'bar', fraction: 0.75 });
    expect(progressShape(42)).toMatchObject({ kind: 'bar', fraction: 0.42, label: '42%' });
    expect(progressShape({ done: 14, total: 10 })).toMatchObject({ kind: 'bar', fraction: 1 });
  });

  it('is the JSON otherwise, and nothing when none was reported', () => {
    expect(progressShape({ stage: 'indexing' })).toEqual({ kind: 'json', json: '{\n  "stage": "indexing"\n}' });
    expect(progressShape({ done: 3, total: 0 }).kind).toBe('json');
    expect(progressShape('warming up')).toEqual({ kind: 'json', json: '"warming up"' });
    expect(progressShape(null)).toEqual({ kind: 'none' });
  });
});
