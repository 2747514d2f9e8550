/**
 * A transport consumer that outlives its transport's failures.
 *
 * BullMQ's Worker fetches again at once after an error it does not recognise as a lost connection
 * (an authentication refusal, a pooler refusing a startup parameter, a server that accepts and then
 * closes), and its PostgreSQL backend keeps a failed first connection as its answer for good. Together
 * they make a loop of rejected promises that never yields to I/O: log lines pile up unwritten until
 * the heap is gone, and the worker could not recover anyway. Here the first error pauses the worker
 * before its loop turns again; the transport is probed after a capped, doubling backoff, with one log
 * line per step; once it answers, the worker resumes, or is built anew if it never became ready.
 * A worker that fetches nothing while jobs wait for it, with none in hand and nothing holding it,
 * is built anew too (see watch).
 */
import type { Worker } from 'bullmq';

export interface ConsumerLogger {
  log(message: string): void;
  warn(message: string): void;
}

/** Any BullMQ worker: the supervisor touches only what every worker has. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyWorker = Worker<any, any, any>;

export interface SupervisedWorkerOptions {
  /** What the worker consumes, for log lines. */
  name: string;
  /** Builds a BullMQ worker whose processor `processing` wraps; called again when one never became ready or stalled. */
  build: (processing: Processing) => AnyWorker;
  /** Fails when the transport cannot serve this worker right now. */
  probe: () => Promise<void>;
  /** Turns a transport error into one line a person can act on. */
  explain: (error: Error) => string;
  logger: ConsumerLogger;
  /** First and largest wait between probes. */
  backoff?: { initialMs: number; maxMs: number };
  /** Told about a job whose processor threw (BullMQ's 'failed'). */
  onFailed?: (jobId: string | undefined, error: Error) => void;
  /** How many jobs wait to be fetched by this worker; without it, a stalled worker is not looked for. */
  backlog?: () => Promise<number>;
  /** How long a worker may fetch nothing while jobs wait before it is built anew (default STALL_MS). */
  stallMs?: number;
}

/** Waits between probes of a failing transport: 1 s, doubling, at most 30 s. */
export const TRANSPORT_BACKOFF = { initialMs: 1_000, maxMs: 30_000 };

/** The next wait of a doubling backoff that starts at `initialMs` and stops growing at `maxMs`. */
export function nextBackoff(previousMs: number | null, backoff: { initialMs: number; maxMs: number }): number {
  return previousMs === null ? backoff.initialMs : Math.min(backoff.maxMs, previousMs * 2);
}

/**
 * The concurrency of a held worker (see throttle): 2, not 1, since a completing job fetches the next
 * only while the jobs and fetches in hand are at most the concurrency, and a blocking fetch may be
 * one of them: at 1, a fetch stuck on a connection a failover broke kept a Cluster shard's worker
 * from taking its waiting jobs at all.
 */
const HELD_CONCURRENCY = 2;

/** How often a worker is checked for a main loop that ended by itself, or a stall (see watch). */
const WATCHDOG_MS = 1_000;

/** How long an idle worker may leave jobs waiting before it counts as stalled (see watch). */
export const STALL_MS = 10_000;

/** An error within this long of a resume continues the backoff instead of starting afresh. */
const STREAK_MS = 10_000;

/** The jobs a worker's processor holds, and when it last took or ended one: what a stall is told by. */
export class Processing {
  inHand = 0;
  lastActivity = performance.now();

  /** The processor, counted. */
  wrap<A extends unknown[], R>(processor: (...args: A) => Promise<R>): (...args: A) => Promise<R> {
    return async (...args: A): Promise<R> => {
      this.inHand += 1;
      this.lastActivity = performance.now();
      try {
        return await processor(...args);
      } finally {
        this.inHand -= 1;
        this.lastActivity = performance.now();
      }
    };
  }
}

export class SupervisedWorker {
  private worker: AnyWorker | null = null;
  private ready = false;
  private closed = false;
  /** The recovery in progress, if any: errors that come meanwhile join it. */
  private recovering: Promise<void> | null = null;
  private wake: (() => void) | null = null;
  /** When the worker last resumed, and the wait that preceded it: an error soon after continues that streak. */
  private resumed: { at: number; waitMs: number | null } = { at: -Infinity, waitMs: null };
  private readonly backoff: { initialMs: number; maxMs: number };
  /** Whether fetching is held to HELD_CONCURRENCY (see throttle), and the concurrency the worker was built with. */
  private held = false;
  private concurrency = 1;
  /** The current worker's jobs in hand (see watch). */
  private processing = new Processing();
  private lookingForStall = false;

  /** Restarts a worker whose main loop ended although nobody paused or closed it (see watch). */
  private readonly watchdog: NodeJS.Timeout;

  constructor(private readonly options: SupervisedWorkerOptions) {
    this.backoff = options.backoff ?? TRANSPORT_BACKOFF;
    this.spawn();
    this.watchdog = setInterval(() => this.watch(), WATCHDOG_MS);
    this.watchdog.unref();
  }

  /** Stops fetching, lets the worker's running jobs finish, and ends any recovery under way. */
  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.watchdog);
    this.wake?.();
    await this.recovering;
    await this.worker?.close();
  }

  /**
   * While `held`, the worker takes a new job about as its jobs complete, not more: BullMQ fetches
   * while its jobs and fetches in hand are fewer than its concurrency, so lowering that to
   * HELD_CONCURRENCY holds the fetching without touching the jobs in hand, and raising it back lets
   * the worker fetch at once.
   */
  throttle(held: boolean): void {
    this.held = held;
    if (this.worker) this.worker.concurrency = held ? HELD_CONCURRENCY : this.concurrency;
  }

  /**
   * BullMQ's resume() wakes a main loop that is still running; one that ended meanwhile (it ends
   * once a paused worker has no job left, and is marked stopped a moment later) is neither woken nor
   * started again, and the worker, no longer paused, fetches nothing for ever. Seen after a Cluster
   * failover, when the probe answered at once. A worker found so is started again.
   *
   * A worker may also stay running and fetch nothing: after a Cluster failover, its blocking fetch
   * can hang on a connection to a master that is gone, no error ever comes, and the jobs of its
   * shard wait for good. A worker that holds no job and is not held back, yet took none for
   * stallMs while its backlog had jobs, is closed and built anew, with fresh connections.
   */
  private watch(): void {
    const worker = this.worker;
    if (this.closed || this.recovering || !this.ready || !worker || worker.closing) return;
    if (!worker.isRunning() && !worker.isPaused()) {
      void worker.run().catch((error: Error) => this.onError(worker, error));
      return;
    }
    const { backlog, stallMs = STALL_MS } = this.options;
    const processing = this.processing;
    if (!backlog || this.lookingForStall || this.held || processing.inHand > 0 || worker.isPaused()) return;
    if (performance.now() - processing.lastActivity < stallMs) return;
    this.lookingForStall = true;
    backlog()
      .then(async (waiting) => {
        const stalled = waiting > 0 && this.worker === worker && !this.closed && !this.recovering && !this.held && processing.inHand === 0;
        if (stalled && performance.now() - processing.lastActivity >= stallMs) await this.rebuild(worker, waiting, stallMs);
      })
      .catch(() => undefined)
      .finally(() => {
        this.lookingForStall = false;
        // Looked at: the next look is a stall period away.
        processing.lastActivity = performance.now();
      });
  }

  private async rebuild(worker: AnyWorker, waiting: number, stallMs: number): Promise<void> {
    this.options.logger.warn(`${this.options.name}: took no job for ${formatWait(stallMs)} while ${waiting} waited; starting its worker again`);
    this.ready = false;
    await worker.close(true).catch(() => undefined);
    if (!this.closed && this.worker === worker) this.spawn();
  }

  private spawn(): void {
    this.processing = new Processing();
    const worker = this.options.build(this.processing);
    this.worker = worker;
    this.concurrency = worker.concurrency;
    if (this.held) worker.concurrency = HELD_CONCURRENCY;
    this.ready = false;
    worker.on('error', (error: Error) => this.onError(worker, error));
    if (this.options.onFailed) {
      const onFailed = this.options.onFailed;
      worker.on('failed', (job: { id?: string } | undefined, error: Error) => onFailed(job?.id, error));
    }
    worker.waitUntilReady().then(
      () => {
        if (this.worker === worker) this.ready = true;
      },
      (error: Error) => this.onError(worker, error),
    );
  }

  private onError(worker: AnyWorker, error: Error): void {
    if (this.closed || worker !== this.worker) return;
    // Synchronously, so the worker's loop sees `paused` before it fetches again.
    void worker.pause(true).catch(() => undefined);
    this.recovering ??= this.recover(error).finally(() => (this.recovering = null));
  }

  /**
   * Probes until the transport answers, one line per failed probe, then resumes the worker (or
   * replaces one that never became ready). An error the transport survives, such as one job's lost
   * lock, costs one probe and one line; another soon after a resume waits its turn in the backoff,
   * so an error the probe cannot see still cannot make the worker spin.
   */
  private async recover(first: Error): Promise<void> {
    let waitMs: number | null = null;
    let failure: Error = first;
    let reported = false;
    if (performance.now() - this.resumed.at < STREAK_MS) {
      waitMs = nextBackoff(this.resumed.waitMs, this.backoff);
      this.options.logger.warn(`${this.options.name}: ${this.options.explain(first)}; retrying in ${formatWait(waitMs)}`);
      reported = true;
      await this.sleep(waitMs);
    }
    while (!this.closed) {
      try {
        await this.options.probe();
        break;
      } catch (error) {
        failure = error as Error;
      }
      waitMs = nextBackoff(waitMs, this.backoff);
      this.options.logger.warn(`${this.options.name}: ${this.options.explain(failure)}; retrying in ${formatWait(waitMs)}`);
      reported = true;
      await this.sleep(waitMs);
    }
    if (this.closed) return;
    if (reported) this.options.logger.log(`${this.options.name}: the transport answers again; resuming`);
    else this.options.logger.warn(`${this.options.name}: ${this.options.explain(first)}`);
    this.resumed = { at: performance.now(), waitMs };
    const worker = this.worker!;
    if (this.ready) {
      void worker.resume();
      return;
    }
    await worker.close(true).catch(() => undefined);
    if (!this.closed) this.spawn();
  }

  private sleep(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(done, ms);
      function done(): void {
        clearTimeout(timer);
        resolve();
      }
      this.wake = done;
    }).finally(() => (this.wake = null));
  }
}

function formatWait(ms: number): string {
  return ms % 1_000 === 0 ? `${ms / 1_000} s` : `${ms} ms`;
}
