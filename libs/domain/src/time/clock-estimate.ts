/**
 * Reading a remote clock over round trips (Cristian's algorithm): each sample brackets the remote
 * reading between the local monotonic instants the request left and the answer came back, so the
 * remote time at the bracket's middle is known within half the round trip. The estimate keeps the
 * tightest sample and runs forward on the monotonic clock, which a host's wall clock being stepped
 * (NTP, a resumed VM, an operator) does not move.
 */

/**
 * One round trip: monotonic ms when the query left and when its answer came back, the remote
 * clock's reading (epoch ms), and the host's wall clock (epoch ms) when the answer came back.
 */
export interface ClockSample {
  sentAt: number;
  receivedAt: number;
  remoteMs: number;
  wallMs: number;
}

export interface ClockAnchor {
  /** The remote clock's epoch ms at monotonic instant `monotonicMs`. */
  remoteMs: number;
  monotonicMs: number;
  /** Half the round trip of the sample it came from: the remote time is within this of the estimate. */
  uncertaintyMs: number;
  /** Remote time minus the host's wall time at the same instant: positive when the host's clock is behind. */
  offsetMs: number;
}

/** The anchor of the tightest sample (the shortest round trip); null without samples. */
export function anchorOf(samples: readonly ClockSample[]): ClockAnchor | null {
  let best: ClockSample | null = null;
  for (const s of samples) {
    if (s.receivedAt < s.sentAt) continue;
    if (best === null || s.receivedAt - s.sentAt < best.receivedAt - best.sentAt) best = s;
  }
  if (best === null) return null;
  const roundTrip = best.receivedAt - best.sentAt;
  return {
    remoteMs: best.remoteMs,
    monotonicMs: best.sentAt + roundTrip / 2,
    uncertaintyMs: roundTrip / 2,
    offsetMs: best.remoteMs - (best.wallMs - roundTrip / 2),
  };
}

/** The remote clock's epoch ms at monotonic instant `monotonicMs`, by `anchor`. */
export function remoteNow(anchor: ClockAnchor, monotonicMs: number): number {
  return anchor.remoteMs + (monotonicMs - anchor.monotonicMs);
}
