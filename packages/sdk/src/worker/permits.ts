/**
 * A worker's places for runs executing at once. BullMQ's concurrency counts jobs, and a batch job
 * carries many runs, so the runs themselves take places here: a plain job's run one, a batch's as
 * many as are free, which it then claims in one statement. While every place is taken the worker
 * takes a new job only as one completes (`onFull`, RunsConsumer.throttle): runs it cannot start
 * would wait in its memory rather than in the transport, where a run of a better priority or
 * another tenant's turn can still pass them.
 */
export class Permits {
  private free: number;
  private readonly waiters: (() => void)[] = [];
  private readonly listeners: ((full: boolean) => void)[] = [];
  private closed = false;

  constructor(readonly size: number) {
    this.free = size;
  }

  /**
   * Waits until a place is free, then takes as many as are free, up to `most` (at least 1); returns
   * how many. Once closed it takes none and answers 0 at once, to the callers waiting too.
   */
  async take(most: number): Promise<number> {
    while (this.free === 0 && !this.closed) await new Promise<void>((resolve) => this.waiters.push(resolve));
    if (this.closed) return 0;
    const taken = Math.min(this.free, Math.max(1, most));
    this.free -= taken;
    if (this.free === 0) this.tell(true);
    return taken;
  }

  release(count: number): void {
    if (count <= 0) return;
    const wasFull = this.free === 0;
    this.free += count;
    if (wasFull) this.tell(false);
    for (let n = 0; n < count && this.waiters.length > 0; n += 1) this.waiters.shift()!();
  }

  /** The worker stops: no place is given any more (see take). */
  close(): void {
    this.closed = true;
    for (const wake of this.waiters.splice(0)) wake();
  }

  /** Calls `listener` with true when the last place is taken, with false when one frees again. */
  onFull(listener: (full: boolean) => void): void {
    this.listeners.push(listener);
  }

  private tell(full: boolean): void {
    for (const listener of this.listeners) listener(full);
  }
}
