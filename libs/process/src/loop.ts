/**
 * A background loop: runs one pass, sleeps as long as the pass asks (or until woken), repeats.
 * A failing pass is logged and retried after a backoff; stop() waits for the pass in flight.
 */
/** What a loop logs through: Nest's Logger, the console, or a user's logger. */
export interface LoopLogger {
  log(message: string): void;
  warn(message: string): void;
}

export interface LoopOptions {
  name: string;
  logger: LoopLogger;
  /** One pass. Returns how long to sleep before the next one, in ms. */
  pass: () => Promise<number>;
  /** Sleep after a failed pass. */
  errorBackoffMs?: number;
}

export class Loop {
  private running = false;
  private wakeUp: (() => void) | null = null;
  /** A wake that came while a pass ran: what the pass read may predate it, so the next sleep is skipped. */
  private woken = false;
  private timer: NodeJS.Timeout | null = null;
  private done: Promise<void> = Promise.resolve();
  private consecutiveFailures = 0;

  constructor(private readonly options: LoopOptions) {}

  start(): void {
    if (this.running) return;
    this.running = true;
    this.done = this.run();
  }

  /** Cuts the current sleep short; during a pass, the sleep after it. */
  wake(): void {
    if (this.wakeUp) this.wakeUp();
    else this.woken = true;
  }

  async stop(): Promise<void> {
    this.running = false;
    this.wake();
    await this.done;
  }

  private async run(): Promise<void> {
    while (this.running) {
      let sleepMs: number;
      this.woken = false;
      try {
        sleepMs = await this.options.pass();
        if (this.consecutiveFailures > 0) this.options.logger.log(`${this.options.name} recovered`);
        this.consecutiveFailures = 0;
      } catch (error) {
        this.consecutiveFailures += 1;
        // Log the first failure of a streak in full, then only every tenth, so an outage does not flood the log.
        if (this.consecutiveFailures === 1 || this.consecutiveFailures % 10 === 0) {
          this.options.logger.warn(`${this.options.name} failed (${this.consecutiveFailures}x): ${(error as Error).message}`);
        }
        sleepMs = this.options.errorBackoffMs ?? 1_000;
      }
      if (!this.running) break;
      await this.sleep(sleepMs);
    }
  }

  private sleep(ms: number): Promise<void> {
    if (ms <= 0 || this.woken) return Promise.resolve();
    return new Promise((resolve) => {
      const finish = (): void => {
        if (this.timer) clearTimeout(this.timer);
        this.timer = null;
        this.wakeUp = null;
        resolve();
      };
      this.wakeUp = finish;
      this.timer = setTimeout(finish, ms);
    });
  }
}

/** A loop that runs only while its gate is open (see GatedLoops). */
export interface GatedTask {
  /** Cuts the task's current sleep short. */
  wake(): void;
}

/**
 * Loops that run only while a grant is held (the leadership, a set of partitions): each pass reads
 * the grant and runs with it, or sleeps the task's idle time and checks again. The owner starts
 * them with the application, wakes them all when it gains the grant, and stops them before it
 * gives the grant back, so nothing a task writes lands after a successor took over.
 */
export class GatedLoops<G> {
  private readonly loops: Loop[] = [];

  constructor(
    private readonly grant: () => G | null,
    /** Runs each pass, e.g. inside a log context naming the grant. */
    private readonly around: (grant: G, pass: () => Promise<number>) => Promise<number> = (_grant, pass) => pass(),
  ) {}

  add(name: string, logger: LoopLogger, idleMs: number, pass: (grant: G) => Promise<number>): GatedTask {
    const loop = new Loop({
      name,
      logger,
      pass: async () => {
        const grant = this.grant();
        return grant === null ? idleMs : this.around(grant, () => pass(grant));
      },
    });
    this.loops.push(loop);
    return { wake: () => loop.wake() };
  }

  start(): void {
    for (const loop of this.loops) loop.start();
  }

  wakeAll(): void {
    for (const loop of this.loops) loop.wake();
  }

  async stop(): Promise<void> {
    await Promise.all(this.loops.map((loop) => loop.stop()));
  }
}
