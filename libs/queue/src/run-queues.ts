/**
 * The producer side of every runs queue, opened on first use: a process dispatches to whichever
 * queue a run names without knowing the set in advance, and closes them all at shutdown. Each runs
 * queue is the transport's number of shards (shards.ts); a run's job lives on the shard its id picks.
 */
import type { JobType } from 'bullmq';
import { runsQueueName } from './jobs.js';
import { EVERY_SHARD, liveShards, shardOf, type Shard } from './shards.js';
import type { RunsQueue, Transport } from './transport.js';

/** The hash, one per shard, of the batch job that carries each run (see enterBatches). */
const BATCHES_KEY = 'batches';

export class RunsQueues {
  private readonly opened = new Map<string, RunsQueue>();

  constructor(private readonly transport: Transport) {}

  /** The BullMQ queue (the shard) that carries the jobs of run `runId` of Kairos queue `queue`. */
  of(queue: string, runId: string): RunsQueue {
    return this.shard(queue, shardOf(runId, this.transport.shards));
  }

  /** The BullMQ queue of every shard of Kairos queue `queue`. */
  all(queue: string): RunsQueue[] {
    return liveShards(this.transport.shards).map((shard) => this.shard(queue, shard));
  }

  /** The shards of Kairos queue `queue` that another number of shards would use and this one does not: where jobs may be left behind. */
  leftBehind(queue: string): RunsQueue[] {
    if (this.transport.redis === null) return [];
    const live = new Set(liveShards(this.transport.shards));
    return EVERY_SHARD.filter((shard) => !live.has(shard)).map((shard) => this.shard(queue, shard));
  }

  /** The jobs of Kairos queue `queue` in each of `states`, summed over its shards. */
  async jobCounts(queue: string, ...states: JobType[]): Promise<Record<string, number>> {
    const counts = await Promise.all(this.all(queue).map((q) => q.getJobCounts(...states)));
    const total: Record<string, number> = {};
    for (const count of counts) for (const [state, n] of Object.entries(count)) total[state] = (total[state] ?? 0) + n;
    return total;
  }

  /**
   * Records which batch job carries each of its runs, in a hash beside the shard's jobs: a run's
   * job is found by the run's id, a batch's by this. Written before the jobs are added, so a live
   * batch job is always found; an entry whose job is gone says nothing and is cleared by whoever
   * finds it. Only Redis carries batches (see RunDispatcher).
   */
  async enterBatches(shard: RunsQueue, batches: readonly { id: string; runs: readonly string[] }[]): Promise<void> {
    if (this.transport.redis === null || batches.length === 0) return;
    // Field and value pairs in one flat list: an object of run ids, or a pair array a run, cost 7-9 µs a run.
    const pairs: string[] = [];
    for (const { id, runs } of batches) for (const run of runs) pairs.push(run, id);
    await this.transport.redis.hset(shard.toKey(BATCHES_KEY), ...pairs);
  }

  /** Clears the entries of runs a batch job no longer carries (it completed, or they travel on alone). */
  async leaveBatch(shard: RunsQueue, runIds: readonly string[]): Promise<void> {
    if (this.transport.redis === null || runIds.length === 0) return;
    await this.transport.redis.hdel(shard.toKey(BATCHES_KEY), ...runIds);
  }

  /** The batch job recorded for each run (null: none), as enterBatches wrote it. */
  async batchesOf(shard: RunsQueue, runIds: readonly string[]): Promise<(string | null)[]> {
    if (this.transport.redis === null || runIds.length === 0) return runIds.map(() => null);
    return this.transport.redis.hmget(shard.toKey(BATCHES_KEY), ...runIds);
  }

  /** Whether this transport carries batch jobs: Redis only, where a run's batch can be found (see enterBatches). */
  get carriesBatches(): boolean {
    return this.transport.redis !== null;
  }

  /**
   * The BullMQ queue of `shard` of Kairos queue `queue`. A queue that failed to become ready (the
   * transport was away when it was opened) keeps failing in BullMQ, so it is dropped and the next
   * call opens a fresh one: producers recover with their transport, without a restart.
   */
  shard(queue: string, shard: Shard): RunsQueue {
    const key = shard === null ? queue : `${queue}\u0000${shard}`;
    let opened = this.opened.get(key);
    if (!opened) {
      const fresh = this.transport.queue(runsQueueName(queue), shard);
      // Without a listener BullMQ prints each connection error to stderr; the operations that fail
      // and the health check already say it, once.
      fresh.on('error', () => undefined);
      fresh.waitUntilReady().catch(() => {
        if (this.opened.get(key) === fresh) this.opened.delete(key);
        void fresh.close().catch(() => undefined);
      });
      this.opened.set(key, fresh);
      opened = fresh;
    }
    return opened;
  }

  async close(): Promise<void> {
    await Promise.allSettled([...this.opened.values()].map((q) => q.close()));
    this.opened.clear();
  }
}
