/** Why an execution was told to stop: the reason travels as the AbortSignal's reason. */
export type AbortKind = 'cancelled' | 'timeout' | 'lease_lost' | 'shutdown';

export class RunAborted extends Error {
  constructor(
    readonly kind: AbortKind,
    message: string,
    /** For cancellations: who asked (`overlap` when a newer slot replaced the run). */
    readonly by: string | null = null,
  ) {
    super(message);
    this.name = 'RunAborted';
  }
}

/**
 * How one execution is stopped: `signal` goes to the target, and `aborted` rejects with the same
 * RunAborted, so the executor can stop waiting for a target that ignores its signal. The first
 * abort wins; later ones change nothing.
 */
export class RunAbort {
  private readonly controller = new AbortController();
  private rejectAborted!: (reason: RunAborted) => void;
  readonly aborted = new Promise<never>((_, reject) => (this.rejectAborted = reject));

  constructor() {
    this.aborted.catch(() => undefined);
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  abort(reason: RunAborted): void {
    if (this.controller.signal.aborted) return;
    this.controller.abort(reason);
    this.rejectAborted(reason);
  }
}
