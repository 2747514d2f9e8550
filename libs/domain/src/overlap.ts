/**
 * The overlap decision: what a slot does when earlier runs of its schedule are still active. The
 * caller reads the active runs inside the transaction that creates the run (the schedule row
 * locked), so the decision never rests on a stale read.
 */
import type { OverlapPolicy } from './closed-sets.js';

export interface ActiveRun {
  id: string;
  state: 'queued' | 'running' | 'sleeping' | 'waiting';
  /** Queued behind another run (overlap buffer), not yet released. */
  buffered: boolean;
}

export type OverlapDecision =
  /** Create a runnable run. `exclusive` is false only under `allow`. */
  | { action: 'run'; exclusive: boolean; cancel: string[] }
  /** Create the run parked behind `blockedBy`; it is released when that run ends. */
  | { action: 'buffer'; blockedBy: string; cancel: string[] }
  | { action: 'skip'; blockedBy: string };

export function decideOverlap(policy: OverlapPolicy, active: readonly ActiveRun[]): OverlapDecision {
  if (policy === 'allow') return { action: 'run', exclusive: false, cancel: [] };
  const blocking = active.filter((r) => !r.buffered);
  const buffered = active.filter((r) => r.buffered);
  const head = blocking[0];
  if (head === undefined && buffered.length === 0) return { action: 'run', exclusive: true, cancel: [] };
  switch (policy) {
    case 'skip':
      return { action: 'skip', blockedBy: (head ?? buffered[0]!).id };
    case 'buffer_one':
      if (buffered.length > 0) return { action: 'skip', blockedBy: buffered[0]!.id };
      return head === undefined
        ? { action: 'run', exclusive: true, cancel: [] }
        : { action: 'buffer', blockedBy: head.id, cancel: [] };
    case 'buffer_all':
      // Parked runs are released one at a time, oldest first, so the new run waits for the last
      // one already in line, not for the running head.
      return { action: 'buffer', blockedBy: (buffered.at(-1) ?? head!).id, cancel: [] };
    case 'replace': {
      // Everything older goes: buffered and queued runs are cancelled outright, a running run is
      // asked to stop, and the new run waits for it.
      const cancel = active.map((r) => r.id);
      const running = active.find((r) => r.state === 'running');
      return running === undefined
        ? { action: 'run', exclusive: true, cancel }
        : { action: 'buffer', blockedBy: running.id, cancel };
    }
  }
}
