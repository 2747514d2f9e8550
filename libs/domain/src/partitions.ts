/**
 * Scheduler partitions: who should own what. Schedules fall into TICK_PARTITIONS partitions by a
 * hash of their id (computed by Postgres, see migration 0008); each partition is owned by one
 * scheduler at a time through its own lease. Every scheduler runs the same pure plan over the
 * same view (live members, current owners), so they agree without talking to each other.
 *
 * 16 partitions: a scheduler scales the tick only while Postgres has spare capacity, which runs
 * out long before 16 schedulers; with 2 to 4 schedulers the shares differ by at most one partition
 * (6/5/5 with three), and a tick that owns them all probes 16 small index ranges.
 */
export const TICK_PARTITIONS = 16;

export interface PartitionPlanInput {
  partitions: number;
  /** The live schedulers (fresh heartbeat, presence lock held). */
  members: readonly string[];
  /** The live owner of each partition, or null when its lease is free, expired or its owner is gone. */
  owners: readonly (string | null)[];
}

/**
 * The owner each partition should have: every member gets its fair share (⌊P/n⌋, and one more for
 * the first P mod n members, preferring those that own more already), a member keeps what it owns up
 * to its share (lowest partitions first), and the rest goes to the members below their share, the
 * furthest below first. A partition whose owner is not a member is free. Null only with no members.
 */
export function planPartitions({ partitions, members, owners }: PartitionPlanInput): (string | null)[] {
  const sorted = [...new Set(members)].sort();
  if (sorted.length === 0) return Array.from({ length: partitions }, () => null);
  const owns = new Map(sorted.map((m) => [m, [] as number[]]));
  for (let p = 0; p < partitions; p++) {
    const owner = owners[p] ?? null;
    if (owner !== null) owns.get(owner)?.push(p);
  }
  const base = Math.floor(partitions / sorted.length);
  const extra = partitions % sorted.length;
  const byHoldings = [...sorted].sort((a, b) => owns.get(b)!.length - owns.get(a)!.length || (a < b ? -1 : 1));
  const quota = new Map(byHoldings.map((m, i) => [m, base + (i < extra ? 1 : 0)]));

  const plan: (string | null)[] = Array.from({ length: partitions }, () => null);
  const load = new Map(sorted.map((m) => [m, 0]));
  for (const m of sorted) {
    for (const p of owns.get(m)!.slice(0, quota.get(m)!)) {
      plan[p] = m;
      load.set(m, load.get(m)! + 1);
    }
  }
  for (let p = 0; p < partitions; p++) {
    if (plan[p] !== null) continue;
    let best: string | null = null;
    for (const m of sorted) {
      const deficit = quota.get(m)! - load.get(m)!;
      if (deficit > 0 && (best === null || deficit > quota.get(best)! - load.get(best)!)) best = m;
    }
    plan[p] = best;
    load.set(best!, load.get(best!)! + 1);
  }
  return plan;
}

export interface PartitionMoves {
  /** Partitions `self` owns that belong to another member now: give them up. */
  release: number[];
  /** Partitions that should be `self`'s and have no live owner: take them. */
  take: number[];
}

/**
 * What `self` does about the plan. It never takes a partition another live scheduler still owns:
 * that one gives it up (it computes the same plan), and the lease's epoch fences the hand-over.
 */
export function partitionMoves(self: string, plan: readonly (string | null)[], owners: readonly (string | null)[]): PartitionMoves {
  const release: number[] = [];
  const take: number[] = [];
  plan.forEach((want, p) => {
    const owner = owners[p] ?? null;
    if (owner === self && want !== self) release.push(p);
    if (want === self && owner === null) take.push(p);
  });
  return { release, take };
}
