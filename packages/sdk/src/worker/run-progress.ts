/**
 * A handler's live progress (`ctx.progress`): the last JSON value it reported is stored on its run
 * (the run view's `progress`), for the API's run stream and the dashboard to show. Writes are
 * coalesced: at most one every PROGRESS_INTERVAL_MS per run, each carrying the latest value; a value
 * superseded before its write is never written. The latest value is always written: when the
 * interval elapses, and at once before the run parks or its verdict is written (`flush`), so the
 * final progress is never lost. A write that fails is logged and forgotten: progress never slows or
 * fails the handler.
 */
import { NonRetryableError } from './non-retryable-error.js';

/** The largest progress value, as JSON text in UTF-8. */
export const MAX_PROGRESS_BYTES = 64 * 1024;
/** The shortest time between two progress writes of one run. */
export const PROGRESS_INTERVAL_MS = 250;
/** How long a flush before a verdict or a park waits for the write at most. */
const FLUSH_WAIT_MS = 5_000;

/** Stores the JSON text as the run's progress; false when the lease was lost. */
export type ProgressWrite = (progressJson: string) => Promise<boolean>;

/**
 * The JSON text of a progress value, checked: JSON (a Date becomes its ISO string) of at most
 * 64 KiB. Anything else is the handler's mistake, thrown at the call as NonRetryableError.
 */
export function progressJson(value: unknown): string {
  let json: string | undefined;
  try {
    json = JSON.stringify(value === undefined ? null : value);
  } catch (error) {
    throw new NonRetryableError(`ctx.progress needs a JSON value: ${(error as Error).message}`);
  }
  if (json === undefined) throw new NonRetryableError(`ctx.progress needs a JSON value; got ${typeof value}`);
  const bytes = Buffer.byteLength(json, 'utf8');
  if (bytes > MAX_PROGRESS_BYTES) throw new NonRetryableError(`ctx.progress got ${bytes} bytes of JSON; a run's progress is at most ${MAX_PROGRESS_BYTES} bytes (64 KiB)`);
  return json;
}

export class ProgressReporter {
  /** The latest value not yet written, and the calls waiting for it to be stored. */
  private pending: { json: string; waiters: (() => void)[] } | null = null;
  private inFlight: Promise<void> | null = null;
  private lastWriteAt = -Infinity;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private closed = false;

  constructor(
    private readonly write: ProgressWrite,
    private readonly warn: (message: string) => void,
    private readonly intervalMs = PROGRESS_INTERVAL_MS,
  ) {}

  /**
   * Records `value` as the run's progress; resolves once it is stored or superseded by a later
   * value (or its write failed, which is logged). Throws NonRetryableError at once for a value
   * that is not JSON or is over 64 KiB.
   */
  report(value: unknown): Promise<void> {
    const json = progressJson(value);
    if (this.closed) return Promise.resolve();
    return new Promise<void>((resolve) => {
      // The value waiting is superseded: its callers are answered now.
      for (const waiter of this.pending?.waiters ?? []) waiter();
      this.pending = { json, waiters: [resolve] };
      this.schedule();
    });
  }

  /** Writes the latest value now (after the write in flight), never throwing; waits at most a few seconds. */
  async flush(): Promise<void> {
    this.clearTimer();
    // A run that reported nothing (most) pays nothing here.
    if (!this.inFlight && !this.pending) return;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const drained = (async () => {
      while (this.inFlight || this.pending) {
        if (this.inFlight) await this.inFlight;
        else this.writeNow();
      }
    })();
    await Promise.race([drained, new Promise<void>((resolve) => (timer = setTimeout(resolve, FLUSH_WAIT_MS)))]);
    clearTimeout(timer);
  }

  /** Flushes, then takes no more values (the attempt ended). */
  async close(): Promise<void> {
    await this.flush();
    this.closed = true;
    this.clearTimer();
    for (const waiter of this.pending?.waiters ?? []) waiter();
    this.pending = null;
  }

  private schedule(): void {
    if (this.inFlight || this.timer || !this.pending) return;
    const wait = this.lastWriteAt + this.intervalMs - Date.now();
    if (wait <= 0) return this.writeNow();
    this.timer = setTimeout(() => {
      this.timer = null;
      this.schedule();
    }, wait);
  }

  private writeNow(): void {
    const taken = this.pending;
    if (!taken || this.inFlight) return;
    this.pending = null;
    this.lastWriteAt = Date.now();
    this.inFlight = this.write(taken.json)
      .then(
        (stored) => {
          if (!stored) this.warn('a progress report was not stored: the run is no longer held by this attempt');
        },
        (error: Error) => this.warn(`a progress report could not be stored: ${error.message}; the handler goes on`),
      )
      .finally(() => {
        for (const waiter of taken.waiters) waiter();
        this.inFlight = null;
        if (!this.closed) this.schedule();
      });
  }

  private clearTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}
