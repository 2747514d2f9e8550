import { describe, expect, it } from 'vitest';
import { MicroBatcher } from './micro-batcher.js';

/** A batch executor whose batches the test releases by hand, recording what each carried. */
function controllable() {
  const batches: number[][] = [];
  const releases: (() => void)[] = [];
  const execute = (items: number[]) =>
    new Promise<number[]>((resolve) => {
      batches.push(items);
      releases.push(() => resolve(items.map((i) => i * 10)));
    });
  return { batches, release: () => releases.shift()!(), execute };
}

const tick = () => new Promise((r) => setImmediate(r));

describe('MicroBatcher', () => {
  it('sends an idle request at once, and groups requests that arrive while a batch is in flight', async () => {
    const c = controllable();
    const batcher = new MicroBatcher(c.execute, { maxBatch: 10, maxInFlight: 1 });
    const first = batcher.submit(1);
    const later = [2, 3, 4].map((n) => batcher.submit(n));
    expect(c.batches).toEqual([[1]]);
    c.release();
    expect(await first).toBe(10);
    await tick();
    expect(c.batches).toEqual([[1], [2, 3, 4]]);
    c.release();
    expect(await Promise.all(later)).toEqual([20, 30, 40]);
  });

  it.each([
    [1, 3, [[1], [2, 3, 4], [5, 6, 7]]],
    [2, 2, [[1], [2], [3, 4], [5, 6], [7]]],
  ])('keeps at most %i batches in flight of at most %i items', async (maxInFlight, maxBatch, expected) => {
    const c = controllable();
    let inFlight = 0;
    let most = 0;
    const batcher = new MicroBatcher<number, number>((items) => {
      inFlight += 1;
      most = Math.max(most, inFlight);
      return c.execute(items).finally(() => (inFlight -= 1));
    }, { maxBatch, maxInFlight });
    const all = [1, 2, 3, 4, 5, 6, 7].map((n) => batcher.submit(n));
    while (c.batches.flat().length < 7 || inFlight > 0) {
      await tick();
      if (inFlight > 0) c.release();
    }
    expect(await Promise.all(all)).toEqual([10, 20, 30, 40, 50, 60, 70]);
    expect(c.batches).toEqual(expected);
    expect(most).toBe(maxInFlight);
  });

  it('rejects every request of a failed batch and goes on with the next', async () => {
    let calls = 0;
    const batcher = new MicroBatcher<number, number>(async (items) => {
      calls += 1;
      if (calls === 1) throw new Error('database away');
      return items;
    }, { maxBatch: 10, maxInFlight: 1 });
    const failed = batcher.submit(1);
    const next = batcher.submit(2);
    await expect(failed).rejects.toThrow('database away');
    expect(await next).toBe(2);
  });

  describe('submitAll', () => {
    it('sends every item in one batch on an idle batcher, where consecutive submits send the first alone', async () => {
      const c = controllable();
      const batcher = new MicroBatcher(c.execute, { maxBatch: 10, maxInFlight: 1 });
      const all = batcher.submitAll([1, 2, 3, 4]);
      expect(c.batches).toEqual([[1, 2, 3, 4]]);
      c.release();
      expect(await Promise.all(all)).toEqual([10, 20, 30, 40]);

      const d = controllable();
      const one = new MicroBatcher(d.execute, { maxBatch: 10, maxInFlight: 1 });
      const each = [1, 2, 3, 4].map((n) => one.submit(n));
      expect(d.batches).toEqual([[1]]);
      d.release();
      await tick();
      d.release();
      expect(await Promise.all(each)).toEqual([10, 20, 30, 40]);
      expect(d.batches).toEqual([[1], [2, 3, 4]]);
    });

    it.each<[number, number, number, number[][]]>([
      [5, 10, 1, [[1, 2, 3, 4, 5]]],
      [5, 5, 1, [[1, 2, 3, 4, 5]]],
      [7, 3, 1, [[1, 2, 3], [4, 5, 6], [7]]],
      [7, 3, 3, [[1, 2, 3], [4, 5, 6], [7]]],
      [4, 1, 2, [[1], [2], [3], [4]]],
      [1, 64, 1, [[1]]],
    ])('%i items, maxBatch %i, maxInFlight %i: split at maxBatch, each answer its own, in order', async (count, maxBatch, maxInFlight, expected) => {
      const c = controllable();
      let inFlight = 0;
      const batcher = new MicroBatcher<number, number>((items) => {
        inFlight += 1;
        return c.execute(items).finally(() => (inFlight -= 1));
      }, { maxBatch, maxInFlight });
      const items = Array.from({ length: count }, (_, i) => i + 1);
      const answers = batcher.submitAll(items);
      expect(answers).toHaveLength(count);
      // The batches that may be in flight go out at once.
      expect(c.batches).toEqual(expected.slice(0, maxInFlight));
      while (c.batches.flat().length < count || inFlight > 0) {
        if (inFlight > 0) c.release();
        await tick();
      }
      expect(c.batches).toEqual(expected);
      expect(await Promise.all(answers)).toEqual(items.map((n) => n * 10));
    });

    it('no items: no batch, no answers', () => {
      const c = controllable();
      const batcher = new MicroBatcher(c.execute, { maxBatch: 10, maxInFlight: 1 });
      expect(batcher.submitAll([])).toEqual([]);
      expect(c.batches).toEqual([]);
    });

    it('items submitted while a batch is in flight go out together in the next', async () => {
      const c = controllable();
      const batcher = new MicroBatcher(c.execute, { maxBatch: 10, maxInFlight: 1 });
      const first = batcher.submit(1);
      const rest = batcher.submitAll([2, 3]);
      const last = batcher.submit(4);
      expect(c.batches).toEqual([[1]]);
      c.release();
      expect(await first).toBe(10);
      await tick();
      expect(c.batches).toEqual([[1], [2, 3, 4]]);
      c.release();
      expect(await Promise.all([...rest, last])).toEqual([20, 30, 40]);
    });

    it('rejects every promise of a failed batch, and only those', async () => {
      let calls = 0;
      const batcher = new MicroBatcher<number, number>(async (items) => {
        calls += 1;
        if (calls === 1) throw new Error('database away');
        return items.map((i) => i * 10);
      }, { maxBatch: 3, maxInFlight: 1 });
      const answers = batcher.submitAll([1, 2, 3, 4, 5]);
      const settled = await Promise.allSettled(answers);
      expect(settled.map((s) => s.status)).toEqual(['rejected', 'rejected', 'rejected', 'fulfilled', 'fulfilled']);
      for (const s of settled.slice(0, 3)) expect((s as PromiseRejectedResult).reason).toEqual(new Error('database away'));
      expect(settled.slice(3).map((s) => (s as PromiseFulfilledResult<number>).value)).toEqual([40, 50]);
    });
  });
});
