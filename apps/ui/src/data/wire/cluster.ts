/** The cluster: its leader, sessions and schedulers, and its workers, queues and the versions of the code they run. */

export interface Cluster {
  leader: { holder: string; epoch: number; expiresAt: string; live: boolean } | null;
  sessions: { holder: string; startedAt: string; lastSeenAt: string }[];
  schedulers: { holder: string; hostname: string; pid: number; live: boolean; clockOffsetMs: number | null }[];
  runs: Record<string, number>;
  queue: Record<string, number>;
  outages: { startedAt: string; endedAt: string }[];
}

export interface Worker {
  id: string;
  queue: string;
  handlers: string[];
  version: string;
  startedAt: string;
  lastSeenAt: string;
  clockOffsetMs: number | null;
}

/** A queue of the namespace: its limits (null: none), its runs running, queued (due, not held) and held, and its live workers. */
export interface Queue {
  name: string;
  maxRunning: number | null;
  rate: { max: number; per: string } | null;
  running: number;
  queued: number;
  held: number;
  workers: number;
  updatedAt: string | null;
  /** Its runs in state queued (due or not, held or not) by priority: always five, priority 1 first. The pages read it as possibly absent (an API before priorities). */
  queuedByPriority: { priority: number; queued: number }[];
  /** The fairness keys with the most runs in state queued (at most ten), most first; runs without a key left out. The pages read it as possibly absent. */
  fairnessKeys: { key: string; queued: number }[];
}

/** A version of the code on a queue: its live workers, the runs of the namespace it claimed that have not ended, and of those the ones waiting for it. */
export interface Version {
  queue: string;
  version: string;
  workers: number;
  activeRuns: number;
  pinnedWaiting: number;
}
