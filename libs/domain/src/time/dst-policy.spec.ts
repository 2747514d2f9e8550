import { describe, expect, it } from 'vitest';
import { parseCron } from './cron.js';
import { DST_GAP_POLICIES, DST_OVERLAP_POLICIES, explainDstPolicy, resolveDstPolicy, type DstPolicy } from './dst-policy.js';

const AUTO: DstPolicy = { gap: 'auto', overlap: 'auto' };

describe('resolveDstPolicy: auto follows Vixie cron', () => {
  it.each([
    // A minute or hour field starting with `*` follows real time.
    ['0 * * * *', 'skip', 'both'],
    ['*/15 * * * *', 'skip', 'both'],
    ['* * * * *', 'skip', 'both'],
    ['* 9 * * *', 'skip', 'both'],
    ['*/5 9-17 * * MON-FRI', 'skip', 'both'],
    ['15 */2 * * *', 'skip', 'both'],
    ['@hourly', 'skip', 'both'],
    ['0 */10 * * * *', 'skip', 'both'],
    // Seconds do not count: Vixie has none, and the rule names the minute and hour fields.
    ['*/10 30 2 * * *', 'shift', 'first'],
    // Fixed times of day, however many.
    ['30 2 * * *', 'shift', 'first'],
    ['0 9-17 * * *', 'shift', 'first'],
    ['0,30 1,2 * * *', 'shift', 'first'],
    ['0 0-23/2 * * *', 'shift', 'first'],
    ['5/15 3 * * *', 'shift', 'first'],
    ['0 12 * * *', 'shift', 'first'],
    ['@daily', 'shift', 'first'],
    ['@weekly', 'shift', 'first'],
    // Starred day fields say nothing about the time of day.
    ['0 2 * * *', 'shift', 'first'],
    ['0 2 */2 * *', 'shift', 'first'],
  ])('%s: gap %s, overlap %s', (expr, gap, overlap) => {
    expect(resolveDstPolicy(parseCron(expr), AUTO)).toEqual({ gap, overlap });
  });

  const explicit = DST_GAP_POLICIES.filter((g) => g !== 'auto').flatMap((gap) =>
    DST_OVERLAP_POLICIES.filter((o) => o !== 'auto').flatMap((overlap) => ['0 * * * *', '30 2 * * *'].map((expr) => ({ expr, gap, overlap }))),
  );
  it.each(explicit)('explicit $gap/$overlap is kept for $expr', ({ expr, gap, overlap }) => {
    expect(resolveDstPolicy(parseCron(expr), { gap, overlap })).toEqual({ gap, overlap });
  });

  it.each([
    ['0 * * * *', { gap: 'auto', overlap: 'last' }, { gap: 'skip', overlap: 'last' }],
    ['0 * * * *', { gap: 'shift', overlap: 'auto' }, { gap: 'shift', overlap: 'both' }],
    ['30 2 * * *', { gap: 'auto', overlap: 'both' }, { gap: 'shift', overlap: 'both' }],
    ['30 2 * * *', { gap: 'skip', overlap: 'auto' }, { gap: 'skip', overlap: 'first' }],
  ] as const)('%s with %j resolves each side on its own', (expr, dst, resolved) => {
    expect(resolveDstPolicy(parseCron(expr), dst)).toEqual(resolved);
  });
});

describe('explainDstPolicy', () => {
  it.each([
    [
      '0 * * * *',
      AUTO,
      { gap: 'skip', overlap: 'both' },
      'gap auto (skip), overlap auto (both): the minute or hour field starts with *, so it follows real time',
    ],
    ['30 2 * * *', AUTO, { gap: 'shift', overlap: 'first' }, 'gap auto (shift), overlap auto (first): neither the minute nor the hour field starts with *, so it runs at fixed times of day'],
    [
      '30 2 * * *',
      { gap: 'skip', overlap: 'auto' },
      { gap: 'skip', overlap: 'first' },
      'gap skip, overlap auto (first): neither the minute nor the hour field starts with *, so it runs at fixed times of day',
    ],
    ['0 * * * *', { gap: 'shift', overlap: 'last' }, { gap: 'shift', overlap: 'last' }, 'gap shift, overlap last'],
  ] as const)('%s with %j', (expr, dst, resolved, description) => {
    expect(explainDstPolicy(parseCron(expr), dst)).toEqual({ ...dst, resolved, description });
  });

  it('does not apply to intervals and one-shot timers', () => {
    expect(explainDstPolicy(null, AUTO)).toEqual({
      gap: 'auto',
      overlap: 'auto',
      resolved: null,
      description: 'not applicable: intervals and one-shot timers fire at instants, not wall times',
    });
  });
});
