import { describe, expect, it } from 'vitest';
import { Permits } from './permits.js';

/**
 * A worker's places for runs (Permits): take hands out as many as are free up to what is asked (at
 * least 1), waits while none is free and wakes waiters as places free; onFull is told once when the
 * last place is taken and once when one frees again; release(0) changes nothing.
 */

const tick = () => new Promise((r) => setImmediate(r));

/** A take whose result the test reads once it settles (undefined while it waits). */
function pending(permits: Permits, most: number) {
  const state: { taken: number | undefined } = { taken: undefined };
  void permits.take(most).then((n) => (state.taken = n));
  return state;
}

/** Permits whose onFull calls are recorded. */
function watched(size: number) {
  const permits = new Permits(size);
  const told: boolean[] = [];
  permits.onFull((full) => told.push(full));
  return { permits, told };
}

describe('Permits', () => {
  it.each<[string, number, number[], number[]]>([
    ['one asked of four', 4, [1], [1]],
    ['all asked of four', 4, [4], [4]],
    ['more than there are', 4, [10], [4]],
    ['0 asked: still 1', 4, [0], [1]],
    ['a negative count asked: still 1', 4, [-3], [1]],
    ['in turns, the last take getting what is left', 5, [2, 2, 3], [2, 2, 1]],
    ['one place, asked for many', 1, [64], [1]],
  ])('take: %s (size %i, asked %j → %j)', async (_name, size, asks, expected) => {
    const permits = new Permits(size);
    const got: number[] = [];
    for (const most of asks) got.push(await permits.take(most));
    expect(got).toEqual(expected);
  });

  it('take waits while no place is free and resumes after a release', async () => {
    const permits = new Permits(2);
    expect(await permits.take(2)).toBe(2);
    const waiting = pending(permits, 3);
    await tick();
    expect(waiting.taken).toBeUndefined();
    permits.release(1);
    await tick();
    expect(waiting.taken).toBe(1);
  });

  it.each<[string, number, number[], number, (number | undefined)[]]>([
    ['one freed wakes the first waiter only', 3, [1, 1, 1], 1, [1, undefined, undefined]],
    ['two freed wake two waiters', 3, [1, 1, 1], 2, [1, 1, undefined]],
    ['all freed wake them all', 3, [1, 1, 1], 3, [1, 1, 1]],
    ['the first waiter woken takes what it asks of those freed, the next what is left', 4, [3, 2], 4, [3, 1]],
    ['a waiter woken finds all taken by the one before: it goes on waiting', 2, [2, 1], 2, [2, undefined]],
  ])('waiters are woken as places free: %s', async (_name, size, asks, freed, expected) => {
    const permits = new Permits(size);
    await permits.take(size);
    const waiters = asks.map((most) => pending(permits, most));
    await tick();
    expect(waiters.map((w) => w.taken)).toEqual(asks.map(() => undefined));
    permits.release(freed);
    await tick();
    expect(waiters.map((w) => w.taken)).toEqual(expected);
  });

  it('a waiter left waiting is woken by a later release', async () => {
    const permits = new Permits(2);
    await permits.take(2);
    const first = pending(permits, 2);
    const second = pending(permits, 1);
    permits.release(2);
    await tick();
    expect([first.taken, second.taken]).toEqual([2, undefined]);
    permits.release(1);
    await tick();
    expect(second.taken).toBe(1);
  });

  it('onFull: true when the last place is taken, false when one frees, and not again while still full or still free', async () => {
    const { permits, told } = watched(3);
    await permits.take(1);
    await permits.take(1);
    expect(told).toEqual([]);
    await permits.take(1);
    expect(told).toEqual([true]);
    const waiting = pending(permits, 1);
    await tick();
    expect(told).toEqual([true]);
    permits.release(1);
    expect(told).toEqual([true, false]);
    await tick();
    // The waiter took the place freed: full again.
    expect(waiting.taken).toBe(1);
    expect(told).toEqual([true, false, true]);
    permits.release(2);
    expect(told).toEqual([true, false, true, false]);
    permits.release(1);
    expect(told).toEqual([true, false, true, false]);
    await permits.take(1);
    expect(told).toEqual([true, false, true, false]);
  });

  it.each<[string, number, number[], boolean[]]>([
    ['one take of all', 4, [4], [true]],
    ['one take of more than all', 4, [9], [true]],
    ['takes short of all', 4, [1, 2], []],
    ['the last of several takes', 4, [1, 2, 1], [true]],
  ])('onFull after %s (size %i, asked %j) → %j', async (_name, size, asks, expected) => {
    const { permits, told } = watched(size);
    for (const most of asks) await permits.take(most);
    expect(told).toEqual(expected);
  });

  it('tells every listener', async () => {
    const permits = new Permits(1);
    const first: boolean[] = [];
    const second: boolean[] = [];
    permits.onFull((full) => first.push(full));
    permits.onFull((full) => second.push(full));
    await permits.take(1);
    permits.release(1);
    expect(first).toEqual([true, false]);
    expect(second).toEqual([true, false]);
  });

  it.each([0, -1])('release(%i) does nothing: no place freed, no waiter woken, no listener told', async (count) => {
    const { permits, told } = watched(1);
    await permits.take(1);
    const waiting = pending(permits, 1);
    permits.release(count);
    await tick();
    expect(waiting.taken).toBeUndefined();
    expect(told).toEqual([true]);
    permits.release(1);
    await tick();
    expect(waiting.taken).toBe(1);
  });

  it('close answers 0 to the callers waiting and to every later take, and gives no place', async () => {
    const permits = new Permits(1);
    expect(await permits.take(1)).toBe(1);
    const waiting = pending(permits, 1);
    await tick();
    expect(waiting.taken).toBeUndefined();
    permits.close();
    await tick();
    expect(waiting.taken).toBe(0);
    permits.release(1);
    expect(await permits.take(1)).toBe(0);
  });
});
