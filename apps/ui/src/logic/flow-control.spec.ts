import { describe, expect, it } from 'vitest';
import { flowControlLine, flowControlsInWords } from './flow-control.js';

const none = { debounce: null, throttle: null, rateLimit: null, batch: null };

describe('flow controls in words', () => {
  it('says a debounce with its key and bound, and one with neither', () => {
    expect(flowControlLine({ ...none, debounce: { key: 'account-{{event.data.accountId}}', period: '30s', maxWait: '5m' } })).toBe(
      'debounce 30s per account-{{event.data.accountId}}, at most 5m',
    );
    const [words] = flowControlsInWords({ ...none, debounce: { key: null, period: '1m', maxWait: null } });
    expect(words).toEqual({ control: 'debounce', short: 'debounce 1m', meaning: 'one run for the schedule once 1m pass with no new event, carrying the last event' });
  });

  it('says a batch, a rate limit and a throttle, in the order they act', () => {
    expect(flowControlLine({ ...none, batch: { key: '{{event.data.table}}', maxSize: 100, timeout: '5s' }, rateLimit: { key: null, limit: 10, period: '1m' } })).toBe(
      'batch of up to 100 per {{event.data.table}}, or 5s after the first; rate limit 10 per 1m',
    );
    const words = flowControlsInWords({ ...none, throttle: { key: 'user-{{event.data.user}}', limit: 1, period: '2s' }, rateLimit: { key: null, limit: 50, period: '1h' } });
    expect(words.map((w) => w.control)).toEqual(['rateLimit', 'throttle']);
    expect(words[0]!.meaning).toBe('at most 50 runs made for the schedule in any 1h; further events make none (skipped RATE_LIMITED)');
    expect(words[1]).toEqual({
      control: 'throttle',
      short: 'throttle 1 per 2s per user-{{event.data.user}}',
      meaning: 'every event gets its run, but at most 1 run starts per key user-{{event.data.user}} in any 2s; the others wait queued (THROTTLED), in order',
    });
  });

  it('says none when no control is declared', () => {
    expect(flowControlsInWords(none)).toEqual([]);
    expect(flowControlLine(none)).toBe('none: every matching event makes its run');
  });
});
