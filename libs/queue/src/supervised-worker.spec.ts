/**
 * A supervised worker that fetches nothing while jobs wait for it is built anew, and only then: not
 * while it holds a job, is held back, has nothing waiting, or took a job within the stall period.
 */
import { EventEmitter } from 'node:events';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Processing, SupervisedWorker, type SupervisedWorkerOptions } from './supervised-worker.js';

/** What the supervisor touches of a BullMQ worker. */
class FakeWorker extends EventEmitter {
  concurrency = 4;
  closing = false;
  closedWith: boolean | undefined;
  isRunning = () => !this.closing;
  isPaused = () => false;
  run = async () => undefined;
  pause = async () => undefined;
  resume = () => undefined;
  waitUntilReady = async () => undefined;
  close = async (force?: boolean) => {
    this.closing = true;
    this.closedWith = force;
  };
}

const STALL_MS = 5_000;

interface Case {
  name: string;
  backlog?: number;
  held?: boolean;
  /** A job that never ends, taken at the start. */
  jobInHand?: boolean;
  /** A job taken and ended every this many ms. */
  jobsEveryMs?: number;
  rebuilt: boolean;
}

const CASES: Case[] = [
  { name: 'jobs wait and it took none for the stall period', backlog: 3, rebuilt: true },
  { name: 'nothing waits', backlog: 0, rebuilt: false },
  { name: 'it is held back (its places are full)', backlog: 3, held: true, rebuilt: false },
  { name: 'it holds a job', backlog: 3, jobInHand: true, rebuilt: false },
  { name: 'it takes jobs within the stall period', backlog: 3, jobsEveryMs: 2_000, rebuilt: false },
  { name: 'its backlog is not known', rebuilt: false },
];

describe('SupervisedWorker: a stalled worker', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'setInterval', 'clearInterval', 'clearTimeout', 'performance', 'Date'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it.each(CASES)('is built anew only when $name: $rebuilt', async ({ backlog, held, jobInHand, jobsEveryMs, rebuilt }) => {
    const built: FakeWorker[] = [];
    const processings: Processing[] = [];
    const warnings: string[] = [];
    const options: SupervisedWorkerOptions = {
      name: 'queue runs shard 0',
      build: (processing) => {
        processings.push(processing);
        const worker = new FakeWorker();
        built.push(worker);
        return worker as never;
      },
      probe: async () => undefined,
      explain: (error) => error.message,
      logger: { log: () => undefined, warn: (line) => warnings.push(line) },
      backlog: backlog === undefined ? undefined : async () => backlog,
      stallMs: STALL_MS,
    };
    const supervisor = new SupervisedWorker(options);
    await vi.advanceTimersByTimeAsync(0);
    if (held) supervisor.throttle(true);
    const job = processings[0]!.wrap(() => new Promise<void>(() => undefined));
    if (jobInHand) void job();
    const quick = processings[0]!.wrap(async () => undefined);
    const ticker = jobsEveryMs ? setInterval(() => void quick(), jobsEveryMs) : null;

    await vi.advanceTimersByTimeAsync(STALL_MS * 1.5);
    if (ticker) clearInterval(ticker);

    expect(built.length).toBe(rebuilt ? 2 : 1);
    expect(built[0]!.closedWith).toBe(rebuilt ? true : undefined);
    expect(warnings).toEqual(rebuilt ? [`queue runs shard 0: took no job for 5 s while 3 waited; starting its worker again`] : []);
    await supervisor.close();
  });

  it('counts the jobs a processor holds, and when it last took or ended one', async () => {
    vi.setSystemTime(0);
    const processing = new Processing();
    let finish!: () => void;
    const processor = processing.wrap(() => new Promise<string>((resolve) => (finish = () => resolve('done'))));
    const started = performance.now();
    const result = processor();
    expect(processing.inHand).toBe(1);
    await vi.advanceTimersByTimeAsync(1_000);
    finish();
    expect(await result).toBe('done');
    expect(processing.inHand).toBe(0);
    expect(processing.lastActivity - started).toBe(1_000);
    const failing = processing.wrap(async () => {
      throw new Error('boom');
    });
    await expect(failing()).rejects.toThrow('boom');
    expect(processing.inHand).toBe(0);
  });
});
