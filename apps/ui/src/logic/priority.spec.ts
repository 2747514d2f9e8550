import { describe, expect, it } from 'vitest';
import { fairnessInWords, fairnessKeyBars, fairnessKeyInWords, priorityInWords, prioritySegments, queuedByPriority } from './priority.js';

describe('priority and fairness in words', () => {
  it('says each priority with where it starts', () => {
    expect([1, 2, 3, 4, 5].map(priorityInWords)).toEqual([
      'priority 1 (first)',
      'priority 2 (before normal)',
      'priority 3 (normal)',
      'priority 4 (after normal)',
      'priority 5 (last)',
    ]);
  });

  it('says a fairness declaration and a resolved key', () => {
    expect(fairnessInWords({ key: 'tenant-{{payload.tenantId}}', weight: 2 })).toBe('key tenant-{{payload.tenantId}}, weight 2');
    expect(fairnessInWords(null)).toBe('none: its runs share the one key of runs without a key');
    expect(fairnessInWords(null, "the run's")).toBe("the run's");
    expect(fairnessKeyInWords('tenant-a')).toBe('tenant-a');
    expect(fairnessKeyInWords(null)).toMatch(/^none/);
  });
});

describe("a queue's queued runs by priority and fairness key", () => {
  it('reads the five priorities, or null from an API that does not send them', () => {
    expect(queuedByPriority({})).toBeNull();
    expect(queuedByPriority({ queuedByPriority: [{ priority: 2, queued: 4 }] })).toEqual([
      { priority: 1, queued: 0 },
      { priority: 2, queued: 4 },
      { priority: 3, queued: 0 },
      { priority: 4, queued: 0 },
      { priority: 5, queued: 0 },
    ]);
  });

  it('stacks the priorities with runs left to right, each as wide as its share', () => {
    const segments = prioritySegments(
      [
        { priority: 1, queued: 1 },
        { priority: 2, queued: 0 },
        { priority: 3, queued: 3 },
      ],
      200,
    );
    expect(segments.map((s) => [s.priority, s.x, s.width])).toEqual([
      [1, 0, 50],
      [3, 50, 150],
    ]);
    expect(segments[0]!.words).toBe('priority 1 (first): 1 queued');
    expect(prioritySegments([{ priority: 3, queued: 0 }], 200)).toEqual([]);
  });

  it('draws a bar per key with runs, most first, the largest full width, long keys cut', () => {
    const bars = fairnessKeyBars(
      [
        { key: 'tenant-a', queued: 2 },
        { key: 'tenant-b', queued: 4 },
        { key: 'empty', queued: 0 },
        { key: 'x'.repeat(40), queued: 1 },
      ],
      100,
    );
    expect(bars.map((b) => [b.key.slice(0, 8), b.width])).toEqual([
      ['tenant-b', 100],
      ['tenant-a', 50],
      ['xxxxxxxx', 25],
    ]);
    expect(bars[2]!.label).toHaveLength(28);
    expect(bars[2]!.label.endsWith('…')).toBe(true);
    expect(bars[0]!.words).toBe('fairness key tenant-b: 4 queued');
    expect(fairnessKeyBars(undefined, 100)).toEqual([]);
  });
});
