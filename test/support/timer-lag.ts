/**
 * How late this machine runs a plain timer while a test runs: the yardstick for the few tests that
 * bound a duration. On a two-core machine shared with other test files, Postgres and Redis, every
 * process (Kairos's, the database's, the test's own) waits for a core now and then; a bound that
 * ignores that measures the machine, not Kairos. A test derives its bound from what this measured
 * during the same window (see `allowance`), and the precise figures live in `npm run bench`.
 */

interface TimerLag {
  /** Lateness of the sampled timers, in ms. */
  p50: number;
  p99: number;
  max: number;
  samples: number;
}

/** How often a timer is set: fine enough to catch a stall of a few tens of milliseconds. */
const SAMPLE_MS = 10;

/**
 * Starts sampling: a timer every SAMPLE_MS, each recording how late it fired. `stop()` ends the
 * sampling and reports the lateness seen since the start.
 */
function watchTimerLag(): { stop(): TimerLag } {
  const late: number[] = [];
  let stopped = false;
  let timer: NodeJS.Timeout;
  const arm = (): void => {
    const due = performance.now() + SAMPLE_MS;
    timer = setTimeout(() => {
      late.push(Math.max(0, performance.now() - due));
      if (!stopped) arm();
    }, SAMPLE_MS);
  };
  arm();
  return {
    stop: () => {
      stopped = true;
      clearTimeout(timer);
      const sorted = [...late].sort((a, b) => a - b);
      const at = (p: number): number => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0;
      return { p50: at(50), p99: at(99), max: sorted.at(-1) ?? 0, samples: sorted.length };
    },
  };
}

/**
 * The worst event-loop delay a Kairos process saw since its previous scrape (prom-client's
 * monitorEventLoopDelay, reset at each collection of /metrics): its own stalls, from a garbage
 * collection or from waiting for a core, which the test process's timers need not see.
 */
async function processLagMs(baseUrl: string): Promise<number> {
  const text = await (await fetch(`${baseUrl}/metrics`)).text();
  const match = /^kairos_nodejs_eventloop_lag_max_seconds (\S+)$/m.exec(text);
  return match ? Number(match[1]) * 1_000 : 0;
}

export interface MachineLag {
  /** The worst delay seen by the test's own timers or by any of the Kairos processes watched. */
  maxMs: number;
  describe(): string;
}

/**
 * Watches how late this machine runs timers from now until `stop()`: the test process's own, and
 * the event loops of the Kairos processes at `kairosUrls` (none for Kairos inside the test process,
 * whose delays the test's timers share).
 */
export async function watchMachineLag(kairosUrls: readonly string[] = []): Promise<{ stop(): Promise<MachineLag> }> {
  await Promise.all(kairosUrls.map(processLagMs));
  const timers = watchTimerLag();
  return {
    stop: async () => {
      const own = timers.stop();
      const processes = await Promise.all(kairosUrls.map(processLagMs));
      const maxMs = Math.max(own.max, ...processes);
      return {
        maxMs,
        describe: () =>
          `plain timers in the test process ran up to ${Math.round(own.max)} ms late (p50 ${Math.round(own.p50)}, ${own.samples} samples)` +
          (processes.length > 0 ? `; the Kairos processes' event loops were held up to ${processes.map((ms) => Math.round(ms)).join(', ')} ms` : ''),
      };
    },
  };
}

/**
 * What a bound must add for the machine's own delays: a run's start passes through a few processes
 * (the worker's timer, the claim in Postgres, the handler or the HTTP target), each of which the
 * machine may hold back as long as the worst delay seen, so `hops` times that.
 */
export function allowance(lag: MachineLag, hops = 3): number {
  return Math.ceil(hops * lag.maxMs);
}
