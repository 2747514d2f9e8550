import { describe, expect, it } from 'vitest';
import { DEFAULT_RETRY_POLICY, type JsonValue } from '@kairos/domain';
import { durableContext, RunParked, type CheckpointLedger } from './durable-functions.js';
import { NonRetryableError } from './non-retryable-error.js';
import { checkpointInWords, NondeterministicReplay, ReplayHistory } from './replay.js';
import type { WorkerProtocolCheckpoint } from './worker-protocol.js';

const RUN_ID = '01900000-0000-7000-8000-000000000001';

describe('the replay check', () => {
  it.each([
    ['nothing stored: new work', [], [], 'a', { kind: 'new' }],
    ['a stored step', ['a', 'sleep#1'], [], 'a', { kind: 'stored' }],
    ['past every stored checkpoint', ['a', 'sleep#1'], ['a', 'sleep#1'], 'b', { kind: 'new' }],
    ['a renamed step', ['charge', 'sleep#1'], [], 'chargeCard', { kind: 'diverged', stored: 'charge' }],
    ['a step added before a stored sleep', ['a', 'sleep#1', 'b'], ['a'], 'audit', { kind: 'diverged', stored: 'sleep#1' }],
    ['a step removed: the next is asked before it', ['a', 'b', 'c'], ['a'], 'c', { kind: 'stored' }],
    ['a stored one skipped, then new work', ['a', 'b'], ['a', 'c'], 'd', { kind: 'diverged', stored: 'b' }],
    ['parallel steps asked in another order than they began', ['x', 'y'], ['y', 'x'], 'z', { kind: 'new' }],
    ['a parallel step that failed last time, beside one stored', ['y'], ['x', 'y'], 'x', { kind: 'new' }],
    ['patch markers do not count', ['a', 'patch:audit', 'audit', 'sleep#1'], ['a', 'audit', 'sleep#1'], 'b', { kind: 'new' }],
    ['a patch marker only ahead', ['a', 'patch:audit'], ['a'], 'b', { kind: 'new' }],
    ['a sleep added ahead of a stored step', ['a', 'b'], ['a'], 'sleep#1', { kind: 'diverged', stored: 'b' }],
    ['a step that failed, caught by a fallback that was stored', ['a', 'failed:b', 'fallback', 'sleep#1'], ['a'], 'b', { kind: 'new' }],
    ['the fallback after the failed step fails again', ['a', 'failed:b', 'fallback', 'sleep#1'], ['a', 'b'], 'fallback', { kind: 'stored' }],
    ['failure markers do not count as ahead', ['a', 'failed:b'], ['a'], 'c', { kind: 'new' }],
    ['a wait for a signal whose name changed', ['signal:approval'], [], 'signal:approved', { kind: 'diverged', stored: 'signal:approval' }],
  ] as const)('%s', (_, stored, reached, asked, answer) => {
    expect(new ReplayHistory(stored).answer(new Set([...reached, asked]), asked)).toEqual(answer);
  });

  it('finds the first unreached stored checkpoint as the reached names grow', () => {
    const history = new ReplayHistory(['a', 'patch:p', 'b', 'c']);
    const reached = new Set<string>();
    expect(history.firstUnreached(reached)).toBe('a');
    reached.add('a');
    expect(history.firstUnreached(reached)).toBe('b');
    reached.add('c');
    expect(history.firstUnreached(reached)).toBe('b');
    reached.add('b');
    expect(history.firstUnreached(reached)).toBeNull();
  });

  it.each([
    ['a run that stored nothing', [], [], true],
    ['a run whose stored checkpoints were all reached', ['a'], ['a'], true],
    ['a run that older code took past this point', ['a', 'sleep#1', 'b'], ['a'], false],
    ['a run with only patch markers ahead', ['a', 'patch:other'], ['a'], true],
  ] as const)("ctx.patched's first answer for %s", (_, stored, reached, answer) => {
    expect(new ReplayHistory(stored).firstPatchAnswer(new Set(reached))).toBe(answer);
  });

  it.each([
    ['charge', 'step "charge"'],
    ['sleep#2', 'sleep 2'],
    ['signal:approval', 'the wait for signal "approval"'],
    ['event:order.shipped', 'the wait for event "order.shipped"'],
    ['event:tick#2', 'the 2nd wait for event "tick"'],
    ['event:tick#3', 'the 3rd wait for event "tick"'],
    ['event:tick#11', 'the 11th wait for event "tick"'],
    ['event:tick#21', 'the 21st wait for event "tick"'],
    ['patch:audit', 'ctx.patched("audit")'],
    ['failed:charge', 'the failure of step "charge"'],
  ])('names %s as %s', (name, words) => {
    expect(checkpointInWords(name)).toBe(words);
  });

  it('says what the code asked for, what the run stored, and how to keep the old path', () => {
    const error = new NondeterministicReplay(RUN_ID, 'chargeCard', 'charge');
    expect(error.code).toBe('NONDETERMINISTIC_REPLAY');
    expect(error.message).toMatch(new RegExp(`^the code asks for step "chargeCard" where run ${RUN_ID} stored step "charge" \\(NONDETERMINISTIC_REPLAY\\): .*ctx\\.patched`));
  });
});

/** A ledger holding the run's checkpoints in memory, in the order they began, recording its writes. */
function memoryLedger(stored: { name: string; kind?: WorkerProtocolCheckpoint['kind']; result?: JsonValue | null }[]) {
  const rows: WorkerProtocolCheckpoint[] = stored.map((c) => ({
    name: c.name,
    kind: c.kind ?? 'step',
    state: c.kind === 'sleep' ? 'woken' : 'succeeded',
    result: c.result ?? null,
    wakeAt: c.kind === 'sleep' ? new Date(0) : null,
  }));
  const saved: { name: string; result: JsonValue | null }[] = [];
  const ledger: CheckpointLedger = {
    checkpoints: async () => rows.map((r) => ({ ...r })),
    saveStep: async (_run, _epoch, name, result) => (saved.push({ name, result }), true),
    sleepRun: async () => true,
    awaitSignal: async () => ({ outcome: 'parked', body: null, wakeAt: null }),
    awaitEvent: async () => ({ outcome: 'parked', body: null, wakeAt: null }),
    reportProgress: async () => true,
    now: () => Date.now(),
  };
  return { ledger, saved };
}

function context(ledger: CheckpointLedger, diverged: (error: NondeterministicReplay) => void = () => undefined) {
  const run = { id: RUN_ID, leaseEpoch: 3, retry: DEFAULT_RETRY_POLICY, attemptStartedAt: new Date() };
  return durableContext(ledger, run, new AbortController().signal, async () => undefined, diverged);
}

describe('replaying a durable function', () => {
  it('fails a renamed step before running it, and every checkpoint after, telling the attempt', async () => {
    const { ledger, saved } = memoryLedger([{ name: 'charge', result: 'charged' }, { name: 'sleep#1', kind: 'sleep' }]);
    const told: NondeterministicReplay[] = [];
    const ctx = context(ledger, (error) => told.push(error));
    let ran = false;
    const asked = ctx.step('chargeCard', () => (ran = true));
    await expect(asked).rejects.toBeInstanceOf(NondeterministicReplay);
    await expect(asked).rejects.toMatchObject({ code: 'NONDETERMINISTIC_REPLAY', asked: 'chargeCard', stored: 'charge' });
    await expect(asked).rejects.toThrow(/step "chargeCard" where run .* stored step "charge"/);
    expect(ran).toBe(false);
    // The handler caught it: the stored step fails the same way rather than carry on.
    await expect(ctx.step('charge', () => 'again')).rejects.toBe(told[0]);
    expect(told).toHaveLength(1);
    expect(saved).toEqual([]);
  });

  it('names a sleep or a wait the code asks for where the run stored another checkpoint', async () => {
    const { ledger } = memoryLedger([{ name: 'a' }, { name: 'sleep#1', kind: 'sleep' }]);
    const ctx = context(ledger);
    await expect(ctx.waitForSignal('approval')).rejects.toThrow(/the code asks for the wait for signal "approval" where run \S+ stored step "a"/);
  });

  it('replays parallel steps that ask in another order than they began, and runs the one that failed last time', async () => {
    const { ledger, saved } = memoryLedger([{ name: 'y', result: 'Y' }, { name: 'sleep#1', kind: 'sleep' }, { name: 'z', result: 'Z' }]);
    const ctx = context(ledger);
    // Branches: x failed last time, y was stored; the other branch goes on through a sleep to z.
    const results = await Promise.all([
      ctx.step('x', () => 'X'),
      (async () => {
        const y = await ctx.step('y', () => 'not again');
        await ctx.sleep('1s');
        return [y, await ctx.step('z', () => 'not again')];
      })(),
    ]);
    expect(results).toEqual(['X', ['Y', 'Z']]);
    expect(saved).toEqual([{ name: 'x', result: 'X' }]);
  });

  it('records a step that fails out of ctx.step, so a handler that caught it replays onto its fallback', async () => {
    const first = memoryLedger([{ name: 'a', result: 'A' }]);
    const failing = context(first.ledger);
    await failing.step('a', () => 'not again');
    await expect(failing.step('b', () => Promise.reject(new NonRetryableError('card declined')))).rejects.toThrow('card declined');
    expect(first.saved).toEqual([{ name: 'failed:b', result: { message: 'card declined' } }]);
    // The next attempt: b fails again and the handler's fallback, stored last time, answers.
    const { ledger, saved } = memoryLedger([{ name: 'a', result: 'A' }, { name: 'failed:b' }, { name: 'fallback', result: 'emailed' }, { name: 'sleep#1', kind: 'sleep' }]);
    const ctx = context(ledger);
    await ctx.step('a', () => 'not again');
    await expect(ctx.step('b', () => Promise.reject(new NonRetryableError('card declined')))).rejects.toThrow('card declined');
    expect(await ctx.step('fallback', () => 'not again')).toBe('emailed');
    await ctx.sleep('1s');
    expect(saved).toEqual([{ name: 'failed:b', result: { message: 'card declined' } }]);
  });

  it('answers ctx.patched false where older code passed, and stores the answer once', async () => {
    const { ledger, saved } = memoryLedger([{ name: 'a', result: 1 }, { name: 'sleep#1', kind: 'sleep' }]);
    const ctx = context(ledger);
    let audited = 0;
    expect(await ctx.step('a', () => 0)).toBe(1);
    if (await ctx.patched('audit')) await ctx.step('audit', () => ++audited);
    expect(await ctx.patched('audit')).toBe(false);
    await ctx.sleep('1s');
    await ctx.step('b', () => 'B');
    expect(audited).toBe(0);
    expect(saved).toEqual([
      { name: 'patch:audit', result: false },
      { name: 'b', result: 'B' },
    ]);
  });

  it('answers ctx.patched true on a run meeting it first, then the stored answer on its replays without another write', async () => {
    const first = memoryLedger([{ name: 'a', result: 1 }]);
    const ctx = context(first.ledger);
    await ctx.step('a', () => 0);
    expect(await Promise.all([ctx.patched('audit'), ctx.patched('audit')])).toEqual([true, true]);
    expect(first.saved).toEqual([{ name: 'patch:audit', result: true }]);

    const replay = memoryLedger([{ name: 'a', result: 1 }, { name: 'patch:audit', result: true }, { name: 'audit', result: 1 }]);
    const again = context(replay.ledger);
    await again.step('a', () => 0);
    expect(await again.patched('audit')).toBe(true);
    expect(await again.step('audit', () => 2)).toBe(1);
    await expect(again.sleep('1h')).rejects.toBeInstanceOf(RunParked);
    expect(replay.saved).toEqual([]);
  });

  it('replays a run that stored a patch marker on code that no longer calls ctx.patched', async () => {
    const { ledger } = memoryLedger([{ name: 'a', result: 1 }, { name: 'patch:audit', result: true }, { name: 'audit', result: 1 }, { name: 'sleep#1', kind: 'sleep' }]);
    const ctx = context(ledger);
    await ctx.step('a', () => 0);
    await ctx.step('audit', () => 0);
    await ctx.sleep('1s');
    expect(await ctx.step('b', () => 'B')).toBe('B');
  });

  it.each([[''], ['x'.repeat(201)], [undefined], [42]])('refuses ctx.patched(%j) with a TypeError', async (id) => {
    const { ledger, saved } = memoryLedger([]);
    await expect(context(ledger).patched(id as string)).rejects.toThrow(new TypeError(`ctx.patched needs an id of 1 to 200 characters; got ${JSON.stringify(id)}`));
    expect(saved).toEqual([]);
  });

  it('keeps patch: for ctx.patched', async () => {
    const { ledger } = memoryLedger([]);
    await expect(context(ledger).step('patch:audit', () => 1)).rejects.toThrow(/not starting with .*"patch:"/);
  });
});
