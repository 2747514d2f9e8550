/**
 * A feed read from the ledger by polling, for the streams and subscriptions that follow a run: an
 * async iterator over what `follow` yields, which a subscriber, or the API's shutdown, may close at
 * any moment. Closing aborts the signal `follow` waits on between polls, so a feed of a run that
 * stays queued ends at once rather than at its next change.
 */
export class PolledFeed<T> implements AsyncIterableIterator<T> {
  private readonly stopped = new AbortController();
  private readonly source: AsyncGenerator<T, undefined>;

  /** `onEnd` runs once the feed is finished or closed, whichever comes first (and may run again). */
  constructor(
    follow: (signal: AbortSignal) => AsyncGenerator<T, undefined>,
    private readonly onEnd: () => void = () => undefined,
  ) {
    this.source = ended(follow(this.stopped.signal), onEnd);
  }

  /** Aborted when the feed is closed: a consumer waiting on something else (a heartbeat) may watch it. */
  get signal(): AbortSignal {
    return this.stopped.signal;
  }

  next(): Promise<IteratorResult<T, undefined>> {
    return this.source.next();
  }

  /** The subscriber went away: the abort wakes a generator waiting between polls. */
  return(): Promise<IteratorResult<T, undefined>> {
    this.close();
    return this.source.return(undefined);
  }

  throw(error: unknown): Promise<IteratorResult<T, undefined>> {
    this.close();
    return this.source.throw(error);
  }

  close(): void {
    this.stopped.abort();
    this.onEnd();
  }

  [Symbol.asyncIterator](): this {
    return this;
  }
}

async function* ended<T>(source: AsyncGenerator<T, undefined>, onEnd: () => void): AsyncGenerator<T, undefined> {
  try {
    return yield* source;
  } finally {
    onEnd();
  }
}

/** Waits `ms`, or less once `signal` aborts. */
export function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}
