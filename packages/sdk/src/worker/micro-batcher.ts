/**
 * Group commit for hot-path statements: concurrent requests that arrive while a batch is in
 * flight go out together in the next one. An idle batcher sends a request at once, so batching
 * adds no latency; under load one statement carries many rows, which is what lets a worker's
 * claims and verdicts keep up with BullMQ.
 */
export class MicroBatcher<I, O> {
  private pending: { item: I; resolve: (value: O) => void; reject: (error: unknown) => void }[] = [];
  private inFlight = 0;

  constructor(
    /** Executes one batch; returns one output per input, in order. */
    private readonly execute: (items: I[]) => Promise<O[]>,
    private readonly options: { maxBatch: number; maxInFlight: number },
  ) {}

  submit(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.pending.push({ item, resolve, reject });
      this.flush();
    });
  }

  /** Submits many at once: they go out in as few batches as `maxBatch` allows, rather than the first alone. */
  submitAll(items: readonly I[]): Promise<O>[] {
    const answers = items.map((item) => new Promise<O>((resolve, reject) => this.pending.push({ item, resolve, reject })));
    this.flush();
    return answers;
  }

  private flush(): void {
    while (this.pending.length > 0 && this.inFlight < this.options.maxInFlight) {
      const batch = this.pending.splice(0, this.options.maxBatch);
      this.inFlight += 1;
      this.execute(batch.map((b) => b.item)).then(
        (outputs) => batch.forEach((b, i) => b.resolve(outputs[i]!)),
        (error: unknown) => batch.forEach((b) => b.reject(error)),
      ).finally(() => {
        this.inFlight -= 1;
        this.flush();
      });
    }
  }
}
