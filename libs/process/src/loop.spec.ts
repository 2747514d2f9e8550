import { describe, expect, it } from 'vitest';
import { GatedLoops, Loop } from './loop.js';

const quiet = { log: () => undefined, warn: () => undefined };
const tick = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A loop whose passes are recorded and which asks to sleep `sleepMs` after each. */
function recordingLoop(sleepMs: number, during?: (loop: Loop, pass: number) => Promise<void> | void) {
  const starts: number[] = [];
  const loop: Loop = new Loop({
    name: 'test',
    logger: quiet,
    pass: async () => {
      starts.push(Date.now());
      await during?.(loop, starts.length);
      return sleepMs;
    },
  });
  return { loop, starts };
}

describe('Loop', () => {
  it('sleeps as long as the pass asks', async () => {
    const { loop, starts } = recordingLoop(10_000);
    loop.start();
    await tick(100);
    await loop.stop();
    expect(starts).toHaveLength(1);
  });

  it('a wake during the sleep starts the next pass at once', async () => {
    const { loop, starts } = recordingLoop(10_000);
    loop.start();
    await tick(50);
    loop.wake();
    await tick(50);
    await loop.stop();
    expect(starts).toHaveLength(2);
  });

  it('a wake during a pass is kept: the sleep after that pass is skipped', async () => {
    const { loop, starts } = recordingLoop(10_000, async (l, n) => {
      if (n === 1) {
        await tick(20);
        l.wake();
        await tick(20);
      }
    });
    loop.start();
    await tick(150);
    await loop.stop();
    expect(starts).toHaveLength(2);
    expect(starts[1]! - starts[0]!).toBeLessThan(1_000);
  });

  it('a wake before a pass does not skip the sleep after it', async () => {
    const { loop, starts } = recordingLoop(10_000);
    loop.wake();
    loop.start();
    await tick(100);
    await loop.stop();
    expect(starts).toHaveLength(1);
  });

  it('a failing pass is retried after the backoff', async () => {
    let calls = 0;
    const warnings: string[] = [];
    const loop = new Loop({
      name: 'failing',
      logger: { log: () => undefined, warn: (m) => warnings.push(m) },
      errorBackoffMs: 20,
      pass: async () => {
        calls += 1;
        if (calls < 3) throw new Error('boom');
        return 10_000;
      },
    });
    loop.start();
    await tick(200);
    await loop.stop();
    expect(calls).toBe(3);
    expect(warnings).toEqual(['failing failed (1x): boom']);
  });
});

describe('GatedLoops', () => {
  it('runs a task only while the grant is held, with the grant, inside `around`', async () => {
    let grant: { epoch: number } | null = null;
    const seen: string[] = [];
    const loops = new GatedLoops<{ epoch: number }>(
      () => grant,
      async (g, pass) => {
        seen.push(`around ${g.epoch}`);
        return pass();
      },
    );
    loops.add('task', quiet, 10_000, async (g) => {
      seen.push(`pass ${g.epoch}`);
      return 10_000;
    });
    loops.start();
    await tick(50);
    expect(seen).toEqual([]);
    grant = { epoch: 7 };
    loops.wakeAll();
    await tick(50);
    expect(seen).toEqual(['around 7', 'pass 7']);
    grant = null;
    loops.wakeAll();
    await tick(50);
    await loops.stop();
    expect(seen).toEqual(['around 7', 'pass 7']);
  });

  it('stop waits for the pass in flight', async () => {
    let finished = false;
    const loops = new GatedLoops<true>(() => true);
    loops.add('slow', quiet, 10_000, async () => {
      await tick(100);
      finished = true;
      return 10_000;
    });
    loops.start();
    await tick(10);
    await loops.stop();
    expect(finished).toBe(true);
  });
});
