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
